"""The markdown files of a report folder: report.md, failures.md and comparison.md."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from judges.core.quoting import md_cell, md_prose, md_text
from judges.core.results import Usage, outcome
from judges.core.thresholds import threshold_text
from judges.reports.format import number, rate_with_interval
from judges.reports.model.data import (
    FAILURES_MD,
    RESULTS_FILE,
    FolderReport,
    ModelReport,
)
from judges.reports.model.summary import first_screen
from judges.reports.render.comparison import comparison_markdown
from judges.reports.render.first_screen import fingerprint_rows, first_screen_md
from judges.reports.render.fitness import fitness_md
from judges.reports.sections.category_power import category_power_lines
from judges.reports.sections.cost import ESTIMATED_NOTE, cost_cell
from judges.reports.sections.estimate import estimate_lines
from judges.reports.sections.label_stability import label_stability_md
from judges.reports.sections.leaderboard import leaderboard_markdown
from judges.reports.sections.pairwise import pairwise_markdown
from judges.reports.sections.probes import changes_markdown, probes_markdown
from judges.reports.sections.reading_list import reading_list_md
from judges.reports.sections.reply_fixtures import reply_fixtures_markdown
from judges.sets.folder import EXPECTATIONS_FILE
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import Estimate, Rate
from judges.stats.regression.gates import Regression
from judges.stats.reliability.gates import NoiseFloor, Panel, SmeCalibration, TestRetest
from judges.verdicts.vocabulary import FAIL


def fraction(rate: Rate) -> str:
    return rate_with_interval(rate, empty="no data (n=0)")


def _stat(stat: Rate | Estimate | None) -> str:
    if stat is None:
        return "-"
    if isinstance(stat, Rate):
        return fraction(stat)
    if stat.n == 0:
        return "no data (n=0)"
    if math.isnan(stat.value):
        return f"undefined n={stat.n}"  # the section says why, once (UNDEFINED)
    if math.isnan(stat.low) or math.isnan(stat.high):
        return f"{_num(stat.value)} (no interval) n={stat.n}"
    return str(stat)


UNDEFINED = (
    "Undefined: a kappa or correlation needs more than one value on each side; a judge that "
    "gives one value throughout has none, which is no agreement beyond chance."
)


def _undefined(*stats: Rate | Estimate | None) -> list[str]:
    """The sentence that says why a figure is undefined, when a table shows one."""
    hit = any(isinstance(s, Estimate) and s.n and math.isnan(s.value) for s in stats)
    return ["", UNDEFINED] if hit else []


def _left_out(excluded: Mapping[str, int]) -> str:
    total = sum(excluded.values())
    if not total:
        return "0"
    return f"{total} (" + ", ".join(f"{why}: {n}" for why, n in excluded.items()) + ")"


def _errors(errors: Mapping[str, Any]) -> str:
    """Failed rows by status, or by run then status."""
    parts = []
    for key, value in errors.items():
        if isinstance(value, Mapping):
            if value:
                parts.append(f"{key}: " + ", ".join(f"{n} {s}" for s, n in value.items()))
        else:
            parts.append(f"{value} {key}")
    return "; ".join(parts) or "none"


def _gate_result(gate: Gate) -> str:
    if gate.passed is None:
        return "not evaluated" if gate.threshold is not None else "no threshold"
    return "pass" if gate.passed else f"**{FAIL}**"


def _detection_md(m: ModelReport) -> list[str]:
    lines = [
        "### Detection per category",
        "",
        "| Category | Detected | Rate | Wilson 95% | n | Gate |",
        "|---|---|---|---|---|---|",
    ]
    for category, rate in [*m.detection.items(), ("**all planted defects**", m.all_defects)]:
        threshold = m.threshold(category)
        if rate.n:
            cells = (
                f"{rate.successes}/{rate.n} | {rate.rate:.2f} | [{rate.low:.2f}, {rate.high:.2f}]"
            )
        else:
            cells = "0/0 | - | -"
        gate = "-" if threshold is None else f">= {threshold_text(threshold)}"
        lines.append(f"| {category} | {cells} | {rate.n} | {gate} |")
    lines += [
        "",
        f"- Control false-positive rate: {fraction(m.control_false_positive)}",
        f"- Error rate (main run): {fraction(m.error_rate)}",
        *([f"- {m.coercions}"] if m.coercions else []),
        "",
        "| Run | " + " | ".join(_all_statuses(m)) + " | total |",
        "|---|" + "---|" * (len(_all_statuses(m)) + 1),
    ]
    for run, counts in m.status_by_run.items():
        cells = " | ".join(str(counts.get(s, 0)) for s in _all_statuses(m))
        lines.append(f"| {run} | {cells} | {sum(counts.values())} |")
    return [*lines, ""]


def _all_statuses(m: ModelReport) -> list[str]:
    found = {status for counts in m.status_by_run.values() for status in counts}
    return ["ok", *sorted(found - {"ok"})]


def _noise_md(result: NoiseFloor) -> list[str]:
    lines = [
        "### Noise floor (run `noise`)",
        "",
        f"{result.n_items} items x up to {result.n_repeats} repeats ({result.n_rows} rows; "
        f"failed: {_errors(result.errors)}). The minimum detectable difference (MDD) is for "
        f"a change in mean score between two versions judged on {result.mdd_items} items.",
        "",
        "| Dimension | Mean within-item sd [95%] | Pooled sd | All repeats agree | MDD "
        "| Left out |",
        "|---|---|---|---|---|---|",
    ]
    for name, d in result.dimensions.items():
        lines.append(
            f"| {name} | {_stat(d.mean_sd)} | {_num(d.pooled_sd)} | {_stat(d.exact_match)} | "
            f"{_num(d.mdd)} | {_left_out(d.excluded)} |"
        )
    if result.flag is not None:
        lines += [
            "",
            f"Flag `{result.flag}` identical across repeats: {_stat(result.flag_stability)} "
            f"(left out: {_left_out(result.flag_excluded)})",
        ]
    return [*lines, ""]


def _retest_md(result: TestRetest) -> list[str]:
    lines = [
        "### Test-retest (runs `main` and `retest`)",
        "",
        f"{result.n_pairs} items answered in both runs; left out: {_left_out(result.excluded)}; "
        f"failed rows: {_errors(result.errors)}.",
        "",
    ]
    if not result.dimensions:  # a judge with no score dimensions (pairwise: a winner)
        lines.append(
            "No score dimension to compare (judge.toml `dimensions` is empty): the retest "
            "reads in the gates below, against this main run."
        )
    else:
        lines += [
            "| Dimension | Exact match | Mean abs change | Quadratic kappa | Spearman | Missing |",
            "|---|---|---|---|---|---|",
        ]
    for name, d in result.dimensions.items():
        lines.append(
            f"| {name} | {_stat(d.exact_match)} | {_stat(d.mean_abs_delta)} | {_stat(d.kappa)} | "
            f"{_stat(d.spearman)} | {d.n_missing} |"
        )
    lines += _undefined(
        *(s for d in result.dimensions.values() for s in (d.kappa, d.spearman, d.mean_abs_delta))
    )
    if result.flag is not None:
        lines += [
            "",
            f"Flag `{result.flag}` identical in both runs: {_stat(result.flag_stability)} "
            f"({result.flag_missing} pairs without it)",
        ]
    return [*lines, ""]


def _panel_md(result: Panel) -> list[str]:
    lines = [
        "### Panel agreement (runs `main` and `panel`)",
        "",
        f"- Primary judge: {md_text(result.primary_label)}",
        f"- Cross-check: {md_text(result.cross_label)}",
        f"- {result.n_pairs} items answered by both; left out: {_left_out(result.excluded)}; "
        f"failed rows: {_errors(result.errors)}",
        f"- Exact-or-adjacent agreement over every item and dimension: {_stat(result.agreement)}",
        f"- Contested items (overall scores differ by more than "
        f"{result.contested_threshold:g}): {_stat(result.contested_rate)}"
        + (f": {', '.join(result.contested)}" if result.contested else ""),
        f"- Mean overall: primary {_stat(result.mean_overall['primary'])}, cross-check "
        f"{_stat(result.mean_overall['cross'])}; difference (primary - cross) "
        f"{_stat(result.overall_difference)}",
    ]
    if result.flag is not None:
        rates = ", ".join(f"{side} {_stat(rate)}" for side, rate in result.flag_rate.items())
        lines += [
            f"- Flag `{result.flag}` set to false: {rates}",
            f"- Flag agreement: {_stat(result.flag_agreement)}",
        ]
    lines += ["", "| Dimension | Agreement within 1 |", "|---|---|"]
    for name, rate in result.agreement_by_dimension.items():
        lines.append(f"| {name} | {_stat(rate)} |")
    return [*lines, ""]


def _sme_md(result: SmeCalibration, labels_file: str) -> list[str]:
    lines = [
        f"### SME calibration (labels: {labels_file})",
        "",
        f"Dimension `{result.dimension}`: {result.n_labels} labelled items, {result.n_pairs} "
        f"paired with a judge value; left out: {_left_out(result.excluded)}.",
        "",
        "| Statistic | Value |",
        "|---|---|",
        f"| Spearman rho | {_stat(result.spearman)} |",
        f"| Quadratic kappa | {_stat(result.kappa)} |",
        f"| Krippendorff alpha (ordinal) | {_stat(result.alpha)} |",
        f"| Mean difference (judge - human) | {_stat(result.mean_difference)} |",
    ]
    if result.flag is not None:
        lines.append(f"| Flag `{result.flag}` agreement | {_stat(result.flag_agreement)} |")
    lines += _undefined(result.spearman, result.kappa, result.alpha)
    if result.disagreements:
        lines += [
            "",
            f"Items where judge and human differ by {result.disagreement_at:g} or more:",
            "",
            "| Item | Judge | Human | Labeller |",
            "|---|---|---|---|",
        ]
        for d in result.disagreements:
            lines.append(f"| {d.item_id} | {d.judge:g} | {d.human:g} | {md_cell(d.labeller)} |")
    return [*lines, ""]


def _gates_md(m: ModelReport) -> list[str]:
    passed, failed, unevaluated = m.gate_counts
    source = f"thresholds from {m.gates_table}" if m.gates_table else "no thresholds set"
    lines = [
        f"### Gates ({source})",
        "",
        "| Gate | Value | Threshold | Result |",
        "|---|---|---|---|",
    ]
    for gate in m.gates:
        lines.append(
            f"| {gate.name} | {gate.value_text()} | {gate.threshold_text()} | "
            f"{_gate_result(gate)} |"
        )
    lines += [_regression_row(gate) for gate in m.regressions]
    lines += ["", f"{passed} passed, {failed} failed, {unevaluated} not evaluated.", ""]
    lines += category_power_lines(m.category_power)
    if m.pass_rate is not None:
        lines += ["### Pass rate on unlabelled outputs (bias-corrected)", ""]
        lines += [*(f"- {line}" for line in estimate_lines(m.pass_rate)), ""]
    if m.retest_regressions:
        lines += [
            "The retest run against this main run, as the regression gates would judge it "
            "(informational: both judge the same prompt, so a failure here is the judge or "
            "its serving, not the prompt):",
            "",
            "| Gate | Value | Threshold | Result |",
            "|---|---|---|---|",
            *(_regression_row(gate) for gate in m.retest_regressions),
            "",
        ]
    return lines


def _regression_row(gate: Regression) -> str:
    result = {True: "pass", False: f"**{FAIL}**", None: "not evaluated"}[gate.passed]
    result = result if gate.decides else "decides nothing"
    value = gate.why if gate.power is None else f"{gate.why}; {gate.power.describe()}"
    return f"| {gate.name} vs {gate.baseline} | {value} | not significantly worse | {result} |"


def _failures_summary_md(m: ModelReport) -> list[str]:
    lines = [
        f"### Failures (details in [{FAILURES_MD}]({FAILURES_MD}))",
        "",
        f"{m.failure_counts()}, of {m.n_main} main-run items. A new failure fails the run; an "
        f"accepted miss is listed in {EXPECTATIONS_FILE} and runs as a strict xfail.",
    ]
    if m.failures:
        lines += ["", "| Item | Category | Outcome | Kind |", "|---|---|---|---|"]
        for f in (*m.new_failures, *m.accepted_misses):
            kind = "**new failure**" if f.accepted_miss is None else "accepted miss"
            lines.append(f"| {f.row.item_id} | {f.row.category} | {outcome(f.row)} | {kind} |")
    if m.accepted_met:
        lines += [
            "",
            "Accepted misses the judge now gets right (their strict xfail passes unexpectedly; "
            f"remove them from {EXPECTATIONS_FILE}): {', '.join(m.accepted_met)}",
        ]
    return [*lines, ""]


def _num(value: float) -> str:
    return number(value)


def _usage_md(report: FolderReport) -> list[str]:
    lines = [
        "## Cost and tokens",
        "",
        "| Model | Run | Rows | Calls | Input tokens | Output tokens | Cost (USD) |",
        "|---|---|---|---|---|---|---|",
    ]
    for u in report.usage:
        lines.append(
            f"| {md_cell(u.model)} | {u.run} | {u.rows} | {u.usage.calls} | "
            f"{u.usage.input_tokens} | {u.usage.output_tokens} | {cost_cell(u.usage)} |"
        )
    for model in sorted({u.model for u in report.usage}):
        mine = [u for u in report.usage if u.model == model]
        total = Usage()
        for u in mine:
            total.add(u.usage)
        total.cost_usd = round(math.fsum(u.usage.cost_usd for u in mine), 4)
        lines.append(
            f"| **{md_cell(model)}** | all | {sum(u.rows for u in mine)} | "
            f"{total.calls} | {total.input_tokens} | {total.output_tokens} | {cost_cell(total)} |"
        )
    if any(u.usage.estimated_calls for u in report.usage):
        lines += ["", ESTIMATED_NOTE]
    return [*lines, ""]


def _comparison_heading(report: FolderReport) -> str:
    previous = report.previous_version
    return f"Comparison with prompt {previous}" if previous else "Comparison"


def _comparison_body(report: FolderReport) -> list[str]:
    previous = report.previous_version
    if previous is None:
        return [f"{report.version} is the first prompt version: nothing to compare.", ""]
    lines = []
    if not report.previous_rows:
        lines.append(
            f"No results for prompt {previous} ({report.judge}/{previous}/{RESULTS_FILE} in the "
            "reports folder): run `pytest` to judge it, then `python -m judges report`."
        )
    elif not report.comparisons:
        lines.append("No main-run rows to pair.")
    for comparison in report.comparisons:
        lines.append(comparison_markdown(comparison, level=3))
    for m in report.models:
        if m.probes is not None and m.probes.changes:
            lines += ["", f"### Bias probes, {md_text(m.model)}", "", *changes_markdown(m.probes)]
    return [*lines, ""]


def _header_md(report: FolderReport) -> list[str]:
    runs = ", ".join(f"{run} {n}" for run, n in report.rows_by_run.items()) or "none"
    screen = first_screen(report)
    # One screen line, the deciding reason first; the whole verdict right after it.
    lines = [
        f"# {report.judge}, prompt {report.version}: {report.verdict_word()}",
        "",
        f"**Result: {md_prose(screen.result())}**",
        "",
        *(line for detail in screen.details() for line in (f"In full: {md_prose(detail)}", "")),
        *first_screen_md(screen),
        "| | |",
        "|---|---|",
        f"| Judge | {report.judge} |",
        f"| Prompt version | {report.version} |",
        f"| Previous version | {report.previous_version or '-'} |",
        f"| Prompt hash | {report.prompt_line()} |",
        f"| Models | {md_cell(', '.join(m.model for m in report.models)) or '-'} |",
        f"| Rows by run | {runs} |",
        f"| Dimensions | {', '.join(report.dimensions) or '-'} |",
        *(
            f"| Judge fingerprint ({runs}) | {md_cell(judge)} |"
            for runs, judge in fingerprint_rows(report.fingerprints)
        ),
        "",
        f"Computed from every row in {RESULTS_FILE}, whichever session wrote it. A detected item "
        "is one answered (status ok) that meets its expectation; a failed judgement counts as "
        "a miss and in the error rate. Intervals are 95% (Wilson for rates, percentile "
        "bootstrap otherwise).",
        "",
    ]
    if report.reprompted:
        lines += [
            f"**Items judged under more than one prompt: {len(report.reprompted)}** (the "
            "prompt file or the item changed between sessions, so their runs disagree on what "
            f"the judge saw): {', '.join(report.reprompted)}. Re-run them for one consistent "
            "report.",
            "",
        ]
    if report.notes:
        lines += ["Notes:", "", *(f"- {note}" for note in report.notes), ""]
    return lines


def _model_md(m: ModelReport, sme_labels: str | None) -> list[str]:
    lines = [f"## Model {md_text(m.model)}", ""]
    if m.notes:
        lines += [*(f"- {note}" for note in m.notes), ""]
    lines += [*fitness_md(m), *_detection_md(m)]
    if m.ranking is not None:
        head, *rest = m.ranking_lines()
        lines += ["### As a ranker", "", head, "", *rest, ""]
    if m.noise_floor is not None:
        lines += _noise_md(m.noise_floor)
    if m.test_retest is not None:
        lines += _retest_md(m.test_retest)
    for stability in m.label_stability:
        lines += label_stability_md(stability)
    if m.panel is not None:
        lines += _panel_md(m.panel)
    if m.sme is not None:
        lines += _sme_md(m.sme, sme_labels or "-")
    if m.reading_list is not None:
        lines += reading_list_md(m.reading_list, f"{md_cell(m.model)} (this prompt)")
    if m.probes is not None:
        lines += [*probes_markdown(m.probes), ""]
    return [*lines, *_gates_md(m), *_failures_summary_md(m)]


def render_report_md(report: FolderReport) -> str:
    """report.md: the header, a section per model, cost, and the comparison."""
    lines = _header_md(report)
    if report.pairwise is not None:
        lines += leaderboard_markdown(report.pairwise.leaderboards)
        lines += pairwise_markdown(report.pairwise)
    for m in report.models:
        lines += _model_md(m, report.sme_labels)
    lines += _usage_md(report)
    lines += reply_fixtures_markdown(report.reply_checks)
    lines += [f"## {_comparison_heading(report)}", "", *_comparison_body(report)]
    return "\n".join(lines)


def render_comparison_md(report: FolderReport) -> str:
    """comparison.md: the paired comparison with the previous prompt version."""
    heading = f"# {report.judge}, prompt {report.version}: {_comparison_heading(report)}"
    return "\n".join([heading, "", *_comparison_body(report)])
