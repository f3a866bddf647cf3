"""Detection gates: per-category detection and control false positives, with Wilson intervals.

Pure functions over result rows; the plugin turns a failed gate into a failed test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.optimize
import scipy.special
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


@dataclass(frozen=True)
class RatePrior:
    """What is known of one category's rate before its own draws: Beta(a, b)."""

    a: float
    b: float


JEFFREYS = RatePrior(0.5, 0.5)


def shared_prior(counts: Sequence[tuple[int, int]]) -> RatePrior | None:
    """The Beta prior the judge's categories share, fitted to every category's (k, n) by
    maximum likelihood of the beta-binomial (empirical Bayes); None with fewer than two
    categories. Where the categories look alike it is strong (close to pooling them all),
    so one category that drew every defect is read as the judge's rate, not as a perfect
    one; where they differ it is weak and each category speaks for itself."""
    counts = [(k, n) for k, n in counts if n]
    if len(counts) < 2:
        return None
    successes = np.array([k for k, _ in counts], dtype=float)
    draws = np.array([n for _, n in counts], dtype=float)
    pooled = (successes.sum() + 0.5) / (draws.sum() + 1.0)

    def negative_log_likelihood(params: np.ndarray) -> float:
        mean, concentration = scipy.special.expit(params[0]), math.exp(params[1])
        a, b = mean * concentration, (1 - mean) * concentration
        return -float(np.sum(scipy.stats.betabinom.logpmf(successes, draws, a, b)))

    # Concentration from 1 (categories unrelated) to 10^4 (one rate): beyond that the
    # likelihood is flat and the prior is the pooled rate either way.
    start = np.array([scipy.special.logit(pooled), math.log(draws.sum())])
    bounds = [(-12.0, 12.0), (0.0, math.log(1e4))]
    fitted = scipy.optimize.minimize(negative_log_likelihood, start, bounds=bounds).x
    mean, concentration = scipy.special.expit(fitted[0]), math.exp(fitted[1])
    return RatePrior(float(mean * concentration), float((1 - mean) * concentration))


def predicted_bound(
    statistic: Rate | Estimate,
    at_least: bool,
    miss: float,
    others: Sequence[Rate] = (),
    prior: RatePrior | None = None,
) -> float | None:
    """The worst rate the next run of n items of an equally good judge reaches with chance
    `miss`: the quantile of the beta-binomial predictive of its count, the judge's rate
    unknown as the accepted draws (the statistic and `others`, more draws of the same items)
    show it, from the Jeffreys prior. With a `prior` shared by the judge's categories
    (shared_prior), the bound is the more cautious of the two predictions: a category that
    drew luckily is not held to its luck, and none is held above its own draws. An estimate
    (a standard deviation, a kappa, an alpha): None, since one run's interval understates
    the next run's spread at these sizes."""
    if not statistic.n or not isinstance(statistic, Rate):
        return None
    n = statistic.n
    k = statistic.successes + sum(other.successes for other in others)
    drawn = n + sum(other.n for other in others)
    tail = miss if at_least else 1 - miss
    counts = []
    for known in (JEFFREYS, prior) if prior is not None else (JEFFREYS,):
        predictive = scipy.stats.betabinom(n, known.a + k, known.b + drawn - k)
        counts.append(float(predictive.ppf(tail)))
    # A floor: the lower of the two counts; a ceiling: the higher.
    count = min(counts) if at_least else max(counts)
    return max(0.0, min(float(n), count)) / n
