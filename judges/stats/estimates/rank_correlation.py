"""Spearman's rho and Kendall's tau-b of many pairs of samples at once, one pair per row.

A bootstrap of a rank correlation draws thousands of resamples; `scipy.stats.spearmanr` and
`kendalltau` called once per resample spend their time in per-call overhead, not in the
arithmetic. These compute the same statistics on whole arrays: row i of the result is
scipy's value for row i of `x` and row i of `y` (tests/test_rank_correlation.py holds them
equal on random cases with ties, constant rows and NaN). As scipy's, a row with a NaN, or
with one side constant, has no correlation: NaN.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

__all__ = ["rowwise_kendall_tau_b", "rowwise_spearman"]

# Kendall compares every pair of columns: rows are taken this many cells of pairs at a time,
# so memory stays bounded whatever the number of rows.
_PAIR_CELLS_PER_CHUNK = 4_000_000


def _as_rows(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.ndim != 2 or xa.shape != ya.shape:
        raise ValueError(f"expected two 2-D arrays of one shape, got {xa.shape} and {ya.shape}")
    return xa, ya


def _defined(xa: np.ndarray, ya: np.ndarray) -> np.ndarray:
    """Rows with no NaN on either side."""
    return ~(np.isnan(xa).any(axis=1) | np.isnan(ya).any(axis=1))


def rowwise_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair: the Pearson correlation of the rows' ranks (ties
    averaged), NaN where a row holds a NaN or one side is constant."""
    xa, ya = _as_rows(x, y)
    result = np.full(xa.shape[0], np.nan)
    rows = _defined(xa, ya)
    if xa.shape[1] < 2 or not rows.any():
        return result
    rx = scipy.stats.rankdata(xa[rows], axis=1)
    ry = scipy.stats.rankdata(ya[rows], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    scale = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        result[rows] = np.where(scale > 1e-12, (rx * ry).sum(axis=1) / scale, np.nan)
    return result


def rowwise_kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair, NaN where a row holds a NaN or one side is constant.

    Over the pairs of columns, tau-b is sum(sign dx * sign dy) / sqrt(sum(sign dx ** 2) *
    sum(sign dy ** 2)): concordant minus discordant pairs over the geometric mean of the
    pairs untied on each side, as scipy's default variant."""
    xa, ya = _as_rows(x, y)
    result = np.full(xa.shape[0], np.nan)
    rows = np.flatnonzero(_defined(xa, ya))
    n = xa.shape[1]
    if n < 2 or rows.size == 0:
        return result
    first, second = np.triu_indices(n, k=1)
    step = max(1, _PAIR_CELLS_PER_CHUNK // first.size)
    for start in range(0, rows.size, step):
        chunk = rows[start : start + step]
        sx = np.sign(xa[chunk][:, first] - xa[chunk][:, second])
        sy = np.sign(ya[chunk][:, first] - ya[chunk][:, second])
        scale = np.sqrt((sx * sx).sum(axis=1) * (sy * sy).sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            result[chunk] = np.where(scale > 0, (sx * sy).sum(axis=1) / scale, np.nan)
    return result
