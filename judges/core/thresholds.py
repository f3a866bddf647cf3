"""How a gate's threshold is written, and the decimals that keep a value apart from it.

A way of writing a number, not a statistic: it sits in `core/`, below both `stats/` (whose
`Gate` still words its value and threshold) and `reports/`, so a threshold reads the same in
an assertion message, report.md and a pairwise set's reasons.
"""

from __future__ import annotations

import math

__all__ = ["distinct_digits", "threshold_text"]


def threshold_text(threshold: float) -> str:
    """A threshold as written: two decimals, more only where gates.toml gives more."""
    return f"{threshold:.2f}" if round(threshold, 2) == threshold else f"{threshold:g}"


def distinct_digits(value: float, threshold: float | None, digits: int = 2) -> int:
    """The fewest decimals (at least `digits`, at most 6) at which `value` and `threshold`
    read differently, so a value that fails its threshold never prints as equal to it."""
    if threshold is None or math.isnan(value):
        return digits
    shown = threshold_text(threshold)
    # Never fewer decimals than the threshold shows: 0.005 against <= 0.005, not 0.01.
    digits = max(digits, len(shown.partition(".")[2]))
    if value == threshold:
        return digits
    for places in range(digits, 7):
        if f"{value:.{places}f}" != f"{threshold:.{places}f}" and f"{value:.{places}f}" != shown:
            return places
    return 6
