"""The corpus report in Markdown: corpus_report.md."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

from judges.core.quoting import md_cell, md_prose, md_text
from judges.corpus.change import MIN_RANKED, JudgeChange
from judges.corpus.estimates import CONFIDENCE, IntervalMethod, MeanInterval
from judges.corpus.human_agreement import HumanAgreement
from judges.corpus.manifest import Scale
from judges.corpus.ppi import MIN_LABELS, PPIEstimate
from judges.corpus.report import CorpusReport, JudgeSummary
from judges.corpus.review_queue import QUEUE_FILE
from judges.reports.format import (
    estimate,
    interval,
    n_is,
    p_value,
    percent,
    rate_percent_short,
)
from judges.stats.estimates.intervals import Estimate


def _figure(value: float, scale: Scale, signed: bool = False) -> str:
    if math.isnan(value):
        return "undefined"
    shown = value * scale.factor
    return f"{shown:+.2f}" if signed else f"{shown:.2f}"


def _mean(m: MeanInterval, scale: Scale, signed: bool = False) -> str:
    if m.n == 0:
        return "no judgements (n=0)"
    low, high = m.low * scale.factor, m.high * scale.factor
    return f"{_figure(m.mean, scale, signed)} {interval(low, high)} {n_is(m.n)}"


def _methods(report: CorpusReport) -> str:
    """The per-system intervals' methods, as the report uses them."""
    used = {s.score.method for summary in report.judges for s in summary.scores if s.score.n > 1}
    if used == {IntervalMethod.WILSON}:
        return "Wilson interval (a pass rate)"
    named = {
        IntervalMethod.WILSON: "Wilson's for a pass rate",
        IntervalMethod.BOOTSTRAP: "the percentile bootstrap of items where the t interval "
        "would leave the scale",
    }
    extra = [named[m] for m in (IntervalMethod.WILSON, IntervalMethod.BOOTSTRAP) if m in used]
    return "t interval" + (f" ({'; '.join(extra)})" if extra else "")


def _judge_section(summary: JudgeSummary, scale: Scale) -> list[str]:
    lines = [f"## {md_cell(summary.judge)}", ""]
    if summary.description:
        lines += [md_prose(summary.description), ""]
    if summary.reference:
        lines += [f"Scores are against the reference system {md_cell(summary.reference)}.", ""]
    flags = any(s.flagged is not None for s in summary.scores)
    lines += [
        f"| rank | system | {md_cell(scale.name)}, {CONFIDENCE:.0%} interval | SE | error rows | "
        + ("flagged | " if flags else "")
        + "P(first) | better than (Holm) |",
        "|---:|---|---|---:|---:|" + ("---|" if flags else "") + "---:|---|",
    ]
    for rank, s in enumerate(summary.scores, start=1):
        flagged = ""
        if flags:
            flagged = f"{rate_percent_short(s.flagged) if s.flagged else '-'} | "
        better = ", ".join(md_cell(w) for w in summary.better_than(s.system)) or "-"
        se = _figure(s.score.standard_error, scale)
        lines.append(
            f"| {rank} | {md_cell(s.system)} | {_mean(s.score, scale)} | {se} | "
            f"{s.errors} | {flagged}{percent(summary.first[s.system], 1)} | {better} |"
        )
    resampled = [md_cell(s.system) for s in summary.scores
                 if s.score.method is IntervalMethod.BOOTSTRAP]  # fmt: skip
    lines += _resampled_note(resampled, "the scale")
    if summary.reference_score is not None:
        r = summary.reference_score
        lines += ["", f"{md_cell(r.system)} is this judge's reference, judged against itself: "
                  f"{_figure(r.score.mean, scale)} over {r.score.n} judgements by construction, "
                  "shown and not ranked."]  # fmt: skip
    by_pair = {frozenset((d.better, d.worse)): d for d in summary.differences}
    neighbours = [  # in rank order, one row per adjacent pair
        by_pair[frozenset((a.system, b.system))]
        for a, b in itertools.pairwise(summary.scores)
        if frozenset((a.system, b.system)) in by_pair
    ]
    lines += [
        "",
        "Neighbours in the ranking, paired over the items both were judged on "
        "(Holm over every pair of systems):",
        "",
        "| higher | lower | difference, interval | p | p (Holm) |",
        "|---|---|---|---:|---:|",
    ]
    for d in neighbours:
        lines.append(
            f"| {md_cell(d.better)} | {md_cell(d.worse)} | "
            f"{_mean(d.difference, scale, signed=True)} | "
            f"{p_value(d.p_value, 'no spread')} | {p_value(d.p_holm, 'no spread')} |"
        )
    named = [f"{md_cell(d.better)} - {md_cell(d.worse)}" for d in neighbours
             if d.difference.method is IntervalMethod.BOOTSTRAP]  # fmt: skip
    return [*lines, *_resampled_note(named, "a difference's range"), ""]


def _resampled_note(named: list[str], where: str) -> list[str]:
    """Which intervals are the item bootstrap's, the t interval leaving `where`."""
    if not named:
        return []
    return ["", f"Intervals by the percentile bootstrap of items, where the t interval would "
                f"leave {where}: {', '.join(named)}."]  # fmt: skip


def _change_section(change: JudgeChange, caveat: str | None, scale: Scale, title: str,
                    queue: int | None) -> list[str]:  # fmt: skip
    lines = [f"## {title}: {md_cell(change.before)} -> {md_cell(change.after)}", ""]
    if caveat:
        lines += [f"**Caveat:** {md_prose(caveat)}.", ""]
    lines += [
        f"| system | {md_cell(change.before)} | {md_cell(change.after)} | shift, interval | "
        "contested "
        f"(> {_figure(change.margin, scale)}) |",
        "|---|---:|---:|---|---|",
    ]
    for s in change.shifts:
        lines.append(
            f"| {md_cell(s.system)} | {_figure(s.before, scale)} | {_figure(s.after, scale)} | "
            f"{_mean(s.shift, scale, signed=True)} | {'contested' if s.contested else '-'} |"
        )
    lines += _resampled_note(
        [md_cell(s.system) for s in change.shifts if s.shift.method is IntervalMethod.BOOTSTRAP],
        "a shift's range",
    )
    # A judge with no score at all has no leader: its P(first) is undefined, not a crash.
    first_before = percent(change.first_before.get(change.leader_before, math.nan), 1)
    first_after = percent(change.first_after.get(change.leader_after, math.nan), 1)
    leader = (
        f"the leader changes: {md_cell(change.leader_before)} (P(first) {first_before}) -> "
        f"{md_cell(change.leader_after)} (P(first) {first_after})"
        if change.leader_changes
        else f"the leader stays {md_cell(change.leader_before)} (P(first) "
        f"{first_before} -> {first_after})"
    )
    measured = change.adjacent if change.adjacent is not None else change.exact
    lines += [
        "",
        f"- Rankings: {_rank_correlations(change)}; {leader}.",
        f"- Verdict agreement on the {change.exact.n} judgements both made: exact "
        f"{rate_percent_short(change.exact)}"
        + (f", within one level {rate_percent_short(change.adjacent)}" if change.adjacent else "")
        + f"; quadratic kappa {_kappa(change.kappa)} (intervals by resampling items).",
        f"- Substitution: agreement ({change.agreement_measure}) "
        f"{rate_percent_short(measured)} against a threshold of {percent(change.threshold)}: "
        f"**{change.substitution}** (decided on the interval's bounds).",
    ]
    if queue is not None:
        lines.append(
            f"- Review queue: {queue} judgements whose verdict changed, in `{QUEUE_FILE}` "
            "(largest change first)."
        )
    return [*lines, ""]


def _rank_correlations(change: JudgeChange) -> str:
    """Spearman and Kendall between the two rankings, or why there are none."""
    n = len(change.systems)
    if n < MIN_RANKED:
        return (f"Spearman and Kendall undefined (a rank correlation needs {MIN_RANKED} "
                f"systems; {n} here)")  # fmt: skip
    figures = []
    for name, found in (("Spearman", change.spearman), ("Kendall", change.kendall)):
        why = "a judge ties every system" if math.isnan(found.value) else ""
        figures.append(f"{name} {estimate(found.value, found.low, found.high, found.n, why)}")
    return f"{', '.join(figures)} (intervals by resampling items; n = systems)"


def _kappa(kappa: Estimate) -> str:
    """Kappa, or why it is undefined: with one verdict throughout, chance agreement is all."""
    why = "every verdict the same, so no agreement beyond chance to measure"
    return estimate(kappa.value, kappa.low, kappa.high, kappa.n, why)


PPI_NOTE = (
    "PPI++ (ppi-python, power-tuned) from the labelled items and the judge's scores on the "
    "rest; labels only: the same labels alone. Width ratio: the labels-only interval's width "
    "over PPI++'s; worth in labels: the labels times that ratio squared, the labels the "
    "judge's scores are worth here."
)


def _ppi_rows(estimates: tuple[PPIEstimate, ...], scale: Scale) -> list[str]:
    lines = [
        "| target | labels | unlabelled | PPI++, interval | labels only, interval | width ratio | "
        "worth in labels |",
        "|---|---:|---:|---|---|---:|---:|",
    ]
    for e in estimates:
        f = scale.factor
        if not e.defined:
            lines.append(
                f"| {md_cell(e.target)} | {e.labels} | {e.unlabelled} | undefined: needs "
                f"{MIN_LABELS} labelled and judged, and unlabelled judgements besides | - | - | - |"
            )
            continue
        ratio = e.width_ratio
        worth = "-" if math.isnan(ratio) else f"{e.effective_labels:.0f}"
        lines.append(
            f"| {md_cell(e.target)} | {e.labels} | {e.unlabelled} | {e.ppi * f:.2f} "
            f"{interval(e.ppi_low * f, e.ppi_high * f)} | {e.classical * f:.2f} "
            f"{interval(e.classical_low * f, e.classical_high * f)} | "
            f"{'-' if math.isnan(ratio) else f'{ratio:.2f}'} | {worth} |"
        )
    return lines


def corpus_markdown(report: CorpusReport) -> str:
    corpus = report.corpus
    manifest = corpus.manifest
    scale = manifest.scale
    lines = [
        f"# Corpus report: {manifest.name}",
        "",
        md_prose(manifest.description),
        "",
        f"- Source: {md_prose(manifest.source)}; licence: {md_prose(manifest.licence)}",
        f"- {len(corpus.items)} items, {len(corpus.systems)} systems, {len(manifest.judges)} "
        f"judges; {corpus.judgement_count - corpus.error_count} judgements with a score, "
        f"{corpus.error_count} error rows (kept, counted per system below)",
        f"- Scale: {md_text(scale.name)}; each figure is the mean over a system's items x "
        f"{scale.factor:g}, with a {CONFIDENCE:.0%} {_methods(report)}; systems are compared "
        "paired over shared items.",
        "",
    ]
    for summary in report.judges:
        lines += _judge_section(summary, scale)
    if report.change is not None:
        lines += _change_section(report.change, report.change_caveat, scale, "Judge change",
                                 len(report.queue))  # fmt: skip
    for retest in report.retests:
        lines += _change_section(retest, None, scale, "Test-retest", None)
    for summary in report.judges:
        if summary.ppi_systems or summary.ppi_differences:
            estimates = summary.ppi_systems + summary.ppi_differences
            title = f"## PPI++ with the gold labels: {md_cell(summary.judge)}"
            lines += [title, "", *_ppi_rows(estimates, scale), "", PPI_NOTE, ""]
    if corpus.labels and not any(s.ppi_systems or s.ppi_differences for s in report.judges):
        few = (
            f"{len(corpus.labels)} labels, too few per system (at least 3 labelled and "
            "judged, and unlabelled judgements besides)."
        )
        lines += ["## PPI++", "", few, ""]
    for found in report.human:
        lines += human_section(found, scale)
    if report.published:
        lines += _published_section(report)
    return "\n".join(lines).rstrip() + "\n"


def human_section(found: HumanAgreement, scale: Scale) -> list[str]:
    """A judge against the human labels: agreement, kappa, the confusion table."""
    lines = [f"## {md_cell(found.judge)} against the human labels", ""]
    if found.exact.n == 0:
        return [*lines, f"{found.labels} labels, none on an output this judge scored.", ""]
    lines += [
        f"- Verdict agreement on the {found.exact.n} judgements with a label (run 0, of "
        f"{found.labels} labels): exact {rate_percent_short(found.exact)}"
        + (f", within one level {rate_percent_short(found.adjacent)}" if found.adjacent else "")
        + f"; quadratic kappa {_kappa(found.kappa)} (intervals by resampling items).",
        f"- {len(found.disagreeing)} judgements whose verdict is not the human's, in "
        f"`{QUEUE_FILE}` (largest gap first).",
        "",
        f"Verdicts ({md_text(scale.name)}: "
        + ("the side of the midpoint" if scale.verdict == "side" else "the nearest level")
        + "):",
        "",
        "| human (rows), judge (columns) | "
        + " | ".join(md_cell(v) for v in found.verdicts)
        + " |",
        "|---|" + "---:|" * len(found.verdicts),
    ]
    for name, row in zip(found.verdicts, found.confusion, strict=True):
        lines.append(f"| {md_cell(name)} | " + " | ".join(str(v) for v in row) + " |")
    return [*lines, ""]


def _published_section(report: CorpusReport) -> list[str]:
    checks = report.published
    agreeing = sum(c.agrees for c in checks)
    lines = [
        "## Published figures",
        "",
        f"{agreeing} of {len(checks)} published figures recomputed from the judgements agree "
        "(counts exactly, others to 12 significant digits).",
        "",
        "| judge | system | figure | published | recomputed | agrees |",
        "|---|---|---|---:|---:|---|",
    ]
    by_key = defaultdict(list)
    for c in checks:
        by_key[(c.figure.judge, c.figure.system)].append(c)
    for (judge, system), found in by_key.items():
        for c in found:
            if c.figure.statistic not in ("mean", "standard_error") and c.agrees:
                continue  # counts that agree are in the sentence above
            name = c.figure.published_as or c.figure.statistic
            lines.append(
                f"| {md_cell(judge)} | {md_cell(system)} | {name} | {float(c.figure.value)!r} | "
                f"{c.recomputed!r} | {'yes' if c.agrees else '**no**'} |"
            )
    return [*lines, ""]
