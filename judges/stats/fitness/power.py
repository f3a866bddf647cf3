"""How often a good judge passes a chance test: the power that lets a test decide.

A chance test that a judge right on 90% of its judgements fails one time in eight is no
evidence against a judge that fails it: it raises false alarms. A per-category, per-facet or
per-dimension test (and the noise, retest and SME tests of a field) therefore decides only
where such a judge passes it with probability MIN_POWER or more at the set's size; elsewhere
it is shown as a diagnostic. "A good judge" here: each judgement right with probability GOOD,
independently, and a wrong one any other value the field takes, each alike (an error far off
as likely as a near one: the harder case for agreement tests, so the figure errs low).

Detection and defect-score tests are exact (every outcome of the two binomials, each through
the same one-sided Fisher test; on right/wrong scores the Mann-Whitney permutation test is
that test). The agreement tests are seeded simulations through the tests' own permutation
p-values.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np
import scipy.stats

from judges.stats.fitness.chance import ALPHA, ChanceTest
from judges.stats.fitness.permutation import pairing_p, repeats_p, spearman_p

__all__ = [
    "GOOD",
    "MIN_POWER",
    "agreement_power",
    "decide_by_power",
    "detection_power",
    "repeats_power",
    "spearman_power",
]

GOOD = 0.9  # the share of judgements a good judge gets right
MIN_POWER = 0.95  # a subgroup test decides only where a good judge passes it this often
N_SIMULATIONS = 200
N_PERMUTATIONS = 400  # per simulated set: p-values to 1/401, enough to place p against alpha


def decide_by_power(test: ChanceTest, power: float) -> ChanceTest:
    """A subgroup test decides only where a good judge passes it with MIN_POWER; else it is a
    diagnostic. A test no judge could pass stays "cannot decide" (no power shown)."""
    if not test.testable:
        return test
    return dataclasses.replace(test, power=power, testable=power >= MIN_POWER)


@lru_cache(maxsize=4096)
def detection_power(defects: int, controls: int, alpha: float = ALPHA, good: float = GOOD) -> float:
    """P(one-sided Fisher p < alpha) when each defect is flagged and each control held with
    probability `good`: exact, over every (flagged defects, flagged controls)."""
    if defects == 0 or controls == 0:
        return 0.0
    k1 = np.arange(defects + 1)[:, None]
    k2 = np.arange(controls + 1)[None, :]
    # Fisher's one-sided p: P(at least k1 of the k1 + k2 flags fall on the defects).
    p = scipy.stats.hypergeom.sf(k1 - 1, defects + controls, k1 + k2, defects)
    outcome = scipy.stats.binom.pmf(k1, defects, good) * scipy.stats.binom.pmf(
        k2, controls, 1 - good
    )
    return float(min(1.0, (outcome * (p < alpha)).sum()))


def _wrong(truth: np.ndarray, k: int, rng: np.random.Generator, good: float) -> np.ndarray:
    """Each answer right (its truth) with probability `good`, else one of the other k - 1."""
    shift = rng.integers(1, k, truth.shape)  # never 0: a wrong answer is another value
    wrong = rng.random(truth.shape) >= good
    return np.where(wrong, (truth + shift) % k, truth)


def _weights(k: int, quadratic: bool) -> np.ndarray:
    values = np.arange(k, dtype=float)
    return (values[:, None] - values[None, :]) ** 2 if quadratic else 1.0 - np.eye(k)


@lru_cache(maxsize=1024)
def agreement_power(
    truth: tuple[int, ...],
    k: int,
    *,
    quadratic: bool,
    both_drawn: bool,
    alpha: float = ALPHA,
    good: float = GOOD,
    seed: int = 0,
) -> float:
    """P(kappa above chance at p < alpha) for a good judge whose right answers are `truth`
    (category indices 0..k-1, in order for quadratic weights).

    both_drawn: test-retest (both runs are the judge's draws); else the other side is the
    truth itself (agreement with SME labels).
    """
    if k < 2 or len(set(truth)) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    w = _weights(k, quadratic)
    base = np.asarray(truth)
    passed = 0
    for s in range(N_SIMULATIONS):
        a = _wrong(base, k, rng, good)
        b = _wrong(base, k, rng, good) if both_drawn else base
        if np.unique(a).size < 2 or np.unique(b).size < 2:
            continue  # no agreement beyond chance to show: a fail
        better, _ = pairing_p(a, b, w, N_PERMUTATIONS, seed + s)
        passed += bool(better < alpha)  # p < alpha only when kappa is above 0
    return passed / N_SIMULATIONS


@lru_cache(maxsize=1024)
def repeats_power(
    usual: tuple[int, ...],
    sizes: tuple[int, ...],
    k: int,
    *,
    quadratic: bool,
    alpha: float = ALPHA,
    good: float = GOOD,
    seed: int = 0,
) -> float:
    """P(Krippendorff's alpha above chance at p < alpha) for a good judge repeating each item:
    every repeat its usual answer (`usual`, one per item) with probability `good`."""
    if k < 2 or len(set(usual)) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    w = _weights(k, quadratic)
    size = np.asarray(sizes)
    truth = np.repeat(np.asarray(usual), size)
    passed = 0
    for s in range(N_SIMULATIONS):
        answers = _wrong(truth, k, rng, good)
        if np.unique(answers).size < 2:
            continue
        value, better, _ = repeats_p(answers, size, w, N_PERMUTATIONS, seed + s)
        passed += bool(better < alpha and value > 0)
    return passed / N_SIMULATIONS


@lru_cache(maxsize=1024)
def spearman_power(
    truth: tuple[float, ...], *, alpha: float = ALPHA, good: float = GOOD, seed: int = 0
) -> float:
    """P(Spearman's rho with `truth` above chance at p < alpha) for a good judge: each answer
    the truth with probability `good`, else another of the values the truth takes."""
    values = np.unique(np.asarray(truth, dtype=float))
    if values.size < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    base = np.searchsorted(values, np.asarray(truth, dtype=float))
    passed = 0
    for s in range(N_SIMULATIONS):
        judge = values[_wrong(base, values.size, rng, good)]
        if np.ptp(judge) == 0:
            continue
        value, better, _ = spearman_p(judge, values[base], N_PERMUTATIONS, seed + s)
        passed += bool(better < alpha and value > 0)
    return passed / N_SIMULATIONS
