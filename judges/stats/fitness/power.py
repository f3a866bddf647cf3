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
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import scipy.stats

from judges.stats.fitness.chance import ALPHA, ChanceTest
from judges.stats.fitness.permutation import spearman_p, within_disagreement

__all__ = [
    "GOOD",
    "MIN_POWER",
    "agreement_power",
    "decide_by_power",
    "detection_power",
    "repeats_power",
    "spearman_power",
    "within_budget",
]

GOOD = 0.9  # the share of judgements a good judge gets right
MIN_POWER = 0.95  # a subgroup test decides only where a good judge passes it this often
FALSE_ALARM_BUDGET = 0.05  # the chance a good judge fails any deciding test, at most
N_SIMULATIONS = 200
N_PERMUTATIONS = 400  # per simulated set: p-values to 1/401, enough to place p against alpha


def decide_by_power(test: ChanceTest, power: float) -> ChanceTest:
    """A subgroup test decides only where a good judge passes it with MIN_POWER; else it is a
    diagnostic. A test no judge could pass stays "cannot decide" (no power shown)."""
    if not test.testable:
        return test
    return dataclasses.replace(test, power=power, testable=power >= MIN_POWER, subgroup=True)


def within_budget(tests: Sequence[ChanceTest]) -> list[ChanceTest]:
    """Deciding tests whose chances of failing a good judge add up to FALSE_ALARM_BUDGET at
    most (a union bound: then such a judge is NOT FIT at most that often on these tests).

    Pooled tests (deciding whatever their power) count first; subgroup tests (those that
    decide by power) are kept most powerful first while the sum allows, the rest become
    diagnostics. Tests without a power figure (ranking, pairwise sets) are not counted.
    """
    spent = sum(1 - t.power for t in tests if t.testable and t.power is not None and not t.subgroup)
    ranked = sorted(
        (i for i, t in enumerate(tests) if t.testable and t.subgroup),
        key=lambda i: (-(tests[i].power or 0.0), tests[i].name),
    )
    kept = list(tests)
    for i in ranked:
        miss = 1 - (tests[i].power or 0.0)
        if spent + miss <= FALSE_ALARM_BUDGET + 1e-12:
            spent += miss
        else:
            kept[i] = dataclasses.replace(tests[i], testable=False)
    return kept


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


def _spacing(k: int, values: tuple[float, ...] | None) -> np.ndarray:
    """Each category's value (0..k-1 when not given): what quadratic weights measure."""
    at = np.arange(k, dtype=float) if values is None else np.asarray(values, dtype=float)
    if at.shape != (k,):
        raise ValueError(f"{k} categories need {k} values, got {len(at)}")
    return at


def _weights(k: int, quadratic: bool, values: tuple[float, ...] | None) -> np.ndarray:
    """The tests' weights: squared distances of the categories' values, or 1 for any two
    categories that differ."""
    if not quadratic:
        return 1.0 - np.eye(k)
    at = _spacing(k, values)
    return (at[:, None] - at[None, :]) ** 2


@lru_cache(maxsize=64)
def _shuffles(n: int, seed: int) -> np.ndarray:
    """One set of seeded permutations, shared by every simulated set of a power figure."""
    shuffles = np.argsort(np.random.default_rng(seed).random((N_PERMUTATIONS, n)), axis=1)
    shuffles.setflags(write=False)  # shared through the cache
    return shuffles


def _p_at_most(observed: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Per simulated set, the share of permutation draws with a disagreement at most the
    observed one (the observed counted as a draw): the test's p-value of agreement."""
    tol = 1e-12
    return (1 + (draws <= observed[:, None] + tol).sum(axis=1)) / (draws.shape[1] + 1)


def _repaired_disagreement(
    a: np.ndarray, b: np.ndarray, quadratic: bool, seed: int, at: np.ndarray
) -> np.ndarray:
    """(simulations, permutations): each simulated set's mean disagreement with b re-paired
    (`at`: each category's value, which quadratic weights measure).

    Quadratic: mean (a_i - b_j)^2 expands into sums and one product, so each re-pairing costs
    a dot product (one set at a time: a gather of every set at once is slower, not cache
    sized); nominal: the share of re-paired answers that differ.
    """
    shuffles = _shuffles(a.shape[1], seed)
    n = a.shape[1]
    if quadratic:
        af, bf = at[a], at[b]
        cross = np.stack([bf[s][shuffles] @ af[s] for s in range(a.shape[0])])
        squares = (af**2).sum(axis=1) + (bf**2).sum(axis=1)
        return (squares[:, None] - 2 * cross) / n
    return np.stack([(b[s][shuffles] != a[s]).mean(axis=1) for s in range(a.shape[0])])


@lru_cache(maxsize=1024)
def agreement_power(
    truth: tuple[int, ...],
    k: int,
    *,
    quadratic: bool,
    both_drawn: bool,
    values: tuple[float, ...] | None = None,
    alpha: float = ALPHA,
    good: float = GOOD,
    seed: int = 0,
) -> float:
    """P(kappa above chance at p < alpha) for a good judge whose right answers are `truth`
    (category indices 0..k-1, in order for quadratic weights; `values` the categories'
    values, which the weights measure, 0..k-1 when not given).

    both_drawn: both sides are draws (test-retest: two runs of the judge; SME agreement: an
    expert's labels are a draw too); else the other side is the truth itself. The
    permutation test is the one of `agreement_above_chance` (re-pairing keeps both
    marginals, so only the observed disagreement moves), run on every simulated set at once.
    """
    if k < 2 or len(set(truth)) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    w = _weights(k, quadratic, values)
    base = np.tile(np.asarray(truth), (N_SIMULATIONS, 1))
    a = _wrong(base, k, rng, good)
    b = _wrong(base, k, rng, good) if both_drawn else base
    pa = np.stack([np.bincount(r, minlength=k) for r in a]) / a.shape[1]
    pb = np.stack([np.bincount(r, minlength=k) for r in b]) / b.shape[1]
    expected = np.einsum("si,ij,sj->s", pa, w, pb)
    observed = w[a, b].mean(axis=1)
    draws = _repaired_disagreement(a, b, quadratic, seed, _spacing(k, values))
    p = _p_at_most(observed, draws)
    passed = (expected > 1e-15) & (observed < expected) & (p < alpha)
    return float(passed.mean())


def repeats_power(
    usual: tuple[int, ...],
    sizes: tuple[int, ...],
    k: int,
    *,
    quadratic: bool,
    values: tuple[float, ...] | None = None,
    alpha: float = ALPHA,
    good: float = GOOD,
    seed: int = 0,
) -> float:
    """P(Krippendorff's alpha above chance at p < alpha) for a good judge repeating each item,
    under the harder of two error structures: each repeat wrong on its own, or the errors
    stuck to items (see `_repeats_power`). A few noise items decide only where both hold."""
    return min(
        _repeats_power(
            usual, sizes, k, quadratic=quadratic, values=values, alpha=alpha, good=good,
            seed=seed, sticky=sticky,
        )
        for sticky in (False, True)
    )  # fmt: skip


@lru_cache(maxsize=1024)
def _repeats_power(
    usual: tuple[int, ...],
    sizes: tuple[int, ...],
    k: int,
    *,
    quadratic: bool,
    values: tuple[float, ...] | None,
    alpha: float,
    good: float,
    seed: int,
    sticky: bool = False,
) -> float:
    """P(Krippendorff's alpha above chance at p < alpha) for a good judge repeating each item:
    every repeat its usual answer (`usual`, one per item) with probability `good`. The test
    is `repeats_agree_above_chance`'s (every answer shuffled across items).

    sticky: the same mean error rate stuck to items, as a real judge's hard items are: each
    item is hard with probability 2 (1 - good), and a repeat of a hard item is wrong half
    the time, of any other never."""
    if k < 2 or len(set(usual)) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    w = _weights(k, quadratic, values)
    size = np.asarray(sizes)
    truth = np.repeat(np.asarray(usual), size)
    if sticky:
        hard = rng.random((N_SIMULATIONS, size.size)) < min(1.0, 2 * (1 - good))
        right = np.where(np.repeat(hard, size, axis=1), 0.5, 1.0)
        shift = rng.integers(1, k, (N_SIMULATIONS, truth.size))
        wrong = rng.random((N_SIMULATIONS, truth.size)) >= right
        answers = np.where(wrong, (truth + shift) % k, truth)
    else:
        answers = _wrong(np.tile(truth, (N_SIMULATIONS, 1)), k, rng, good)
    total = float(truth.size)
    shuffles = _shuffles(truth.size, seed)
    passed = 0
    for one in answers:
        counts = np.bincount(one, minlength=k).astype(float)
        expected = float(counts @ w @ counts) / (total * (total - 1))
        if expected <= 1e-15:
            continue  # one answer throughout: no agreement beyond chance to show
        observed = float(within_disagreement(one, size, w)) / total
        draws = within_disagreement(one[shuffles], size, w) / total
        p = _p_at_most(np.array([observed]), draws[None, :])[0]
        passed += bool(observed < expected and p < alpha)
    return passed / N_SIMULATIONS


@lru_cache(maxsize=1024)
def spearman_power(
    truth: tuple[float, ...],
    *,
    both_drawn: bool = False,
    alpha: float = ALPHA,
    good: float = GOOD,
    seed: int = 0,
) -> float:
    """P(Spearman's rho with `truth` above chance at p < alpha) for a good judge: each answer
    the truth with probability `good`, else another of the values the truth takes.

    both_drawn: the other side is a draw too (an expert's labels, each right with `good`),
    not the truth itself."""
    values = np.unique(np.asarray(truth, dtype=float))
    if values.size < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    base = np.searchsorted(values, np.asarray(truth, dtype=float))
    passed = 0
    for s in range(N_SIMULATIONS):
        judge = values[_wrong(base, values.size, rng, good)]
        other = values[_wrong(base, values.size, rng, good)] if both_drawn else values[base]
        if np.ptp(judge) == 0 or np.ptp(other) == 0:
            continue
        value, better, _ = spearman_p(judge, other, N_PERMUTATIONS, seed + s)
        passed += bool(better < alpha and value > 0)
    return passed / N_SIMULATIONS
