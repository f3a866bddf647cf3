"""Agreement between two raters: exact/adjacent agreement, rank correlations, kappa, alpha.

Each returns a `Rate` (Wilson interval) or an `Estimate` (percentile bootstrap over items)
with its n; the resampling comes from judges.stats.estimates.resample.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import krippendorff
import numpy as np
import scipy.stats

from judges.stats.estimates.intervals import Estimate, Rate, wilson
from judges.stats.estimates.resample import (
    NAN,
    as_pair,
    bootstrap_over_counts,
    check_confidence,
    index_counts,
    percentile_interval,
    resample_indices,
)

__all__ = [
    "adjacent_agreement",
    "exact_agreement",
    "kendall_tau",
    "krippendorff_alpha_ordinal",
    "quadratic_kappa",
    "quadratic_kappa_change",
    "spearman",
]


def exact_agreement(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = 0.95
) -> Rate:
    """Share of pairs with identical ratings, with a Wilson interval."""
    return adjacent_agreement(a, b, tolerance=0, confidence=confidence)


def adjacent_agreement(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    tolerance: float = 1,
    confidence: float = 0.95,
) -> Rate:
    """Share of pairs with |a - b| <= tolerance, with a Wilson interval."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    xa, ya = as_pair(a, b)
    hits = int(np.count_nonzero(np.abs(xa - ya) <= tolerance))
    return wilson(hits, int(xa.size), confidence)


# --------------------------------------------------------------------------- correlations


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row pair; nan where a row is constant."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    num = (xc * yc).sum(axis=1)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    # Ranks of a constant row are all equal, so tiny float residue must not fake a correlation.
    r[den <= 1e-12] = np.nan
    return np.clip(r, -1.0, 1.0)


def _quiet_point(fn: Callable[[], float]) -> float:
    with warnings.catch_warnings():
        # scipy warns on constant input and returns nan, which is exactly what we report.
        warnings.simplefilter("ignore")
        return float(fn())


def spearman(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Spearman's rho with a percentile bootstrap interval over pairs."""
    check_confidence(confidence)
    xa, ya = as_pair(x, y)
    n = int(xa.size)
    if n < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Estimate(NAN, NAN, NAN, n)
    value = _quiet_point(lambda: scipy.stats.spearmanr(xa, ya).statistic)
    idx = resample_indices(n, n_resamples, seed)
    # Re-rank inside every resample (ties averaged), then Pearson on the ranks, row by row.
    counts = index_counts(idx, n)
    rx, ry = _resample_ranks(xa, idx, counts), _resample_ranks(ya, idx, counts)
    low, high = percentile_interval(_rowwise_pearson(rx, ry), confidence)
    return Estimate(value, low, high, n)


def _resample_ranks(values: np.ndarray, idx: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """`rankdata(values[idx], axis=1)`, ties averaged, from each resample's multiplicities:
    a value's rank is the draws below it plus (the draws equal to it + 1) / 2, two matrix
    products for every resample at once instead of a sort per resample (exact: halves)."""
    below = (values[:, None] < values[None, :]).astype(float)  # [j, i]: j ranks below i
    equal = (values[:, None] == values[None, :]).astype(float)
    drawn = counts.astype(float)  # float operands: a BLAS product, not numpy's integer loop
    ranks = drawn @ below + (drawn @ equal + 1.0) / 2.0
    return np.take_along_axis(ranks, idx.astype(np.intp), axis=1)


def _sign_matrix(v: np.ndarray) -> np.ndarray:
    return np.sign(v[:, None] - v[None, :])


def _kendall_tau_b_from_counts(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of every resample, given item multiplicities (R x n).

    Two copies of the same item tie in x and y, so they add nothing to concordance and only
    count in the tie terms. Hence each pair sum is a quadratic form w' M w / 2 over the
    original items, and all resamples cost three matrix products instead of a Python loop.
    Memory is three n x n matrices: fine for the hundreds of items a judge set holds.
    """
    sx, sy = _sign_matrix(x), _sign_matrix(y)
    concord = np.einsum("ri,ri->r", counts @ (sx * sy), counts) / 2.0
    untied_x = np.einsum("ri,ri->r", counts @ (sx != 0).astype(float), counts) / 2.0
    untied_y = np.einsum("ri,ri->r", counts @ (sy != 0).astype(float), counts) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = concord / np.sqrt(untied_x * untied_y)
    tau[(untied_x == 0) | (untied_y == 0)] = np.nan
    return np.clip(tau, -1.0, 1.0)


def kendall_tau(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Kendall's tau-b with a percentile bootstrap interval over pairs."""
    check_confidence(confidence)
    xa, ya = as_pair(x, y)
    n = int(xa.size)
    if n < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Estimate(NAN, NAN, NAN, n)
    value = _quiet_point(lambda: scipy.stats.kendalltau(xa, ya).statistic)
    low, high = bootstrap_over_counts(
        lambda w: _kendall_tau_b_from_counts(xa, ya, w),
        n,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    return Estimate(value, low, high, n)


# --------------------------------------------------------------------------- kappa and alpha


def _quadratic_kappa_from_confusions(confusions: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted kappa 1 - observed/expected disagreement for a stack of confusion matrices."""
    total = confusions.sum(axis=(1, 2))
    # A resample of items with no common judgement has an empty matrix: its kappa is NaN.
    with np.errstate(divide="ignore", invalid="ignore"):
        rows = confusions.sum(axis=2) / total[:, None]
        cols = confusions.sum(axis=1) / total[:, None]
        observed = np.einsum("rij,ij->r", confusions, weights) / total
        expected = np.einsum("ri,ij,rj->r", rows, weights, cols)
        kappa = 1.0 - observed / expected
    # No expected disagreement (one category used by both) leaves kappa undefined.
    kappa[expected <= 1e-15] = np.nan
    return kappa


def quadratic_kappa_of_confusions(confusions: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """Quadratic kappa of each of a stack of k x k confusion matrices over the category
    values `cats` (e.g. a cluster bootstrap's, summed from per-item confusions)."""
    cats = np.asarray(cats, dtype=float)
    weights = (cats[:, None] - cats[None, :]) ** 2
    return _quadratic_kappa_from_confusions(confusions, weights)


def _pair_cells(a: np.ndarray, b: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """One row per item, one-hot on its (a, b) cell of the k x k confusion matrix: a
    resample's confusion matrix is then its item counts times this."""
    k = cats.size
    cell = np.searchsorted(cats, a) * k + np.searchsorted(cats, b)
    one_hot = np.zeros((a.size, k * k))
    one_hot[np.arange(a.size), cell] = 1.0
    return one_hot


def quadratic_kappa(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    labels: Sequence[int] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Cohen's kappa with quadratic weights and a percentile bootstrap interval over pairs.

    Weights are (a - b)^2 on the label values themselves, so a gap in the scale (e.g. labels
    1, 2, 5) keeps its true size; `labels` fixes the category set and rejects strays.
    nan when both raters use a single, shared category (no disagreement is expected).
    """
    check_confidence(confidence)
    xa, xb = as_pair(a, b)
    n = int(xa.size)
    if n == 0:
        return Estimate(NAN, NAN, NAN, 0)
    cats = (
        np.unique(np.concatenate([xa, xb]))
        if labels is None
        else np.unique(np.asarray(labels, dtype=float))
    )
    stray = sorted(set(np.concatenate([xa, xb]).tolist()) - set(cats.tolist()))
    if stray:
        raise ValueError(f"ratings outside labels: {stray}")
    k = cats.size
    weights = (cats[:, None] - cats[None, :]) ** 2
    one_hot = _pair_cells(xa, xb, cats)

    def stat(counts: np.ndarray) -> np.ndarray:
        return _quadratic_kappa_from_confusions((counts @ one_hot).reshape(-1, k, k), weights)

    value = float(stat(np.ones((1, n)))[0])
    if math.isnan(value):
        return Estimate(NAN, NAN, NAN, n)
    low, high = bootstrap_over_counts(
        stat, n, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    return Estimate(value, low, high, n)


def quadratic_kappa_change(
    reference: Sequence[float] | np.ndarray,
    before: Sequence[float] | np.ndarray,
    after: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """kappa(after, reference) - kappa(before, reference), paired over items.

    Both kappas are computed on the same resampled items, so what the two raters share
    (the reference, an item's difficulty) cancels in the interval. nan when either kappa is
    undefined on the full sample; resamples where one is undefined are left out.
    """
    check_confidence(confidence)
    ref, xb = as_pair(reference, before)
    _, xa = as_pair(reference, after)
    n = int(ref.size)
    if n == 0:
        return Estimate(NAN, NAN, NAN, 0)
    cats = np.unique(np.concatenate([ref, xb, xa]))
    k = cats.size
    weights = (cats[:, None] - cats[None, :]) ** 2
    hot_before, hot_after = _pair_cells(xb, ref, cats), _pair_cells(xa, ref, cats)

    def stat(counts: np.ndarray) -> np.ndarray:
        kappa = [
            _quadratic_kappa_from_confusions((counts @ hot).reshape(-1, k, k), weights)
            for hot in (hot_after, hot_before)
        ]
        return kappa[0] - kappa[1]

    value = float(stat(np.ones((1, n)))[0])
    if math.isnan(value):
        return Estimate(NAN, NAN, NAN, n)
    low, high = bootstrap_over_counts(
        stat, n, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    return Estimate(value, low, high, n)


def krippendorff_alpha_ordinal(
    ratings: np.ndarray,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """Krippendorff's ordinal alpha (rows raters, columns units, nan missing).

    n is the number of pairable units (rated at least twice); the bootstrap resamples those
    units. nan when fewer than one pairable unit or only one value occurs.
    """
    check_confidence(confidence)
    data = np.asarray(ratings, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"ratings must be raters x units, got shape {data.shape}")
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    data = data[:, pairable]
    n = int(data.shape[1])
    observed = data[~np.isnan(data)]
    domain = np.unique(observed)
    if n == 0 or domain.size < 2:
        return Estimate(NAN, NAN, NAN, n)
    value = _quiet_point(
        lambda: krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    )
    # Per-unit value counts: a resample of units is just a resample of these rows.
    value_counts = (data.T[:, :, None] == domain[None, None, :]).sum(axis=1)
    idx = resample_indices(n, n_resamples, seed)
    samples = ordinal_alpha_of_resamples(value_counts, index_counts(idx, n))
    low, high = percentile_interval(samples, confidence)
    return Estimate(value, low, high, n)


def ordinal_alpha_of_resamples(value_counts: np.ndarray, multiplicity: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal alpha of each resample of units at once, as the krippendorff
    package computes it for one (which takes no batch): value_counts is units x values
    (every unit pairable), multiplicity resamples x units. Each unit's coincidences are
    summed once and weighted by how often a resample drew it; the ordinal distances follow
    each resample's own value totals. A resample that uses one value only is nan.
    """
    units, k = value_counts.shape
    counts = value_counts.astype(float)
    per_unit = _ordered_pairs(counts) / (counts.sum(axis=1) - 1)[:, None, None]
    coincidences = (multiplicity @ per_unit.reshape(units, k * k)).reshape(-1, k, k)
    totals = coincidences.sum(axis=1)  # per resample and value: n_v
    n = totals.sum(axis=1)
    # The ordinal distance of values c <= d: (n_c + ... + n_d - (n_c + n_d) / 2) ** 2.
    upto = np.cumsum(totals, axis=1)
    low, high = (
        np.minimum.outer(np.arange(k), np.arange(k)),
        np.maximum.outer(np.arange(k), np.arange(k)),
    )
    between = upto[:, high] - upto[:, low] + totals[:, low]
    distance = (between - (totals[:, :, None] + totals[:, None, :]) / 2) ** 2
    expected = _ordered_pairs(totals)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected /= (n - 1)[:, None, None]
        alpha = 1 - (coincidences * distance).sum(axis=(1, 2)) / (expected * distance).sum(
            axis=(1, 2)
        )
    used = (multiplicity @ (value_counts > 0)).astype(bool).sum(axis=1)
    return np.where(used >= 2, alpha, np.nan)


def _ordered_pairs(counts: np.ndarray) -> np.ndarray:
    """Per row of value counts (..., k): the ordered pairs of distinct answers with values
    (c, d), c_c c_d, less each answer paired with itself on the diagonal (..., k, k)."""
    return counts[..., :, None] * counts[..., None, :] - counts[..., :, None] * np.eye(
        counts.shape[-1]
    )
