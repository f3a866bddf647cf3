"""Detection gates: per-category detection and control false positives, with Wilson intervals.

Pure functions over result rows; the plugin turns a failed gate into a failed test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import scipy.stats

from judges.core.results import JudgementRow
from judges.core.thresholds import distinct_digits, threshold_text
from judges.sets.planted import Gates
from judges.stats.estimates.intervals import Estimate, Rate, wilson

CONTROL_FALSE_POSITIVE = "control_false_positive"
ERROR_RATE = "error_rate"


@dataclass(frozen=True)
class Gate:
    """A threshold on one statistic (a rate or an estimate), judged on its point value."""

    name: str
    value: Rate | Estimate
    threshold: float | None
    at_least: bool  # True: value must be >= threshold; False: value must be <= threshold

    @property
    def point(self) -> float:
        return self.value.rate if isinstance(self.value, Rate) else self.value.value

    @property
    def passed(self) -> bool | None:
        # Undefined (no data, or kappa with one category) is not evaluable, never a pass.
        if self.threshold is None or self.value.n == 0 or math.isnan(self.point):
            return None
        if self.at_least:
            return self.point >= self.threshold
        return self.point <= self.threshold

    def threshold_text(self) -> str:
        """`>= 0.25`, `<= 0.02`: the threshold as gates.toml sets it, or `-`."""
        if self.threshold is None:
            return "-"
        return f"{'>=' if self.at_least else '<='} {threshold_text(self.threshold)}"

    def value_text(self) -> str:
        """The value with k/n for a rate, and with enough digits to differ from the threshold
        it is compared with: 11/526 = 0.0209 against <= 0.02, never 0.02 against 0.02."""
        value = self.value
        if value.n == 0:
            return "no data (n=0)"
        if math.isnan(self.point):
            return f"undefined n={value.n}"
        digits = distinct_digits(self.point, self.threshold)
        counts = f"{value.successes}/{value.n} = " if isinstance(value, Rate) else ""
        interval = (
            f" [{value.low:.2f}, {value.high:.2f}]"
            if not (math.isnan(value.low) or math.isnan(value.high))
            else " (no interval)"
        )
        return f"{counts}{self.point:.{digits}f}{interval} n={value.n}"

    def describe(self) -> str:
        limit = "no threshold" if self.threshold is None else f"gate {self.threshold_text()}"
        if self.threshold is not None and self.passed is None:
            limit += ", not evaluated: no data" if self.value.n == 0 else ", undefined"
        return f"{self.name}: {self.value_text()} ({limit})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            **self.value.as_dict(),
            "threshold": self.threshold,
            "direction": ">=" if self.at_least else "<=",
            "passed": self.passed,
        }


@dataclass(frozen=True)
class RateCeiling(Gate):
    """A ceiling on a rate over a handful of units (a probe's 3-8 items) that fails only
    when the rate is above it beyond chance: the one-sided exact binomial test of
    "rate > threshold" at `alpha`. On so few units a point value over the ceiling is as
    often a good judge's noise as bias: 3/8 at a 0.35 ceiling has p = 0.57."""

    alpha: float = 0.05

    @property
    def p_value(self) -> float:
        value = self.value
        if self.threshold is None or value.n == 0 or not isinstance(value, Rate):
            return math.nan
        test = scipy.stats.binomtest(value.successes, value.n, self.threshold, "greater")
        return float(test.pvalue)

    @property
    def passed(self) -> bool | None:
        p = self.p_value
        return None if math.isnan(p) else p >= self.alpha

    def as_dict(self) -> dict[str, Any]:
        return super().as_dict() | {"p_value": self.p_value, "alpha": self.alpha}


def not_evaluated(gate: Any) -> bool:
    """A gate that should have been decided but had too few usable rows (no data, undefined).

    A floor without a threshold is informational, not unevaluated.
    """
    if gate.passed is not None or getattr(gate, "decides", True) is False:
        return False
    return not isinstance(gate, Gate) or gate.threshold is not None


def detected(row: JudgementRow) -> bool:
    return row.status == "ok" and bool(row.met)


def detection_rates(rows: list[JudgementRow]) -> dict[str, Rate]:
    """Detection per defect category (controls excluded)."""
    by_category: dict[str, list[bool]] = {}
    for row in rows:
        if not row.control:
            by_category.setdefault(row.category, []).append(detected(row))
    return {c: wilson(sum(hits), len(hits)) for c, hits in sorted(by_category.items())}


def control_false_positive_rate(rows: list[JudgementRow]) -> Rate:
    """Controls the judge moved: answered, but outside what a harmless change allows."""
    controls = [row for row in rows if row.control and row.status == "ok"]
    return wilson(sum(not row.met for row in controls), len(controls))


def error_rate(rows: list[JudgementRow]) -> Rate:
    return wilson(sum(row.status != "ok" for row in rows), len(rows))


def evaluate(rows: list[JudgementRow], gates: Gates | None) -> list[Gate]:
    """Every gate of one (judge, prompt version, model), thresholds from `gates.toml`."""
    gates = gates or Gates()
    results = [
        Gate(f"detection[{category}]", rate, gates.min_detection.get(category), True)
        for category, rate in detection_rates(rows).items()
    ]
    if any(row.control for row in rows):
        results.append(
            Gate(
                CONTROL_FALSE_POSITIVE,
                control_false_positive_rate(rows),
                gates.max_control_false_positive,
                False,
            )
        )
    results.append(Gate(ERROR_RATE, error_rate(rows), gates.max_error_rate, False))
    return results
