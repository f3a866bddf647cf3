"""comparison.md's sections: two prompt versions of one judge, paired item by item.

The figures come from `judges.stats.regression.comparison`; this module only writes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.core.quoting import md_text
from judges.reports.format import number, p_is, rate_with_interval
from judges.stats.estimates.intervals import Rate
from judges.stats.regression.comparison import Comparison

__all__ = ["comparison_markdown"]


def _fraction(r: Rate) -> str:
    return rate_with_interval(r, empty="no items")


def _quoted(fingerprints: Sequence[str]) -> str:
    """What the servers said of themselves, escaped: a reply's model name may hold markup."""
    return md_text("; ".join(fingerprints))


def _fingerprint_lines(c: Comparison) -> list[str]:
    """Mixed judges first: flips between two judges are not the prompt's doing."""
    if not c.mixed_fingerprints:
        return [f"- Judge fingerprint (both versions): {_quoted(c.fingerprints_after)}"]
    command = (
        f'pytest regression_tests --record=all --judge-model {c.model} -k "{c.judge}-{c.before}-"'
    )
    return [
        f"**Mixed judge fingerprints:** {c.before} was judged by "
        f"{_quoted(c.fingerprints_before)}, {c.after} by {_quoted(c.fingerprints_after)}. "
        "The differences below may come from the judge, not the prompt. Re-record the older "
        f"version in this environment so one judge answers both: `{command}`",
        "",
    ]


def _as_regression_gate(c: Comparison) -> str:
    """What the regression gate would say with `before` as the accepted baseline."""
    p = c.midp_worse
    verdict = "fails" if c.significantly_worse else "passes"
    return (
        f"- As a regression gate with {c.before} as the accepted baseline: one-sided "
        f"McNemar {p_is(p, 'mid-p')}; {c.after} {verdict} at alpha 0.05"
    )


def comparison_markdown(comparison: Comparison, level: int = 2) -> str:
    """The comparison as a markdown section headed at `level`."""
    c = comparison
    lines = [
        f"{'#' * level} {c.judge} on {md_text(c.model)}: prompt {c.before} -> {c.after}",
        "",
        *_fingerprint_lines(c),
        f"- Paired items (main run): {c.n_pairs}"
        + (
            f" ({c.only_before} only under {c.before}, {c.only_after} only under {c.after})"
            if c.only_before or c.only_after
            else ""
        ),
        f"- Detection of planted defects: {c.before} {_fraction(c.detection_before)}; "
        f"{c.after} {_fraction(c.detection_after)}",
        f"- Flips on defects: {c.mcnemar.b} caught -> missed, {c.mcnemar.c} missed -> caught; "
        f"two-sided McNemar exact {p_is(c.mcnemar.p_value)} (n = {c.mcnemar.n})",
        _as_regression_gate(c),
    ]
    controls = [flip for flip in c.flips if flip.control]
    if controls:
        worse = sum(not flip.now_detected for flip in controls)
        lines.append(
            f"- Controls flipped: {len(controls)} ({worse} now a false positive or error, "
            f"{len(controls) - worse} now held)"
        )
    lines.append("")
    if c.flips:
        lines += [
            f"| Item | Category | {c.before} | {c.after} | Change |",
            "|---|---|---|---|---|",
        ]
        for flip in c.flips:
            kind = flip.category
            if flip.control and flip.category != "control":
                kind += " (control)"
            better = "now held" if flip.control else "now detected"
            change = better if flip.now_detected else "**lost**"
            lines.append(f"| {flip.item_id} | {kind} | {flip.before} | {flip.after} | {change} |")
    else:
        lines.append("No item flipped.")
    lines.append("")
    if c.dimensions:
        lines += [
            f"Mean change per dimension ({c.after} - {c.before}, items answered under both; "
            "95% paired bootstrap), controls and planted defects apart. Good: higher on "
            "controls (a harmless answer keeps its marks), lower on planted defects (the judge "
            "marks the defect down), as the score regression gates judge it:",
            "",
            f"| Dimension | Items | Mean {c.before} | Mean {c.after} | Change [95%] | n pairs "
            "| Direction |",
            "|---|---|---|---|---|---|---|",
        ]
        for d in c.dimensions:
            e = d.change
            interval = f"{number(e.value)} [{number(e.low)}, {number(e.high)}]"
            way = {True: "good", False: "**bad**", None: "no change"}[d.good]
            if not d.directed:
                way = "no good direction (exact expected values)"
            lines.append(
                f"| {d.dimension} | {d.side} | {number(d.mean_before)} | "
                f"{number(d.mean_after)} | {interval} | {e.n} | {way} |"
            )
        lines.append("")
    return "\n".join(lines)
