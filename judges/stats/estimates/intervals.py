"""Estimates with their uncertainty: Wilson rates, bootstrap means, the McNemar test.

Every function is pure and returns a small frozen dataclass that carries the sample size it
was computed from, so a report can never show a number without its n. Empty input yields nan
values rather than an exception: an empty slice of a benchmark is a normal situation, not a bug.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.stats

from judges.stats.estimates.resample import (
    NAN,
    as_1d,
    check_confidence,
    index_counts,
    resample_indices,
)

__all__ = [
    "Estimate",
    "McNemar",
    "Rate",
    "bootstrap_mean",
    "bootstrap_mean_difference",
    "bootstrap_means_loop",
    "bootstrap_means_matrix",
    "mcnemar_exact",
    "minimum_detectable_difference",
    "wilson",
]

_MATRIX_BLOCK = 1000  # resamples per block in bootstrap_means_matrix


def _json_float(value: float) -> float | None:
    """Round for JSON; nan has no JSON spelling, so it becomes None (null)."""
    return None if math.isnan(value) else round(float(value), 4)


def _fmt(value: float) -> str:
    return "nan" if math.isnan(value) else f"{value:.2f}"


@dataclass(frozen=True)
class Rate:
    """A proportion with its Wilson interval."""

    successes: int
    n: int
    rate: float
    low: float
    high: float

    def as_dict(self) -> dict[str, int | float | None]:
        """JSON-ready view: floats rounded to 4 places, nan as None."""
        return {
            "successes": self.successes,
            "n": self.n,
            "rate": _json_float(self.rate),
            "low": _json_float(self.low),
            "high": _json_float(self.high),
        }

    def __str__(self) -> str:
        return f"{_fmt(self.rate)} [{_fmt(self.low)}, {_fmt(self.high)}] n={self.n}"


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a bootstrap interval."""

    value: float
    low: float
    high: float
    n: int

    def as_dict(self) -> dict[str, int | float | None]:
        """JSON-ready view: floats rounded to 4 places, nan as None."""
        return {
            "value": _json_float(self.value),
            "low": _json_float(self.low),
            "high": _json_float(self.high),
            "n": self.n,
        }

    def __str__(self) -> str:
        return f"{_fmt(self.value)} [{_fmt(self.low)}, {_fmt(self.high)}] n={self.n}"


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on paired booleans (b: True->False, c: False->True)."""

    b: int
    c: int
    n: int
    p_value: float

    def as_dict(self) -> dict[str, int | float | None]:
        """JSON-ready view: floats rounded to 4 places, nan as None."""
        return {"b": self.b, "c": self.c, "n": self.n, "p_value": _json_float(self.p_value)}

    def __str__(self) -> str:
        return f"b={self.b} c={self.c} p={self.p_value:.4g} n={self.n}"


# --------------------------------------------------------------------------- rates


def wilson(successes: int, n: int, confidence: float = 0.95) -> Rate:
    """Proportion successes/n with its Wilson score interval (nan when n == 0)."""
    check_confidence(confidence)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    return _wilson(int(successes), int(n), float(confidence))


@lru_cache(maxsize=8192)
def _wilson(successes: int, n: int, confidence: float) -> Rate:
    # Reports ask for the same few (k, n) thousands of times, and binomtest computes its
    # p-value on construction: the Rate is frozen, so one per (k, n, confidence) serves all.
    if n == 0:
        return Rate(successes=0, n=0, rate=NAN, low=NAN, high=NAN)
    ci = scipy.stats.binomtest(successes, n).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    # Clip: the closed form can stray outside [0, 1] by a rounding error at k = 0 or k = n.
    low = min(max(float(ci.low), 0.0), 1.0)
    high = min(max(float(ci.high), 0.0), 1.0)
    return Rate(successes=successes, n=n, rate=successes / n, low=low, high=high)


def mcnemar_exact(before: Sequence[bool], after: Sequence[bool]) -> McNemar:
    """Exact two-sided McNemar test: binomial test of b against b + c at p = 0.5."""
    if len(before) != len(after):
        raise ValueError(f"paired inputs differ in length: {len(before)} != {len(after)}")
    pairs = [(bool(x), bool(y)) for x, y in zip(before, after, strict=True)]
    b = sum(1 for x, y in pairs if x and not y)
    c = sum(1 for x, y in pairs if y and not x)
    # Without discordant pairs there is no evidence of change at all.
    p_value = 1.0 if b + c == 0 else float(scipy.stats.binomtest(b, b + c, 0.5).pvalue)
    return McNemar(b=b, c=c, n=len(pairs), p_value=min(p_value, 1.0))


def minimum_detectable_difference(
    sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest true difference in means of two n-item samples a two-sided test detects.

    (z_{1-alpha/2} + z_{power}) * sd * sqrt(2 / n): the normal-approximation design formula.
    """
    if sd < 0 or n < 0:
        raise ValueError(f"sd and n must be >= 0, got sd={sd}, n={n}")
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha}, {power}")
    if n == 0:
        return NAN
    if sd == 0:
        return 0.0
    z = scipy.stats.norm.ppf(1.0 - alpha / 2.0) + scipy.stats.norm.ppf(power)
    return float(z * sd * math.sqrt(2.0 / n))


# --------------------------------------------------------------------------- bootstrap means


def _scipy_percentile_bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    *,
    paired: bool,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> tuple[float, float]:
    with warnings.catch_warnings():
        # Near-degenerate samples make scipy warn about the bootstrap distribution; the
        # percentile interval is still well defined, so the warning is noise to a caller.
        warnings.simplefilter("ignore")
        result = scipy.stats.bootstrap(
            data,
            statistic,
            n_resamples=n_resamples,
            vectorized=True,
            paired=paired,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _mean_stat(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def _diff_stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Estimate:
    """Mean with a percentile bootstrap interval (interval nan below two values)."""
    check_confidence(confidence)
    x = as_1d(values)
    n = int(x.size)
    if n == 0:
        return Estimate(NAN, NAN, NAN, 0)
    if n == 1:
        # One value has no spread to resample; a zero-width interval would overstate certainty.
        return Estimate(float(x[0]), NAN, NAN, 1)
    if np.ptp(x) == 0:
        # Every resample equals the sample, so the interval is a point; short-cutting also
        # avoids last-bit drift (mean of seven 0.1s != 0.1) between the value and its bounds.
        return Estimate(float(x[0]), float(x[0]), float(x[0]), n)
    value = float(np.mean(x))
    low, high = _scipy_percentile_bootstrap(
        (x,),
        _mean_stat,
        paired=False,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return Estimate(value, low, high, n)


def bootstrap_mean_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    paired: bool,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Estimate:
    """mean(a) - mean(b) with a percentile bootstrap interval.

    paired=True resamples pairs (value = mean of a - b, n = pairs); paired=False resamples
    each group independently (n = len(a) + len(b)).
    """
    check_confidence(confidence)
    xa, xb = as_1d(a, "a"), as_1d(b, "b")
    if paired:
        if xa.shape != xb.shape:
            raise ValueError(f"paired inputs differ in length: {xa.size} != {xb.size}")
        return bootstrap_mean(xa - xb, confidence=confidence, n_resamples=n_resamples, seed=seed)
    n = int(xa.size + xb.size)
    if xa.size == 0 or xb.size == 0:
        return Estimate(NAN, NAN, NAN, n)
    value = float(np.mean(xa) - np.mean(xb))
    if xa.size < 2 or xb.size < 2:
        # scipy cannot resample a group of one, and a one-item group has no spread to show.
        return Estimate(value, NAN, NAN, n)
    if np.ptp(xa) == 0 and np.ptp(xb) == 0:
        diff = float(xa[0] - xb[0])
        return Estimate(diff, diff, diff, n)
    low, high = _scipy_percentile_bootstrap(
        (xa, xb),
        _diff_stat,
        paired=False,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
    return Estimate(value, low, high, n)


def bootstrap_means_matrix(
    values: np.ndarray,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Estimate]:
    """Column means of an (items x dimensions) array, each with a percentile interval.

    All columns share one resampling of the items (one index matrix), so the intervals
    describe the same bootstrap worlds, and the work is a few matrix products.
    """
    check_confidence(confidence)
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"values must be two-dimensional, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError("values contains nan; drop failed judgements explicitly first")
    n, dims = arr.shape
    if n == 0:
        return [Estimate(NAN, NAN, NAN, 0) for _ in range(dims)]
    means = arr.mean(axis=0)
    if n < 2:
        return [Estimate(float(m), NAN, NAN, n) for m in means]
    idx = resample_indices(n, n_resamples, seed)
    boot = np.empty((n_resamples, dims))
    # Blocks of rows keep the count matrices cache- and allocator-friendly; a single
    # (R x n) count matrix made the first call in a process several times slower.
    for start in range(0, n_resamples, _MATRIX_BLOCK):
        counts = index_counts(idx[start : start + _MATRIX_BLOCK], n).astype(float)
        # (block x n) multiplicities @ (n x d) scores = every resample's column sums.
        boot[start : start + _MATRIX_BLOCK] = (counts @ arr) / n
    tail = (1.0 - confidence) / 2.0 * 100.0
    lows, highs = np.percentile(boot, [tail, 100.0 - tail], axis=0)
    out: list[Estimate] = []
    for j in range(dims):
        column = arr[:, j]
        if np.ptp(column) == 0:
            c = float(column[0])
            out.append(Estimate(c, c, c, n))
        else:
            out.append(Estimate(float(means[j]), float(lows[j]), float(highs[j]), n))
    return out


def _python_percentile(sorted_values: list[float], q: float) -> float:
    """numpy's default ('linear') percentile on an already sorted list."""
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def bootstrap_means_loop(
    values: np.ndarray | Sequence[Sequence[float]],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Estimate]:
    """Pure-Python twin of bootstrap_means_matrix, kept only as a benchmark baseline.

    Same estimator, different random stream (random.Random), so results agree statistically,
    not bitwise.
    """
    check_confidence(confidence)
    if isinstance(values, np.ndarray):
        source = values.tolist()
        empty_dims = values.shape[1] if values.ndim == 2 else 0
    else:
        source, empty_dims = values, 0
    rows: list[list[float]] = [[float(v) for v in row] for row in source]
    n = len(rows)
    dims = len(rows[0]) if rows else empty_dims
    if n == 0:
        return [Estimate(NAN, NAN, NAN, 0) for _ in range(dims)]
    columns = [list(col) for col in zip(*rows, strict=True)]
    means = [sum(col) / n for col in columns]
    if n < 2:
        return [Estimate(m, NAN, NAN, n) for m in means]
    rng = random.Random(seed)
    boot: list[list[float]] = [[] for _ in range(dims)]
    for _ in range(n_resamples):
        sample = rng.choices(rows, k=n)  # one draw of items shared by all columns
        for j, col in enumerate(zip(*sample, strict=True)):
            boot[j].append(sum(col) / n)
    tail = (1.0 - confidence) / 2.0 * 100.0
    out: list[Estimate] = []
    for j in range(dims):
        if min(columns[j]) == max(columns[j]):
            c = columns[j][0]
            out.append(Estimate(c, c, c, n))
            continue
        ordered = sorted(boot[j])
        out.append(
            Estimate(
                means[j],
                _python_percentile(ordered, tail),
                _python_percentile(ordered, 100.0 - tail),
                n,
            )
        )
    return out
