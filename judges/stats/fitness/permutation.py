"""Permutation tests against chance: agreement, rank correlation and ranking.

A judge at chance is the same judge with its answers re-paired to the items at random (its
marginals kept) or, for a ranking, a random ordering of the same documents. Each draw is
seeded, so a rerun gives the same p-value; the observed pairing counts as one draw, so p is
never 0 (Phipson and Smyth, 2010). Results are `judges.stats.fitness.chance.ChanceTest`s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import scipy.stats

from judges.stats.estimates.intervals import bootstrap_mean
from judges.stats.estimates.rank_correlation import rowwise_spearman
from judges.stats.estimates.resample import (
    NAN,
    as_1d,
    as_pair,
    bootstrap_over_counts,
    check_confidence,
    percentile_interval,
)
from judges.stats.fitness.chance import ALPHA, N_RESAMPLES, ChanceTest

__all__ = [
    "agreement_above_chance",
    "ranking_above_random",
    "repeats_agree_above_chance",
    "spearman_above_chance",
]

N_PERMUTATIONS = 2000

Weights = Literal["quadratic", "nominal"]


def _permutation_p(observed: float, draws: np.ndarray) -> tuple[float, float]:
    """One-sided p-values of observed against permutation draws: (at least, at most).

    The observed pairing counts as one draw, so p is never 0 (Phipson and Smyth, 2010).
    """
    tol = 1e-12  # equal values computed in a different order must count as equal
    at_least = int(np.count_nonzero(draws >= observed - tol))
    at_most = int(np.count_nonzero(draws <= observed + tol))
    total = draws.size + 1
    return (1 + at_least) / total, (1 + at_most) / total


def _shuffled(n: int, n_permutations: int, seed: int) -> np.ndarray:
    return np.argsort(np.random.default_rng(seed).random((n_permutations, n)), axis=1)


def _weights(values: np.ndarray, weights: Weights) -> np.ndarray:
    if weights == "quadratic":
        return (values[:, None] - values[None, :]) ** 2
    if weights == "nominal":
        return 1.0 - np.eye(values.size)
    raise ValueError(f"weights must be 'quadratic' or 'nominal', got {weights!r}")


def _kappa_of_confusions(confusions: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted kappa 1 - observed/expected disagreement of a stack of confusion matrices."""
    total = confusions.sum(axis=(1, 2))
    rows = confusions.sum(axis=2) / total[:, None]
    cols = confusions.sum(axis=1) / total[:, None]
    observed = np.einsum("rij,ij->r", confusions, w) / total
    expected = np.einsum("ri,ij,rj->r", rows, w, cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - observed / expected
    kappa[expected <= 1e-15] = np.nan  # one shared category: no disagreement expected
    return kappa


def agreement_above_chance(
    a: Sequence[Any],
    b: Sequence[Any],
    *,
    name: str = "agreement",
    weights: Weights = "quadratic",
    alpha: float = ALPHA,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> ChanceTest:
    """Cohen's kappa (quadratic on numeric values, or nominal) above 0, paired over items.

    The p-value re-pairs b with a at random n_permutations times: the marginals stay fixed,
    so each draw is a judge that uses the same labels as often but at random. The interval is
    a percentile bootstrap over pairs. A rater that uses one value throughout has no
    agreement beyond chance: kappa nan, p = 1, NOT FIT.
    """
    check_confidence(confidence)
    if len(a) != len(b):
        raise ValueError(f"paired inputs differ in length: {len(a)} != {len(b)}")
    n = len(a)
    statistic = "kappa" if weights == "nominal" else "quadratic kappa"
    if weights == "quadratic":
        xa, xb = as_pair(a, b)
        cats = np.unique(np.concatenate([xa, xb]))
    else:
        xa, xb = np.asarray([str(v) for v in a]), np.asarray([str(v) for v in b])
        cats = np.unique(np.concatenate([xa, xb]))
    detail = f"{n} pairs"
    w = _weights(cats.astype(float) if weights == "quadratic" else cats, weights)
    k = cats.size
    ia, ib = np.searchsorted(cats, xa), np.searchsorted(cats, xb)
    if n < 2 or np.unique(xa).size < 2 or np.unique(xb).size < 2:
        # A side that varies while the other is constant is no repeatable judge: that decides
        # (NOT FIT) where a perfect judge answering the varying side twice would pass.
        constant = "one side uses a single value" if n >= 2 else "fewer than 2 pairs"
        testable = n >= 2 and perfect_agreement_passes(ia, ib, w, alpha, n_permutations, seed)
        return ChanceTest(name, statistic, NAN, NAN, NAN, 0.0, 1.0, 1.0, n, None,
                          f"{detail}; {constant}: no agreement beyond chance",
                          alpha, testable=testable)  # fmt: skip
    one_hot = np.zeros((n, k * k))
    one_hot[np.arange(n), ia * k + ib] = 1.0

    def kappa(counts: np.ndarray) -> np.ndarray:
        return _kappa_of_confusions((counts @ one_hot).reshape(-1, k, k), w)

    value = float(kappa(np.ones((1, n)))[0])
    better, worse = pairing_p(ia, ib, w, n_permutations, seed)
    low, high = bootstrap_over_counts(
        kappa, n, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    testable = perfect_agreement_passes(ia, ib, w, alpha, n_permutations, seed)
    if not testable:
        detail += "; even a perfect judge could not pass at this n: decides nothing"
    return ChanceTest(name, statistic, value, low, high, 0.0, better, worse, n, None, detail,
                      alpha, testable=testable)  # fmt: skip


def pairing_p(
    ia: np.ndarray, ib: np.ndarray, w: np.ndarray, n_permutations: int, seed: int
) -> tuple[float, float]:
    """Permutation p-values (above, below chance) of the weighted kappa of category indices
    ia and ib (each using at least two categories), b re-paired with a at random.

    Re-pairing keeps both marginals, hence the expected disagreement: only the observed
    disagreement changes from draw to draw.
    """
    n, k = ia.size, w.shape[0]
    pa, pb = np.bincount(ia, minlength=k) / n, np.bincount(ib, minlength=k) / n
    expected = float(pa @ w @ pb)
    value = 1.0 - float(w[ia, ib].mean()) / expected
    observed = w[ia[None, :], ib[_shuffled(n, n_permutations, seed)]].mean(axis=1)
    return _permutation_p(value, 1.0 - observed / expected)


def perfect_agreement_passes(
    ia: np.ndarray, ib: np.ndarray, w: np.ndarray, alpha: float, n_permutations: int, seed: int
) -> bool:
    """Could a perfect judge pass this test? One whose second answers equal its first (or its
    first its second) on every item: decided on either side's own values, so a side that
    varies while the other is constant still decides (and fails)."""
    sides = [side for side in (ia, ib) if np.unique(side).size >= 2]
    return any(pairing_p(side, side, w, n_permutations, seed)[0] < alpha for side in sides)


def spearman_above_chance(
    x: Sequence[float],
    y: Sequence[float],
    *,
    name: str = "Spearman",
    alpha: float = ALPHA,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> ChanceTest:
    """Spearman's rho above 0: permutation test on the ranks, bootstrap interval over pairs.

    A constant rater has no rank correlation: rho nan, p = 1, NOT FIT.
    """
    check_confidence(confidence)
    xa, ya = as_pair(x, y)
    n = int(xa.size)
    # A perfect judge ranks as the other side does: decided on either side's own ranks.
    testable = n >= 3 and any(
        np.ptp(side) > 0 and spearman_p(side, side, n_permutations, seed)[1] < alpha
        for side in (xa, ya)
    )
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        why = "fewer than 3 pairs" if n < 3 else "one side is constant"
        return ChanceTest(name, "Spearman", NAN, NAN, NAN, 0.0, 1.0, 1.0, n, None,
                          f"{n} pairs; {why}: no correlation beyond chance", alpha,
                          testable=testable)  # fmt: skip
    value, better, worse = spearman_p(xa, ya, n_permutations, seed)
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    samples = rowwise_spearman(xa[idx], ya[idx])
    low, high = percentile_interval(samples, confidence)
    detail = f"{n} pairs" + ("" if testable else "; even a perfect judge could not pass at this n")
    return ChanceTest(name, "Spearman", value, low, high, 0.0, better, worse, n, None,
                      detail, alpha, testable=testable)  # fmt: skip


def spearman_p(
    xa: np.ndarray, ya: np.ndarray, n_permutations: int, seed: int
) -> tuple[float, float, float]:
    """Spearman's rho of two non-constant samples and its permutation p-values."""
    n = xa.size
    rx = scipy.stats.rankdata(xa) - (n + 1) / 2
    ry = scipy.stats.rankdata(ya) - (n + 1) / 2
    scale = math.sqrt(float(rx @ rx) * float(ry @ ry))
    value = float(rx @ ry) / scale
    draws = ry[_shuffled(n, n_permutations, seed)] @ rx / scale
    better, worse = _permutation_p(value, draws)
    return value, better, worse


def ranking_above_random(
    judge_values: Sequence[float],
    random_means: Sequence[float] | np.ndarray,
    random_value: float,
    *,
    name: str = "ranking",
    statistic: str = "nDCG@10",
    alpha: float = ALPHA,
    seed: int = 0,
    confidence: float = 0.95,
) -> ChanceTest:
    """A ranking metric's mean over queries against random rankings of the same documents.

    judge_values: the metric per query; random_means: the mean over queries of each seeded
    draw of random rankings (judges.stats.ranking.random_draws.draw_metrics, averaged per draw);
    random_value: its exact expectation. p = share of draws at least (at most) as good.
    """
    values = as_1d(judge_values, "judge_values")
    draws = as_1d(random_means, "random_means")
    if values.size == 0 or draws.size == 0:
        return ChanceTest(name, statistic, NAN, NAN, NAN, random_value, 1.0, 1.0, 0, None,
                          "no query ranked", alpha, testable=False)  # fmt: skip
    judge = bootstrap_mean(values, seed=seed, confidence=confidence)
    better, worse = _permutation_p(judge.value, draws)
    # The best random mean stands in for a perfect judge's: when random rankings reach it
    # this often (one tiny query), no judge could beat them significantly.
    best = (1 + int(np.count_nonzero(draws >= draws.max() - 1e-12))) / (draws.size + 1)
    return ChanceTest(
        name=name,
        statistic=statistic,
        value=judge.value,
        low=judge.low,
        high=judge.high,
        chance=round(float(random_value), 4),
        p_value=better,
        p_worse=worse,
        n=int(values.size),
        detail=f"{values.size} queries, {draws.size} random rankings",
        alpha=alpha,
        testable=best < alpha,
    )


def repeats_agree_above_chance(
    units: Sequence[Sequence[Any]],
    *,
    name: str = "repeats",
    weights: Weights = "quadratic",
    alpha: float = ALPHA,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> ChanceTest:
    """Repeated answers on the same item agree beyond chance: Krippendorff's alpha above 0.

    units: the values of each item's repeats (interval metric on numbers with "quadratic",
    nominal otherwise). The p-value shuffles every value across items and repeats, keeping
    the pool: a judge that answers at random from its usual answers. The interval resamples
    items. Items with fewer than two values are left out.

    The test decides only where a perfect judge could pass it: one that gives every repeat
    of an item that item's most common answer. Items that all deserve the same answer (no
    between-item variance), or too few of them, cannot show agreement beyond chance however
    repeatable the judge is: such a test says "cannot decide", never NOT FIT.
    """
    check_confidence(confidence)
    kept = [list(u) for u in units if len(u) >= 2]
    n = len(kept)
    statistic = "alpha (interval)" if weights == "quadratic" else "alpha (nominal)"
    pool = [v for unit in kept for v in unit]
    detail = f"{n} items, {len(pool)} answers"
    if n < 2 or len({str(v) for v in pool}) < 2:
        why = "fewer than 2 items" if n < 2 else "one value throughout"
        return ChanceTest(name, statistic, NAN, NAN, NAN, 0.0, 1.0, 1.0, n, None,
                          f"{detail}; {why}: cannot decide", alpha,
                          testable=False)  # fmt: skip
    numeric = weights == "quadratic"
    values = as_1d(pool, "units") if numeric else np.asarray([str(v) for v in pool])
    cats = np.unique(values)
    w = _weights(cats.astype(float) if weights == "quadratic" else cats, weights)
    index = np.searchsorted(cats, values)
    sizes = np.array([len(unit) for unit in kept])
    value, better, worse = repeats_p(index, sizes, w, n_permutations, seed)
    testable = perfect_repeats_pass(index, sizes, w, alpha, n_permutations, seed)
    if not testable:
        detail += (
            "; cannot decide: the items' usual answers differ too little (or too few items) "
            "for even a perfect judge to pass"
        )
    low, high = _alpha_interval(index, sizes, w, n_resamples, seed, confidence)
    return ChanceTest(name, statistic, value, low, high, 0.0, better, worse, n, None, detail,
                      alpha, testable=testable)  # fmt: skip


def within_pairs(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ordered pair of answers within an item, weighted 1 / (m_u - 1) as alpha's D_o."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    left, right, share = [], [], []
    for start, size in zip(starts, sizes, strict=True):
        for i in range(size):
            for j in range(size):
                if i != j:
                    left.append(start + i)
                    right.append(start + j)
                    share.append(1.0 / (size - 1))
    return np.array(left), np.array(right), np.array(share)


def within_disagreement(answers: np.ndarray, sizes: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per row of answers (category indices, items of `sizes` back to back): the sum over
    items of the weighted disagreement of every ordered pair within the item, each item's
    divided by m_u - 1 (alpha's D_o times the number of answers).

    Within one item, the pairs' sum is c' w c (c: the item's counts per category, w's
    diagonal 0), so a row costs one count per category and item, not one look-up per pair:
    a permutation test's thousands of rows at once.
    """
    members = np.repeat(np.eye(sizes.size), sizes, axis=0)  # answer -> its item
    counts = np.stack([(answers == c).astype(float) @ members for c in range(w.shape[0])])
    return np.einsum("c...u,cd,d...u->...u", counts, w, counts) @ (1.0 / (sizes - 1))


def repeats_p(
    index: np.ndarray, sizes: np.ndarray, w: np.ndarray, n_permutations: int, seed: int
) -> tuple[float, float, float]:
    """Krippendorff's alpha of answers (category indices, items of `sizes` back to back) and
    its permutation p-values (above, below chance): every answer shuffled across items."""
    total = float(index.size)
    counts = np.bincount(index, minlength=w.shape[0]).astype(float)
    expected = float(counts @ w @ counts) / (total * (total - 1))
    value = float(1.0 - within_disagreement(index, sizes, w) / total / expected)
    shuffled = index[_shuffled(index.size, n_permutations, seed)]
    draws = 1.0 - within_disagreement(shuffled, sizes, w) / total / expected
    better, worse = _permutation_p(value, draws)
    return value, better, worse


def usual_answers(index: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Each item's answers replaced by its most common one (ties: the lowest category)."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    modes = [
        int(np.argmax(np.bincount(index[start : start + size])))
        for start, size in zip(starts, sizes, strict=True)
    ]
    return np.repeat(np.array(modes), sizes)


def perfect_repeats_pass(
    index: np.ndarray, sizes: np.ndarray, w: np.ndarray, alpha: float, n_permutations: int,
    seed: int,
) -> bool:  # fmt: skip
    """Could a perfect judge, answering each item its usual answer every time, pass?"""
    perfect = usual_answers(index, sizes)
    if np.unique(perfect).size < 2:
        return False  # every item deserves one answer: no agreement beyond chance to show
    return repeats_p(perfect, sizes, w, n_permutations, seed)[1] < alpha


def _alpha_interval(
    index: np.ndarray, sizes: np.ndarray, w: np.ndarray, n_resamples: int, seed: int,
    confidence: float,
) -> tuple[float, float]:  # fmt: skip
    """Bootstrap over items: per item, its disagreement sum and its value counts."""
    n = sizes.size
    li, ri, sh = within_pairs(sizes)
    unit_observed = np.zeros(n)
    unit_counts = np.zeros((n, w.shape[0]))
    np.add.at(
        unit_observed, np.repeat(np.arange(n), sizes * (sizes - 1)), w[index[li], index[ri]] * sh
    )
    np.add.at(unit_counts, (np.repeat(np.arange(n), sizes), index), 1.0)

    def alpha_of(counts_r: np.ndarray) -> np.ndarray:
        answers = counts_r @ unit_counts
        size = answers.sum(axis=1)
        d_o = (counts_r @ unit_observed) / size
        d_e = np.einsum("ri,ij,rj->r", answers, w, answers) / (size * (size - 1))
        return np.where(d_e > 1e-15, 1.0 - d_o / d_e, np.nan)

    return bootstrap_over_counts(
        alpha_of, n, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
