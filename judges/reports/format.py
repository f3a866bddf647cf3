"""Every figure a reader sees, formatted in one place: p-values, rates, intervals, n.

The lowest module of the reports layer, so every section, renderer, the terminal summary,
the GitHub output and the pytest layer's assertion messages spell a number the same way.
An undefined figure (NaN) is never printed as `nan`: it reads "undefined", with why when
the caller knows.

One p-value style: four decimals, and `< 0.0001` below that (a permutation test of 10,000
draws cannot resolve less, and four decimals keep a Holm threshold such as 0.0025 apart from
its neighbours).
"""

from __future__ import annotations

import math
from typing import Protocol

__all__ = [
    "P_FLOOR",
    "UNDEFINED",
    "estimate",
    "interval",
    "n_is",
    "number",
    "p_is",
    "p_value",
    "percent",
    "rate",
    "rate_percent",
    "rate_percent_short",
    "rate_with_interval",
    "sided_p",
    "undefined",
]

UNDEFINED = "undefined"
P_FLOOR = 0.0001  # the smallest p-value shown as a number


class _Rate(Protocol):
    """A proportion with its interval (`judges.stats.estimates.intervals.Rate`)."""

    @property
    def successes(self) -> int: ...
    @property
    def n(self) -> int: ...
    @property
    def rate(self) -> float: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...


def undefined(why: str = "") -> str:
    """`undefined (why)`, or `undefined` when no reason is known."""
    return f"{UNDEFINED} ({why})" if why else UNDEFINED


def number(value: float, digits: int = 2, nan: str = "-") -> str:
    """A plain figure to `digits` decimals; NaN reads `nan` (a dash in a table by default)."""
    return nan if math.isnan(value) else f"{value:.{digits}f}"


def p_value(p: float, why: str = "") -> str:
    """`0.0123`, or `< 0.0001`; an undefined p-value says why (e.g. no discordant pair)."""
    if math.isnan(p):
        return undefined(why)
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.4f}"


def p_is(p: float, name: str = "p", why: str = "") -> str:
    """`p = 0.0123`, `p < 0.0001` or `p undefined (why)`; `name` names the test (`mid-p`,
    `p(better)`)."""
    shown = p_value(p, why)
    # `p < 0.0001` and `p undefined (why)` take no equals sign.
    return f"{name} = {shown}" if shown[0].isdigit() else f"{name} {shown}"


def sided_p(better: float, worse: float | None = None) -> str:
    """A chance test's one-sided p-values, each naming its side: `p(better) = 0.0312` and,
    for a judge below chance, `, p(worse) = 0.0040`."""
    shown = p_is(better, "p(better)")
    return shown if worse is None else f"{shown}, {p_is(worse, 'p(worse)')}"


def percent(value: float, digits: int = 0) -> str:
    """`45%` (`digits` decimals); NaN reads undefined."""
    return UNDEFINED if math.isnan(value) else f"{value * 100:.{digits}f}%"


def rate(k: int, n: int, value: float | None = None, digits: int = 2, empty: str = "") -> str:
    """`k/n = 0.45`; with no n, `empty` or `no items (n=0)`."""
    if n == 0:
        return empty or "no items (n=0)"
    shown = k / n if value is None else value
    return f"{k}/{n} = {shown:.{digits}f}"


def rate_percent(r: _Rate, digits: int = 0, empty: str = "") -> str:
    """`k/n = 45% [30%, 60%] n=20`: a rate as a percentage with its interval and n."""
    if r.n == 0:
        return empty or "no items (n=0)"
    shown = f"{r.successes}/{r.n} = {percent(r.rate, digits)}"
    return f"{shown} [{percent(r.low, digits)}, {percent(r.high, digits)}] {n_is(r.n)}"


def rate_percent_short(r: _Rate, empty: str = "") -> str:
    """`k/n = 45.0% [30, 60]`: a rate as a percentage, its interval in points (tables)."""
    if r.n == 0:
        return empty or "no items (n=0)"
    return f"{r.successes}/{r.n} = {percent(r.rate, 1)} [{r.low * 100:.0f}, {r.high * 100:.0f}]"


def interval(low: float, high: float, digits: int = 2, missing: str = "(no interval)") -> str:
    """`[0.30, 0.60]`; an interval with an undefined end reads `missing`."""
    if math.isnan(low) or math.isnan(high):
        return missing
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def n_is(n: int) -> str:
    """`n=20`: how many items or pairs a figure rests on."""
    return f"n={n}"


def estimate(value: float, low: float, high: float, n: int, why: str = "") -> str:
    """`0.45 [0.30, 0.60] n=20`; an undefined value says why instead of printing nan."""
    if math.isnan(value):
        return f"{undefined(why)}, {n_is(n)}"
    return f"{value:.2f} {interval(low, high)} {n_is(n)}"


def rate_with_interval(r: _Rate, empty: str = "") -> str:
    """`k/n = 0.45 [0.30, 0.60] n=20`: a rate with its interval and n."""
    if r.n == 0:
        return empty or "no items (n=0)"
    return f"{rate(r.successes, r.n, r.rate)} {interval(r.low, r.high)} {n_is(r.n)}"
