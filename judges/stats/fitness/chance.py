"""Chance tests: is a judge better than chance at what a set measures?

Every test here has chance itself as its threshold, so no floor a team writes can move it:

- planted detection: defects are flagged more often than controls (one-sided Fisher exact
  test; Newcombe hybrid-score interval of the difference in rates);
- agreement, correlation and ranking above chance: permutation tests, in
  judges.stats.fitness.permutation;
- score judges: defect items score lower than controls on the dimension their planted error
  targets (one-sided Mann-Whitney U; AUC = P(control scores higher) with ties half);
- an accuracy k/n against a chance rate (one-sided binomial tests, both ways).

Each returns a `ChanceTest` with its n (and k when it is a proportion), the statistic, its
interval, its value at chance and two one-sided p-values: `p_value` (better than chance) and
`p_worse` (worse than chance). A test whose n is so small that even a perfect judge could not
reach p < alpha is marked untestable: it is shown, but decides nothing. A constant judge is
never "not evaluated": its kappa and correlation are undefined, which is no agreement beyond
chance, so the test reads NOT FIT with p = 1.

`Fitness` collects the tests of one judge, prompt version and model: FIT when at least one
test could decide and every test that could decide shows the judge above chance. The words a
reader sees for them (reasons, weak spots, what a set cannot show) are written in
`judges.reports.sections.fitness`: numbers here, prose there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats

from judges.stats.estimates.intervals import wilson
from judges.stats.estimates.resample import NAN, as_1d, check_confidence, percentile_interval
from judges.stats.fitness.mann_whitney import mann_whitney_p

__all__ = [
    "ALPHA",
    "ChanceTest",
    "Fitness",
    "accuracy_vs_chance",
    "collect",
    "detection_vs_controls",
    "newcombe_difference",
    "scores_lower_on_defects",
]

ALPHA = 0.05
N_RESAMPLES = 2000
N_SPLITS = 9999


def _round(value: float) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


@dataclass(frozen=True)
class ChanceTest:
    """One test of a judge against chance, with everything a report must show."""

    name: str  # what was tested: "planted detection: cousin", "SME kappa.core_total"
    statistic: str  # what the value is: "detection - control FP", "kappa", "AUC"
    value: float
    low: float
    high: float
    chance: float  # the statistic's value for a judge at chance
    p_value: float  # one-sided: H1 the judge is better than chance
    p_worse: float  # one-sided: H1 the judge is worse than chance
    n: int
    k: int | None = None  # successes, when the statistic is a proportion
    detail: str = ""  # the counts in words: "defects flagged 12/20, controls 3/15"
    alpha: float = ALPHA
    testable: bool = True  # False: decides nothing (a perfect judge could not pass, or power)
    # The probability that a judge right on 90% of its judgements passes this test at its n
    # (judges.stats.fitness.power); None where not computed. A subgroup test decides only
    # where it is high enough, else it is a diagnostic.
    power: float | None = None
    subgroup: bool = False  # decides by its power (a category, dimension or field's test)

    @property
    def fit_ignoring_power(self) -> bool:
        """Above chance at p < alpha, whether or not the test decides."""
        return not math.isnan(self.value) and self.value > self.chance and self.p_value < self.alpha

    @property
    def fit(self) -> bool:
        """Significantly better than chance (a defined value above chance, p < alpha)."""
        return self.testable and self.fit_ignoring_power

    @property
    def worse_than_chance(self) -> bool:
        """Significantly worse than chance (p_worse < alpha): the judge is reversed."""
        return (
            self.testable
            and not math.isnan(self.value)
            and self.value < self.chance
            and self.p_worse < self.alpha
        )

    @property
    def diagnostic(self) -> bool:
        """Passable, but too weak to decide: a good judge would fail it too often (its
        `power` below the bar), so it is shown and decides nothing."""
        return not self.testable and self.power is not None

    @property
    def verdict(self) -> str:
        if self.diagnostic:
            return "diagnostic: fit" if self.fit_ignoring_power else "diagnostic: weak"
        if not self.testable:
            return "cannot decide"
        if self.fit:
            return "fit"
        return "worse than chance" if self.worse_than_chance else "not fit"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "statistic": self.statistic,
            "value": _round(self.value),
            "low": _round(self.low),
            "high": _round(self.high),
            "chance": self.chance,
            "p_value": _round(self.p_value),
            "p_worse": _round(self.p_worse),
            "n": self.n,
            "k": self.k,
            "detail": self.detail,
            "alpha": self.alpha,
            "testable": self.testable,
            "power": None if self.power is None else round(self.power, 4),
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class Fitness:
    """Every chance test of one judge, prompt version and model."""

    tests: tuple[ChanceTest, ...]

    @property
    def decisive(self) -> list[ChanceTest]:
        return [t for t in self.tests if t.testable]

    @property
    def failing(self) -> list[ChanceTest]:
        return [t for t in self.decisive if not t.fit]

    @property
    def undecided(self) -> bool:
        """Tests apply, but none can decide at this set's size: it cannot yet show either way."""
        return bool(self.tests) and not self.decisive

    @property
    def fit(self) -> bool:
        # No test at all is no evidence. Tests that none could decide (a set too small, or
        # items that all deserve one answer) fail nothing: the verdict is not held back by
        # what no judge could pass, and `cannot_show` says what the set cannot yet show.
        return bool(self.tests) and not self.failing

    @property
    def verdict(self) -> str:
        return "FIT" if self.fit else "NOT FIT"

    @property
    def diagnostics(self) -> list[ChanceTest]:
        return [t for t in self.tests if t.diagnostic]

    def false_alarm_bound(self) -> float:
        """At most how often a judge right on 90% of its judgements fails a deciding test
        here: each deciding test's chance to fail it (1 - power), summed (a union bound)."""
        return sum(1 - t.power for t in self.decisive if t.power is not None)

    def as_dict(self) -> dict[str, Any]:
        """The figures alone; the report adds the prose (judges.reports.sections.fitness)."""
        return {"verdict": self.verdict, "tests": [t.as_dict() for t in self.tests]}


# --------------------------------------------------------------------------- proportions


def newcombe_difference(
    k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """k1/n1 - k2/n2 with Newcombe's hybrid score interval (his method 10, from Wilson's)."""
    first, second = wilson(k1, n1, confidence), wilson(k2, n2, confidence)
    if n1 == 0 or n2 == 0:
        return NAN, NAN, NAN
    diff = first.rate - second.rate
    low = diff - math.hypot(first.rate - first.low, second.high - second.rate)
    high = diff + math.hypot(first.high - first.rate, second.rate - second.low)
    return diff, max(low, -1.0), min(high, 1.0)


def detection_vs_controls(
    detected: int,
    defects: int,
    false_positives: int,
    controls: int,
    *,
    name: str = "planted detection",
    alpha: float = ALPHA,
    confidence: float = 0.95,
) -> ChanceTest:
    """Defects flagged more often than controls: one-sided Fisher exact test.

    A judge that flags at random flags defects and controls at the same rate, so its
    difference is 0 whatever its rate. Untestable when even every defect flagged and no
    control flagged would leave p >= alpha.
    """
    check_confidence(confidence)
    for k, n, what in ((detected, defects, "defects"), (false_positives, controls, "controls")):
        if n < 0 or not 0 <= k <= n:
            raise ValueError(f"need 0 <= flagged <= n for {what}, got {k}/{n}")
    diff, low, high = newcombe_difference(detected, defects, false_positives, controls, confidence)
    detail = f"defects flagged {detected}/{defects}, controls flagged {false_positives}/{controls}"
    if defects == 0 or controls == 0:
        return ChanceTest(
            name, "detection - control FP", diff, low, high, 0.0, 1.0, 1.0, defects + controls,
            detected, detail, alpha, testable=False,
        )  # fmt: skip
    flagged = [[detected, defects - detected], [false_positives, controls - false_positives]]
    table = np.array(flagged)
    better = float(scipy.stats.fisher_exact(table, alternative="greater").pvalue)
    worse = float(scipy.stats.fisher_exact(table, alternative="less").pvalue)
    # The best a perfect judge can do: every defect flagged, no control flagged.
    best = 1.0 / math.comb(defects + controls, defects)
    return ChanceTest(
        name=name,
        statistic="detection - control FP",
        value=diff,
        low=low,
        high=high,
        chance=0.0,
        p_value=min(better, 1.0),
        p_worse=min(worse, 1.0),
        n=defects + controls,
        k=detected,
        detail=detail,
        alpha=alpha,
        testable=best < alpha,
    )


def accuracy_vs_chance(
    correct: int,
    n: int,
    chance: float = 0.5,
    *,
    name: str = "accuracy",
    alpha: float = ALPHA,
    confidence: float = 0.95,
) -> ChanceTest:
    """An accuracy k/n against a chance rate (0.5 for a pairwise choice), Wilson interval.

    `fit` is "better than chance" (one-sided exact binomial test, p_value < alpha);
    `worse_than_chance` is "significantly worse than chance" (p_worse < alpha), e.g. a
    pairwise judge that prefers the wrong answer. Untestable when n is too small for even
    n/n correct to reach p < alpha.
    """
    if not 0.0 < chance < 1.0:
        raise ValueError(f"chance must be in (0, 1), got {chance}")
    rate = wilson(correct, n, confidence)
    if n == 0:
        return ChanceTest(name, "accuracy", NAN, NAN, NAN, chance, 1.0, 1.0, 0, 0,
                          "nothing judged", alpha, testable=False)  # fmt: skip
    better = float(scipy.stats.binomtest(correct, n, chance, alternative="greater").pvalue)
    worse = float(scipy.stats.binomtest(correct, n, chance, alternative="less").pvalue)
    return ChanceTest(
        name=name,
        statistic="accuracy",
        value=rate.rate,
        low=rate.low,
        high=rate.high,
        chance=chance,
        p_value=min(better, 1.0),
        p_worse=min(worse, 1.0),
        n=n,
        k=correct,
        detail=f"{correct}/{n} correct",
        alpha=alpha,
        testable=chance**n < alpha,
    )


# --------------------------------------------------------------------------- score judges


def scores_lower_on_defects(
    defect_scores: Sequence[float],
    control_scores: Sequence[float],
    *,
    name: str = "scores",
    alpha: float = ALPHA,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> ChanceTest:
    """Defects score lower than controls: one-sided Mann-Whitney U, AUC with ties half.

    AUC = P(a control scores higher than a defect); 0.5 is chance. The interval is a
    percentile bootstrap that resamples defects and controls separately.
    """
    check_confidence(confidence)
    defects, controls = as_1d(defect_scores, "defect_scores"), as_1d(control_scores, "controls")
    n = int(defects.size + controls.size)
    detail = f"{defects.size} defects, {controls.size} controls"
    if defects.size == 0 or controls.size == 0:
        return ChanceTest(name, "AUC", NAN, NAN, NAN, 0.5, 1.0, 1.0, n, None, detail, alpha,
                          testable=False)  # fmt: skip
    auc = float(_auc(controls[None, :], defects[None, :])[0])
    if np.ptp(np.concatenate([defects, controls])) == 0:
        # One score for everything: no ordering at all, so no evidence either way.
        better = worse = 1.0
    else:
        # Exact over every split when there are at most N_SPLITS (the sets here are small and
        # full of tied scores, where the normal approximation is far off), else seeded draws.
        if min(defects.size, controls.size) < 2:  # scipy permutes samples of two or more only
            better, worse = (
                float(scipy.stats.mannwhitneyu(controls, defects, alternative=side).pvalue)
                for side in ("greater", "less")
            )
        else:
            better, worse = mann_whitney_p(controls, defects, N_SPLITS, seed)
    rng = np.random.default_rng(seed)
    resampled_c = controls[rng.integers(0, controls.size, (n_resamples, controls.size))]
    resampled_d = defects[rng.integers(0, defects.size, (n_resamples, defects.size))]
    low, high = percentile_interval(_auc(resampled_c, resampled_d), confidence)
    # A perfect separation without ties is the best a judge can do (the exact test's minimum).
    best = 1.0 / math.comb(n, int(defects.size))
    return ChanceTest(name, "AUC", auc, low, high, 0.5, min(better, 1.0), min(worse, 1.0), n,
                      None, detail, alpha, testable=best < alpha)  # fmt: skip


def _auc(controls: np.ndarray, defects: np.ndarray) -> np.ndarray:
    """Row-wise P(control > defect) + P(tie) / 2 for stacks of samples (R x nc, R x nd)."""
    diff = controls[:, :, None] - defects[:, None, :]
    return ((diff > 0).sum(axis=(1, 2)) + 0.5 * (diff == 0).sum(axis=(1, 2))) / (
        controls.shape[1] * defects.shape[1]
    )


def collect(tests: Iterable[ChanceTest]) -> Fitness:
    """The Fitness of a judge from its chance tests, in a stable order (by name)."""
    return Fitness(tuple(sorted(tests, key=lambda t: t.name)))
