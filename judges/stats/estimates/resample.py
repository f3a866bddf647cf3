"""Bootstrap and input helpers shared by the estimates and the agreement coefficients.

Every statistic of one call reuses one resample index matrix; nan inputs are refused, since a
nan score is a failed judgement that must be dropped explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "NAN",
    "as_1d",
    "as_pair",
    "bootstrap_over_counts",
    "check_confidence",
    "index_counts",
    "percentile_interval",
    "resample_indices",
]

NAN = float("nan")


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def as_1d(values: Sequence[float] | np.ndarray, name: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    # A nan score is a failed judgement; silently averaging it away would hide the failure.
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains nan; drop failed judgements explicitly first")
    return arr


def as_pair(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = as_1d(x, "x"), as_1d(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"paired inputs differ in length: {xa.size} != {ya.size}")
    return xa, ya


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of a bootstrap distribution, ignoring undefined (nan) resamples.

    Resamples can be degenerate (e.g. a constant resample has no rank correlation); dropping
    them is the usual convention and keeps the interval defined when the data are not.
    """
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return NAN, NAN
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """One (n_resamples, n) index matrix; every statistic of a call reuses it."""
    # The narrowest integer type that holds n: drawing int16 is several times faster.
    dtype = np.int16 if n <= np.iinfo(np.int16).max else np.int64
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n), dtype=dtype)


def index_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """Turn an index matrix into per-resample multiplicities, shape (n_resamples, n).

    Offsetting each row by row * n lets one bincount do all rows at once.
    """
    rows = idx.shape[0]
    flat = (idx + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n)


def bootstrap_over_counts(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> tuple[float, float]:
    """Bootstrap a statistic that is a function of per-item multiplicities (R x n) -> (R,)."""
    counts = index_counts(resample_indices(n, n_resamples, seed), n).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        samples = statistic(counts)
    return percentile_interval(samples, confidence)
