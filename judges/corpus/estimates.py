"""Each system's score, the paired differences between systems, and who is first.

A system's mean is over its items. Its interval stays on the scale, never clipped to it: on a
pass/fail scale (two levels) it is the pass rate's Wilson interval, as the planted sets show
rates; on any other scale it is the t interval (its standard error is the sample standard
error, ddof=1, as released leaderboards state it) where that lies on the scale, and where it
would leave it (a few items, a mean near an end, where the normal approximation fails) the
percentile bootstrap of items, whose every resampled mean is a mean of scores on the scale.
A difference of two means keeps the same way within [-(high - low), high - low]. Two systems
are compared on the items both were judged on, pairwise: the item effect they share cancels,
so the interval is the paired one, and "better than" is decided after Holm over every pair.
Who is first is bootstrapped by resampling items (columns), never rows, so each resample
keeps the systems' shared items together.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np
import scipy.sparse
import scipy.special
import scipy.stats

from judges.corpus.manifest import Scale
from judges.stats.estimates.intervals import Rate, wilson

CONFIDENCE = 0.95
N_RESAMPLES = 2000


class IntervalMethod(StrEnum):
    T = "t"
    WILSON = "Wilson"
    BOOTSTRAP = "percentile bootstrap of items"


@dataclass(frozen=True)
class MeanInterval:
    mean: float
    standard_error: float
    low: float
    high: float
    n: int
    method: IntervalMethod = IntervalMethod.T


@dataclass(frozen=True)
class SystemScore:
    system: str
    score: MeanInterval
    errors: int
    # Judgements the judge flagged, or below the scale's flag_below; None: neither applies.
    flagged: Rate | None


@dataclass(frozen=True)
class PairedDifference:
    better: str
    worse: str
    difference: MeanInterval  # better - worse, over the items both were judged on
    p_value: float  # two-sided paired t test
    p_holm: float  # Holm over every pair of the judge's systems

    @property
    def decided(self) -> bool:
        return self.p_holm < 1 - CONFIDENCE


def mean_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> MeanInterval:
    """The mean of the finite values with its t interval; NaN figures below two values."""
    x = values[~np.isnan(values)]
    n = int(x.size)
    if n == 0:
        return MeanInterval(math.nan, math.nan, math.nan, math.nan, 0)
    mean = float(np.mean(x))
    if n < 2:
        return MeanInterval(mean, math.nan, math.nan, math.nan, n)
    se = float(np.std(x, ddof=1) / np.sqrt(n))
    half = float(scipy.stats.t.ppf(0.5 + confidence / 2, n - 1)) * se
    return MeanInterval(mean, se, mean - half, mean + half, n)


def is_pass_fail(scale: Scale) -> bool:
    """Two levels, low and high: a score is a pass or a fail and a mean is a pass rate."""
    return (
        scale.verdict == "level"
        and scale.step is not None
        and math.isclose(scale.step, scale.high - scale.low)
    )


def kept_on_scale(
    t: MeanInterval, row: np.ndarray, low: float, high: float, seed: int
) -> MeanInterval:
    """`t`, the t interval of the mean of `row` (one value per item, NaN: none), where it lies
    within [low, high]; where it would leave it, the percentile bootstrap of items, whose every
    resampled mean is a mean of the row's values and so lies within it, unclipped."""
    if t.n < 2 or (low <= t.low and t.high <= high):
        return t
    x = row[~np.isnan(row)]
    if np.ptp(x) == 0:
        return replace(t, low=float(x[0]), high=float(x[0]), method=IntervalMethod.BOOTSTRAP)
    draws = resampled_means(row[None, :], N_RESAMPLES, seed)[:, 0]
    finite = draws[~np.isnan(draws)]
    tail = (1 - CONFIDENCE) / 2 * 100
    lower, upper = np.percentile(finite, [tail, 100 - tail])
    return replace(t, low=float(lower), high=float(upper), method=IntervalMethod.BOOTSTRAP)


def system_interval(row: np.ndarray, scale: Scale, seed: int) -> MeanInterval:
    """A system's mean over its finite scores with an interval that stays on the scale: a pass
    rate (every score at one end of a pass/fail scale) Wilson's; any other mean the t
    interval, or the percentile bootstrap of items where that would leave the scale."""
    t = mean_interval(row)
    x = row[~np.isnan(row)]
    passed = x == scale.high
    if t.n >= 2 and is_pass_fail(scale) and np.all(passed | (x == scale.low)):
        rate = wilson(int(np.count_nonzero(passed)), t.n)
        span = scale.high - scale.low
        return replace(t, low=scale.low + span * rate.low, high=scale.low + span * rate.high,
                       method=IntervalMethod.WILSON)  # fmt: skip
    return kept_on_scale(t, row, scale.low, scale.high, seed)


def system_scores(
    systems: tuple[str, ...],
    scores: np.ndarray,
    errors: dict[str, int],
    scale: Scale,
    seed: int,
    flags: np.ndarray | None = None,
) -> list[SystemScore]:
    """Each system's mean with its interval (`system_interval`, `seed` its item resamples'),
    errors, and flag rate: the judge's own flags where it gave them (over the judgements that
    carry one), else scores below flag_below."""
    found = []
    for index, (system, row) in enumerate(zip(systems, scores, strict=True)):
        judged = row[~np.isnan(row)]
        flagged = None
        own = flags[index][~np.isnan(flags[index])] if flags is not None else np.empty(0)
        if own.size:
            flagged = wilson(int(np.count_nonzero(own == 1)), int(own.size))
        elif scale.flag_below is not None:
            below = int(np.count_nonzero(judged < scale.flag_below))
            flagged = wilson(below, int(judged.size))
        score = system_interval(row, scale, seed)
        found.append(SystemScore(system, score, errors.get(system, 0), flagged))
    return found


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment; an undefined p stays undefined and is not counted.

    Written here rather than called from statsmodels' `multipletests`, which runs a full
    `gc.collect()` on every Holm call: 0.3 s each in a large process (a test worker, a
    session holding every judgement). tests/test_corpus_statistics.py holds the two equal.
    """
    values = np.asarray(p_values, dtype=float)
    adjusted = np.full(values.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(values))
    if defined.size:
        order = defined[np.argsort(values[defined], kind="stable")]
        steps = np.arange(defined.size, 0, -1)  # m - k for the k-th smallest
        adjusted[order] = np.minimum(1.0, np.maximum.accumulate(values[order] * steps))
    return [float(v) for v in adjusted]


def paired_differences(
    systems: tuple[str, ...],
    scores: np.ndarray,
    higher_is_better: bool = True,
    span: float | None = None,
    seed: int = 0,
) -> list[PairedDifference]:
    """Every pair of systems, the better first (by the paired mean), Holm-adjusted; with the
    scale's `span` (high - low), an interval that would leave [-span, span] is the percentile
    bootstrap of the pair's items instead (`kept_on_scale`).

    Each pair's interval is `mean_interval` of its differences and its p-value is
    `scipy.stats.ttest_1samp`'s, figure for figure (tests/test_corpus_statistics.py holds
    them equal), with the t quantiles and tail probabilities computed for all pairs at once:
    a call of each per pair was most of the report's time at a few hundred systems."""
    pairs = len(systems) * (len(systems) - 1) // 2
    ordered: list[tuple[int, int]] = []
    n = np.zeros(pairs)
    mean = np.full(pairs, math.nan)
    sd = np.full(pairs, math.nan)  # np.std(ddof=1), as mean_interval
    m2 = np.full(pairs, math.nan)  # mean squared deviation, as ttest_1samp's variance
    constant = np.full(pairs, math.nan)  # no spread: p is 1 (all zero) or 0
    sign = 1.0 if higher_is_better else -1.0
    k = 0
    for i in range(len(systems) - 1):
        # One system against all after it at once; each pair over the items both have.
        block = (scores[i] - scores[i + 1 :]) * sign
        shared = ~np.isnan(block)
        for offset, (row, both) in enumerate(zip(block, shared, strict=True)):
            j = i + 1 + offset
            d = row[both]
            size = d.size
            # The sums are np.mean's and np.std's own (numpy's pairwise sum of the same
            # array): the figures are theirs to the bit, without their per-call overhead.
            total = d.sum()
            if size and total / size < 0:  # np.mean(d) < 0, an underflow to -0.0 too
                d, total = -d, -total
                ordered.append((j, i))
            else:
                ordered.append((i, j))
            n[k] = size
            if size:
                mean[k] = total / size
            if size >= 2:
                squares = d - mean[k]
                squares = squares * squares
                sum_squares = squares.sum()
                sd[k] = np.sqrt(sum_squares / (size - 1))
                m2[k] = sum_squares / size
                if (d == d[0]).all():
                    constant[k] = 1.0 if d[0] == 0 else 0.0
            k += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        se = sd / np.sqrt(n)
        half = scipy.stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * se
        t = mean / np.sqrt(m2 * (n / (n - 1)) / n)
        p = np.where(np.isnan(constant), 2 * scipy.special.stdtr(n - 1, -np.abs(t)), constant)
    adjusted = holm(p.tolist())
    found = []
    for k, (first, second) in enumerate(ordered):
        count = int(n[k])
        if count == 0:
            interval = MeanInterval(math.nan, math.nan, math.nan, math.nan, 0)
        elif count < 2:
            interval = MeanInterval(float(mean[k]), math.nan, math.nan, math.nan, count)
        else:
            m, h = float(mean[k]), float(half[k])
            interval = MeanInterval(m, float(se[k]), m - h, m + h, count)
            if span is not None:
                row = (scores[first] - scores[second]) * sign
                interval = kept_on_scale(interval, row, -span, span, seed)
        found.append(
            PairedDifference(systems[first], systems[second], interval, float(p[k]), adjusted[k])
        )
    return found


@functools.lru_cache(maxsize=4)
def _item_counts(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """(resamples, items): how often each resample draws each item, in the generator's
    order. Every call with the same seed draws the same resamples (each judge, each
    comparison of the report), so they are drawn once; read-only."""
    rng = np.random.default_rng(seed)
    counts = np.empty((n_resamples, n_items), dtype=np.int32)
    for row in counts:
        row[:] = np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
    counts.flags.writeable = False
    return counts


def resampled_means(
    scores: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = 0, block: int = 250
) -> np.ndarray:
    """(resamples, systems): each system's mean over the same resample of items."""
    n_items = scores.shape[1]
    judged = ~np.isnan(scores)
    filled = np.where(judged, scores, 0.0)
    drawn = _item_counts(n_items, n_resamples, seed)
    # A resample's weight for a system is the count of its judged items it drew: an exact
    # integer however it is summed, so from the few unjudged cells when they are few.
    unjudged = scipy.sparse.csr_array((~judged).astype(float))
    sparse = unjudged.nnz < 0.1 * judged.size
    out = np.empty((n_resamples, scores.shape[0]))
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        # Item multiplicities per resample: a system's mean is a weighted mean over items.
        counts = drawn[start:stop].astype(float)
        sums = counts @ filled.T
        weights = n_items - (unjudged @ counts.T).T if sparse else counts @ judged.T.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:stop] = sums / weights
    return out


def probability_first(means: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Share of resamples in which each system is first; a tie for first is shared."""
    signed = means if higher_is_better else -means
    # A resample that drew only items no system was scored on names no leader: it is left out.
    informative = ~np.isnan(signed).all(axis=1)
    if not informative.any():
        return np.full(signed.shape[1], np.nan)
    signed = signed[informative]
    best = np.nanmax(signed, axis=1, keepdims=True)
    leaders = signed == best
    share = leaders / leaders.sum(axis=1, keepdims=True)
    return share.mean(axis=0)
