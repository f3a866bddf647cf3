"""The lines of the terminal summary: judgements, usage, one line per report, the report
check, and the run metadata that the committed reports leave out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from judges.calls.backends import is_imported
from judges.calls.ledger import Spend
from judges.core.naming import report_dir
from judges.core.results import JudgementRow, Usage
from judges.reports.model.data import FAILURES_MD, INDEX_HTML, REPORT_MD, ModelReport
from judges.reports.model.metadata import RUN_FILE
from judges.reports.model.result_line import LINE_LIMIT
from judges.reports.model.summary import FirstScreen, first_screen
from judges.reports.render.markdown import fraction
from judges.reports.sections.cost import estimated_part
from judges.reports.sections.fitness import not_fit_phrase
from judges.reports.sections.ranking import metric_sentence
from judges.reports.write import ReportSet
from judges.sets.folder import GATES_FILE
from judges.verdicts.vocabulary import NOT_FIT

CHECK_HINT = "run `python -m pytest regression_tests` and commit the result"
REBUILD_HINT = "run `python -m judges report` and commit the result"


def shown(path: Path) -> str:
    """A path relative to the working directory where it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def model_line(m: ModelReport, judge: str, version: str) -> str:
    passed, failed, unevaluated = m.gate_counts
    gates = f"gates {passed} passed, {failed} failed"
    if unevaluated:
        gates += f", {unevaluated} not evaluated"
    if m.gates_table is None:
        gates += f" (no thresholds in {GATES_FILE})"
    verdict = m.verdict_word()
    if m.incomplete:  # INCOMPLETE: the same reason as report.md's
        verdict += f": {m.incomplete_reason()}"
    elif not m.fit and m.chance_tests_apply:
        failing = m.fitness.failing if m.fitness is not None else []
        why = not_fit_phrase(failing) if failing else m.fitness_reasons()[0]
        if verdict == NOT_FIT:
            accepted = f", accepted in {GATES_FILE}" if m.accept_not_fit else ""
            verdict += f" ({why}{accepted})"
        elif m.accept_not_fit:  # FAIL keeps the accepted NOT FIT in view
            verdict += f"; {NOT_FIT}, accepted ({why})"
    return (
        f"{judge} {version} on {m.model}: detection {fraction(m.all_defects)}; {gates}; "
        f"{m.failure_counts()}; {verdict}"
    )


def why_line(screen: FirstScreen) -> str:
    """One line per report, at most LINE_LIMIT characters: the verdict and the reason that
    decides it (its Result line)."""
    prefix = f"{screen.judge} {screen.version}: "
    return prefix + screen.result(LINE_LIMIT - len(prefix))


def warning_line(screen: FirstScreen) -> str | None:
    """The accepted baseline worse than the prompt before it, on a line of its own."""
    return f"{screen.judge} {screen.version}: WARNING {screen.warning}" if screen.warning else None


def _extra_lines(m: ModelReport, judge: str, version: str) -> list[str]:
    """Ranking against random and lenient-parsing coercions, where they apply."""
    lines = []
    if m.ranking is not None:
        auc = metric_sentence(m.ranking.metrics["hard_negative_auc"])
        lines.append(f"{judge} {version} on {m.model}: as a ranker, {auc}")
    if m.coercions:
        lines.append(f"{judge} {version} on {m.model}: {m.coercions}")
    return lines


def report_lines(built: ReportSet) -> list[str]:
    """One line per model and prompt version, where each report is, and the run metadata."""
    lines = [
        line
        for f in built.folders
        for m in f.models
        for line in [model_line(m, f.judge, f.version), *_extra_lines(m, f.judge, f.version)]
    ]
    for folder in built.folders:
        where = report_dir(built.reports, folder.judge, folder.version)
        lines.append(f"report: {shown(where)}/ ({INDEX_HTML}, {REPORT_MD}, {FAILURES_MD})")
        lines += [f"damaged: {line}" for line in folder.damaged]
    lines += [f"run {label}: {value}" for label, value in built.meta.items()]
    if not built.checked:
        lines.append(f"run metadata also in {RUN_FILE} beside each report (git-ignored)")
    return lines


def verdict_lines(built: ReportSet) -> list[str]:
    """Per report, its verdict and the one reason that decides it (then its warning): the
    summary's last lines, so the answer is what a reader sees first at the end of a run."""
    lines = []
    for folder in built.folders:
        screen = first_screen(folder)
        lines += [line for line in (why_line(screen), warning_line(screen)) if line]
    return lines


def check_lines(
    built: ReportSet, source: str = "the cassettes", hint: str = CHECK_HINT
) -> list[str]:
    """The report check's verdict: every file that differs, or that all match."""
    if not built.checked:
        return []
    if not built.differing:
        return [f"report check: {len(built.files)} files match what this run produces"]
    return [f"{shown(path)} differs from what {source} produce; {hint}" for path in built.differing]


def session_lines(
    rows: Sequence[JudgementRow],
    usage_by_model: Mapping[str, Usage],
    live: Mapping[str, Usage],
    cost_cap: Spend | None,
) -> list[str]:
    """Judgements by status, usage per model, live spend and the cost cap."""
    statuses: dict[str, int] = {}
    for row in rows:
        statuses[row.status] = statuses.get(row.status, 0) + 1
    counts = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    lines = [f"{len(rows)} judgements: {counts}"]
    for model, usage in usage_by_model.items():
        if is_imported(model):  # a release gives replies, not their tokens or price
            lines.append(
                f"{model}: {usage.calls} replayed replies; tokens and cost unknown (imported "
                "from a release, which did not publish them)"
            )
            continue
        lines.append(
            f"{model}: {usage.calls} calls, {usage.input_tokens} input + "
            f"{usage.output_tokens} output tokens, ${usage.cost_usd:.4f}{estimated_part(usage)}"
        )
    for model, usage in live.items():
        lines.append(
            f"live spend {model}: {usage.calls} calls, {usage.input_tokens} + "
            f"{usage.output_tokens} tokens, ${usage.cost_usd:.4f}{estimated_part(usage)}"
        )
    if cost_cap is not None:
        estimated = Usage()
        for usage in live.values():
            estimated.add(usage)
        lines.append(
            f"cost cap ${cost_cap.cap_usd:.4f}: spent ${cost_cap.spent_usd:.4f}"
            f"{estimated_part(estimated)}"
        )
    return lines


def overspend_lines(spend: Spend | None) -> list[str]:
    """The loud part of the spend: the cap exceeded (an error: the run fails), and the calls
    billed past the worst case reserved for them, with the figures."""
    if spend is None:
        return []
    lines = []
    if spend.exceeded:
        lines.append(
            f"COST CAP EXCEEDED: spent ${spend.spent_usd:.4f} of a ${spend.cap_usd:.4f} cap "
            f"(${spend.spent_usd - spend.cap_usd:.4f} over): the run fails. Every call reserved "
            "its worst case first, so only usage reported beyond it passes the cap; check the "
            "provider's bill and its usage figures before recording again"
        )
    for over in spend.overruns[:3]:
        lines.append(
            f"over-reported usage: a call to {over.model} reported {over.input_tokens} input + "
            f"{over.output_tokens} output tokens = ${over.cost_usd:.4f}, past its worst case "
            f"${over.worst_usd:.4f} (its prompt + max_tokens at the price file's prices)"
        )
    if len(spend.overruns) > 3:
        lines.append(f"over-reported usage: {len(spend.overruns) - 3} more call(s) like these")
    return lines


def summary_lines(
    rows: Sequence[JudgementRow],
    usage_by_model: Mapping[str, Usage],
    live: Mapping[str, Usage],
    cost_cap: Spend | None,
    built: ReportSet | None,
) -> list[tuple[str, dict[str, bool]]]:
    """Every line of the judges section with its markup: the report check in red or green,
    then the verdicts in bold, last."""
    lines: list[tuple[str, dict[str, bool]]] = [
        (line, {}) for line in session_lines(rows, usage_by_model, live, cost_cap)
    ]
    lines += [(line, {"red": True}) for line in overspend_lines(cost_cap)]
    if built is not None:
        lines += [(line, {}) for line in report_lines(built)]
        colour = "red" if built.differing else "green"
        lines += [(line, {colour: True}) for line in check_lines(built)]
        lines += [(line, {"bold": True}) for line in verdict_lines(built)]
    return lines
