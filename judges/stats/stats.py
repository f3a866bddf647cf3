"""Agreement and uncertainty statistics for judge-reliability reports.

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

import krippendorff
import numpy as np
import scipy.stats

__all__ = [
    "Estimate",
    "McNemar",
    "Rate",
    "adjacent_agreement",
    "bootstrap_mean",
    "bootstrap_mean_difference",
    "bootstrap_means_loop",
    "bootstrap_means_matrix",
    "exact_agreement",
    "kendall_tau",
    "krippendorff_alpha_ordinal",
    "mcnemar_exact",
    "minimum_detectable_difference",
    "quadratic_kappa",
    "spearman",
    "wilson",
]

NAN = float("nan")
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


# --------------------------------------------------------------------------- helpers


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _as_1d(values: Sequence[float] | np.ndarray, name: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    # A nan score is a failed judgement; silently averaging it away would hide the failure.
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains nan; drop failed judgements explicitly first")
    return arr


def _as_pair(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = _as_1d(x, "x"), _as_1d(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"paired inputs differ in length: {xa.size} != {ya.size}")
    return xa, ya


def _percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
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


def _resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """One (n_resamples, n) index matrix; every statistic of a call reuses it."""
    # The narrowest integer type that holds n: drawing int16 is several times faster.
    dtype = np.int16 if n <= np.iinfo(np.int16).max else np.int64
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n), dtype=dtype)


def _index_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """Turn an index matrix into per-resample multiplicities, shape (n_resamples, n).

    Offsetting each row by row * n lets one bincount do all rows at once.
    """
    rows = idx.shape[0]
    flat = (idx + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n)


def _bootstrap_over_counts(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> tuple[float, float]:
    """Bootstrap a statistic that is a function of per-item multiplicities (R x n) -> (R,)."""
    counts = _index_counts(_resample_indices(n, n_resamples, seed), n).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        samples = statistic(counts)
    return _percentile_interval(samples, confidence)


# --------------------------------------------------------------------------- rates


def wilson(successes: int, n: int, confidence: float = 0.95) -> Rate:
    """Proportion successes/n with its Wilson score interval (nan when n == 0)."""
    _check_confidence(confidence)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return Rate(successes=0, n=0, rate=NAN, low=NAN, high=NAN)
    ci = scipy.stats.binomtest(successes, n).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    # Clip: the closed form can stray outside [0, 1] by a rounding error at k = 0 or k = n.
    low = min(max(float(ci.low), 0.0), 1.0)
    high = min(max(float(ci.high), 0.0), 1.0)
    return Rate(successes=successes, n=n, rate=successes / n, low=low, high=high)


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
    xa, ya = _as_pair(a, b)
    hits = int(np.count_nonzero(np.abs(xa - ya) <= tolerance))
    return wilson(hits, int(xa.size), confidence)


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
    _check_confidence(confidence)
    x = _as_1d(values)
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
    _check_confidence(confidence)
    xa, xb = _as_1d(a, "a"), _as_1d(b, "b")
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
    _check_confidence(confidence)
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
    idx = _resample_indices(n, n_resamples, seed)
    boot = np.empty((n_resamples, dims))
    # Blocks of rows keep the count matrices cache- and allocator-friendly; a single
    # (R x n) count matrix made the first call in a process several times slower.
    for start in range(0, n_resamples, _MATRIX_BLOCK):
        counts = _index_counts(idx[start : start + _MATRIX_BLOCK], n).astype(float)
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
    _check_confidence(confidence)
    is_array = isinstance(values, np.ndarray)
    source = values.tolist() if is_array else values
    rows: list[list[float]] = [[float(v) for v in row] for row in source]
    n = len(rows)
    dims = len(rows[0]) if rows else (values.shape[1] if is_array and values.ndim == 2 else 0)
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
    _check_confidence(confidence)
    xa, ya = _as_pair(x, y)
    n = int(xa.size)
    if n < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Estimate(NAN, NAN, NAN, n)
    value = _quiet_point(lambda: scipy.stats.spearmanr(xa, ya).statistic)
    idx = _resample_indices(n, n_resamples, seed)
    # Re-rank inside every resample (ties averaged), then Pearson on the ranks, row by row.
    rx = scipy.stats.rankdata(xa[idx], axis=1)
    ry = scipy.stats.rankdata(ya[idx], axis=1)
    low, high = _percentile_interval(_rowwise_pearson(rx, ry), confidence)
    return Estimate(value, low, high, n)


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
    _check_confidence(confidence)
    xa, ya = _as_pair(x, y)
    n = int(xa.size)
    if n < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Estimate(NAN, NAN, NAN, n)
    value = _quiet_point(lambda: scipy.stats.kendalltau(xa, ya).statistic)
    low, high = _bootstrap_over_counts(
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
    rows = confusions.sum(axis=2) / total[:, None]
    cols = confusions.sum(axis=1) / total[:, None]
    observed = np.einsum("rij,ij->r", confusions, weights) / total
    expected = np.einsum("ri,ij,rj->r", rows, weights, cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - observed / expected
    # No expected disagreement (one category used by both) leaves kappa undefined.
    kappa[expected <= 1e-15] = np.nan
    return kappa


def quadratic_kappa(
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
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
    _check_confidence(confidence)
    xa, xb = _as_pair(a, b)
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
    cell = np.searchsorted(cats, xa) * k + np.searchsorted(cats, xb)
    one_hot = np.zeros((n, k * k))
    one_hot[np.arange(n), cell] = 1.0

    def stat(counts: np.ndarray) -> np.ndarray:
        return _quadratic_kappa_from_confusions((counts @ one_hot).reshape(-1, k, k), weights)

    value = float(stat(np.ones((1, n)))[0])
    if math.isnan(value):
        return Estimate(NAN, NAN, NAN, n)
    low, high = _bootstrap_over_counts(
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
    _check_confidence(confidence)
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
    idx = _resample_indices(n, n_resamples, seed)
    samples = np.empty(n_resamples)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        for r in range(n_resamples):
            counts = value_counts[idx[r]]
            # A resample may use only one value: alpha is undefined there, drop it.
            if np.count_nonzero(counts.sum(axis=0)) < 2:
                samples[r] = np.nan
                continue
            samples[r] = krippendorff.alpha(
                value_counts=counts, value_domain=domain, level_of_measurement="ordinal"
            )
    low, high = _percentile_interval(samples, confidence)
    return Estimate(value, low, high, n)
