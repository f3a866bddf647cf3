"""The fitness section's words: how a chance test reads, and its figure in one line.

The tests themselves are a verdict's (`judges.verdicts.fitness`); rendered by
`judges.reports.render.fitness`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from judges.reports.format import interval, number, sided_p, undefined
from judges.stats.fitness.chance import ChanceTest, Fitness
from judges.verdicts.vocabulary import AT_CHANCE, BETTER, TOO_FEW, WORSE

__all__ = [
    "cannot_show",
    "chance_reading",
    "figure_text",
    "fitness_dict",
    "fitness_reasons",
    "named",
    "not_fit_phrase",
    "reason_text",
    "weak_spots",
]


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


def worse_and_at_chance(failing: Sequence[ChanceTest]) -> tuple[list[str], list[str]]:
    """The names of the failing tests worse than chance, then of the others, in order."""
    worse = [t.name for t in failing if chance_reading(t) == WORSE]
    return worse, [t.name for t in failing if chance_reading(t) != WORSE]


def not_fit_phrase(failing: Sequence[ChanceTest], limit: int = MAX_NAMED) -> str:
    """`worse than chance on A; at chance on B, C and 4 more`, at most `limit` names."""
    worse, at = worse_and_at_chance(failing)
    parts = []
    if worse:
        parts.append(f"{WORSE} on {named(worse, limit)}")
    if at:
        parts.append(f"{AT_CHANCE} on {named(at, max(limit - len(worse), 1))}")
    return "; ".join(parts)


def figure_text(test: ChanceTest) -> str:
    """The test's figure as a reader sees it: value, interval, n, chance and each p-value
    with its side; an undefined value says why (its counts) instead of printing nan."""
    reading = chance_reading(test)
    p = sided_p(test.p_value, test.p_worse if reading == WORSE else None)
    if math.isnan(test.value):
        why = undefined(test.detail or "no data")
        return f"{test.statistic} {why}, n={test.n}, chance {test.chance:g}, {p}"
    shown = f"{number(test.value)} {interval(test.low, test.high)}"
    return f"{test.statistic} {shown} n={test.n}, chance {test.chance:g}, {p}"


def reason_text(test: ChanceTest) -> str:
    """One line a report prints for a test: `name: AT CHANCE (figure; counts)`."""
    return f"{test.name}: {chance_reading(test).upper()} ({figure_text(test)}{_detail(test)})"


def _detail(test: ChanceTest) -> str:
    """`; counts`, unless the figure already gave them as why its value is undefined."""
    return f"; {test.detail}" if test.detail and not math.isnan(test.value) else ""


def fitness_reasons(fitness: Fitness) -> list[str]:
    """Why the judge is NOT FIT, one line per failing test (empty when FIT)."""
    if fitness.fit:
        return []
    if not fitness.tests:
        return ["no chance test applies: nothing in the set tests the judge against chance"]
    return [reason_text(test) for test in fitness.failing]


def weak_spots(fitness: Fitness) -> list[str]:
    """Diagnostics at chance, one line each: "weak on fabrication (figure; 3/7 ...)".

    Too weak to decide (a good judge fails each now and then), they point where to look.
    """
    return [
        f"weak on {t.name} ({figure_text(t)}{_detail(t)}; a judge right 90% of the time "
        f"passes it with probability {t.power:.2f}: shown, decides nothing)"
        for t in fitness.diagnostics
        if not t.fit_ignoring_power
    ]


def cannot_show(fitness: Fitness) -> list[str]:
    """What the set cannot yet show: every test that cannot decide at its size."""
    if not fitness.undecided:
        return []
    names = ", ".join(t.name for t in fitness.tests)
    return [
        "no chance test can decide at this set's size, so it cannot yet show that the "
        f"judge is better than chance ({names}); grow the set (`python -m judges plan`)"
    ]


def fitness_dict(fitness: Fitness) -> dict[str, Any]:
    """report.json's fitness: the verdict, its reasons in the report's words, and each test
    with how it reads."""
    found = fitness.as_dict()
    tests = found.pop("tests")
    for test, shown in zip(fitness.tests, tests, strict=True):
        shown["reading"] = chance_reading(test)
    return found | {
        "reasons": [reason_text(test) for test in fitness.failing],
        "weak_spots": weak_spots(fitness),
        "cannot_show": cannot_show(fitness),
        "tests": tests,
    }
