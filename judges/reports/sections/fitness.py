"""The fitness section's words: how a chance test reads, and its figure in one line.

The tests themselves are a verdict's (`judges.verdicts.fitness`); rendered by
`judges.reports.render.fitness`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from judges.stats.fitness.chance import ChanceTest

__all__ = ["chance_reading", "named", "not_fit_phrase"]


# The words every section and format uses for one chance test; NOT FIT, FAIL, INCOMPLETE
# and PASS are kept for a judge's verdict.
BETTER, AT_CHANCE, WORSE, TOO_FEW = (
    "better than chance",
    "at chance",
    "worse than chance",
    "too few to test",
)
MAX_NAMED = 5  # reasons named in a verdict line; the rest are counted ("and 3 more")


def chance_reading(test: ChanceTest) -> str:
    """How a chance test reads: better than, at or worse than chance, or too few to test.

    Worse than chance when its one-sided test says so or its 95% interval lies wholly below
    chance: both are evidence at the 5% level, and a reader sees the interval first.
    """
    if not test.testable:
        return TOO_FEW
    if test.fit:
        return BETTER
    below = not math.isnan(test.high) and test.high < test.chance
    return WORSE if test.worse_than_chance or below else AT_CHANCE


def named(names: Sequence[str], limit: int = MAX_NAMED) -> str:
    """`a, b, c` or `a, b, c, d, e and 3 more`: never more than `limit` names."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def not_fit_phrase(failing: Sequence[ChanceTest], limit: int = MAX_NAMED) -> str:
    """`worse than chance on A; at chance on B, C and 4 more`, at most `limit` names."""
    worse = [t.name for t in failing if chance_reading(t) == WORSE]
    at = [t.name for t in failing if chance_reading(t) != WORSE]
    parts = []
    if worse:
        parts.append(f"{WORSE} on {named(worse, limit)}")
    if at:
        parts.append(f"{AT_CHANCE} on {named(at, max(limit - len(worse), 1))}")
    return "; ".join(parts)


def _number(value: float) -> str:
    return f"{value:.2f}"


def figure_text(test: ChanceTest) -> str:
    """The test's figure as a reader sees it: value, interval, n, chance and each p-value
    with its side; an undefined value says why (its counts) instead of printing nan."""
    reading = chance_reading(test)
    p = f"p(better) = {test.p_value:.3g}"
    if reading == WORSE:
        p += f", p(worse) = {test.p_worse:.3g}"
    if math.isnan(test.value):
        why = test.detail or "no data"
        return f"{test.statistic} undefined ({why}), n={test.n}, chance {test.chance:g}, {p}"
    interval = (
        f" [{_number(test.low)}, {_number(test.high)}]"
        if not (math.isnan(test.low) or math.isnan(test.high))
        else " (no interval)"
    )
    return (
        f"{test.statistic} {_number(test.value)}{interval} n={test.n}, chance {test.chance:g}, {p}"
    )


def reason_text(test: ChanceTest) -> str:
    """One line a report prints for a test: `name: AT CHANCE (figure; counts)`."""
    detail = f"; {test.detail}" if test.detail and not math.isnan(test.value) else ""
    return f"{test.name}: {chance_reading(test).upper()} ({figure_text(test)}{detail})"
