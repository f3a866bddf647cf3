"""Two judges (or two runs of one judge) on the same corpus: what the change does.

Each system's shift is paired over the items both judged it on. The two rankings' rank
correlation gets a bootstrap interval from resampling items for both judges at once. Verdict
agreement and kappa are on the judgements both made, with intervals from resampling items
too (an item's judgements are not independent), against a stated substitution threshold: a
judge may replace the other only when the lower bound reaches it, may not when the upper
bound misses it, and otherwise the pilot is too small to say.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import scipy.stats

from judges.corpus.estimates import (
    CONFIDENCE,
    N_RESAMPLES,
    MeanInterval,
    kept_on_scale,
    mean_interval,
    probability_first,
    resampled_means,
)
from judges.corpus.manifest import Scale
from judges.stats.estimates.intervals import Estimate, Rate
from judges.stats.estimates.rank_correlation import rowwise_kendall_tau_b, rowwise_spearman
from judges.stats.estimates.resample import index_counts, resample_indices
from judges.stats.reliability.agreement import quadratic_kappa_of_confusions

MIN_RANKED = 3  # systems: two rankings of two systems agree or reverse, nothing between


class Substitution(StrEnum):
    MAY = "may substitute"
    MAY_NOT = "may not substitute"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Shift:
    system: str
    before: float
    after: float
    shift: MeanInterval  # after - before, paired over items
    contested: bool


@dataclass(frozen=True)
class JudgeChange:
    before: str
    after: str
    systems: tuple[str, ...]
    shifts: tuple[Shift, ...]
    spearman: Estimate
    kendall: Estimate
    leader_before: str
    leader_after: str
    first_before: dict[str, float]
    first_after: dict[str, float]
    exact: Rate
    adjacent: Rate | None  # level scales only: within one level
    kappa: Estimate
    agreement_measure: str
    substitution: Substitution
    threshold: float
    margin: float

    @property
    def leader_changes(self) -> bool:
        return self.leader_before != self.leader_after


def row_means(scores: np.ndarray) -> np.ndarray:
    """Each system's mean over its scores; NaN (and no warning) for one with none."""
    judged = ~np.isnan(scores)
    sums = np.where(judged, scores, 0.0).sum(axis=1)
    counts = judged.sum(axis=1)
    return np.divide(sums, counts, out=np.full(len(scores), np.nan), where=counts > 0)


def verdicts(scores: np.ndarray, scale: Scale) -> np.ndarray:
    """A score's verdict as an ordered code: -1/0/1 (below, at, above the midpoint) on a
    side scale, the nearest level's index on a level scale; NaN stays NaN."""
    if scale.verdict == "side":
        assert scale.midpoint is not None
        return np.sign(scores - scale.midpoint)
    assert scale.step is not None
    return np.round((scores - scale.low) / scale.step)


def _rank_correlations(
    before: np.ndarray, after: np.ndarray, seed: int
) -> tuple[Estimate, Estimate]:
    means_b, means_a = row_means(before), row_means(after)
    n = len(means_b)
    if n < MIN_RANKED:
        nan = Estimate(math.nan, math.nan, math.nan, n)
        return nan, nan
    # One resample of items serves both judges: the pairing of items is kept.
    stacked = np.concatenate([before, after])
    draws = resampled_means(stacked, N_RESAMPLES, seed)
    rb, ra = draws[:, :n], draws[:, n:]
    # A draw where one judge ties every system has no rank correlation: NaN, left out below.
    spearman_draws = rowwise_spearman(rb, ra)
    kendall_draws = rowwise_kendall_tau_b(rb, ra)
    tail = (1 - CONFIDENCE) / 2 * 100

    def estimate(point: float, values: np.ndarray) -> Estimate:
        finite = np.asarray(values, dtype=float)
        finite = finite[~np.isnan(finite)]
        if finite.size == 0:
            return Estimate(point, math.nan, math.nan, n)
        low, high = np.percentile(finite, [tail, 100 - tail])
        return Estimate(point, float(low), float(high), n)

    with warnings.catch_warnings():
        # A judge that ties every system has no rank correlation: NaN, said in words by the
        # report ("a judge ties every system"), not a warning on the terminal.
        warnings.simplefilter("ignore", scipy.stats.ConstantInputWarning)
        rho = float(scipy.stats.spearmanr(means_b, means_a).statistic)
        tau = float(scipy.stats.kendalltau(means_b, means_a).statistic)
    return estimate(rho, spearman_draws), estimate(tau, kendall_draws)


def has_adjacent_levels(scale: Scale) -> bool:
    """A level scale of three levels or more: on two (pass/fail) every pair of verdicts is
    within one level, so "within one level" would be 100% by construction."""
    return (
        scale.verdict == "level"
        and scale.step is not None
        and ((scale.high - scale.low) / scale.step > 1 + 1e-9)
    )


def agreement(
    before: np.ndarray, after: np.ndarray, levels: bool, seed: int
) -> tuple[Rate, Rate | None, Estimate]:
    """Exact (and, on levels, adjacent) agreement and quadratic kappa over the judgements
    both made, with intervals from resampling items: the judgements of one item share its
    difficulty, so they are not independent, and an interval over judgements (Wilson, a
    bootstrap of rows) would be too narrow. (systems, items) verdict codes in."""
    both = ~np.isnan(before) & ~np.isnan(after)
    n = int(np.count_nonzero(both))
    if n == 0:
        empty = Rate(0, 0, math.nan, math.nan, math.nan)
        return empty, (empty if levels else None), Estimate(math.nan, math.nan, math.nan, 0)
    cats = np.unique(np.concatenate([before[both], after[both]]))
    k = cats.size
    # Per item (column): its judgements' confusion cells, agreements and count.
    cells = np.zeros((before.shape[1], k * k))
    item = np.nonzero(both)[1]
    cell = np.searchsorted(cats, before[both]) * k + np.searchsorted(cats, after[both])
    np.add.at(cells, (item, cell), 1.0)
    gap = np.abs(before - after)
    per_item = {
        "exact": np.where(both, gap == 0, False).sum(axis=0).astype(float),
        "adjacent": np.where(both, gap <= 1, False).sum(axis=0).astype(float),
    }
    totals = both.sum(axis=0).astype(float)
    counts = index_counts(resample_indices(before.shape[1], N_RESAMPLES, seed), before.shape[1])
    counts = counts.astype(float)
    weight = counts @ totals
    tail = (1 - CONFIDENCE) / 2 * 100

    def rate(agreed: np.ndarray) -> Rate:
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = (counts @ agreed) / weight
        low, high = np.nanpercentile(draws, [tail, 100 - tail])
        hits = int(agreed.sum())
        return Rate(hits, n, hits / n, float(low), float(high))

    point = float(quadratic_kappa_of_confusions(cells.sum(axis=0).reshape(1, k, k), cats)[0])
    kappa = Estimate(point, math.nan, math.nan, n)
    if not math.isnan(point):
        draws = quadratic_kappa_of_confusions((counts @ cells).reshape(-1, k, k), cats)
        finite = draws[~np.isnan(draws)]
        if finite.size:
            low, high = np.percentile(finite, [tail, 100 - tail])
            kappa = Estimate(point, float(low), float(high), n)
    return rate(per_item["exact"]), (rate(per_item["adjacent"]) if levels else None), kappa


def _leader(systems: tuple[str, ...], means: np.ndarray, higher_is_better: bool) -> str:
    signed = means if higher_is_better else -means
    if np.all(np.isnan(signed)):
        return "none (no system has a score)"
    return systems[int(np.nanargmax(signed))]


def compare_judges(
    before_name: str,
    after_name: str,
    systems: tuple[str, ...],
    before: np.ndarray,
    after: np.ndarray,
    scale: Scale,
    threshold: float,
    margin: float,
    seed: int = 0,
) -> JudgeChange:
    """`before` and `after`: (systems, items) on the same systems and item columns."""
    span = scale.high - scale.low
    shifts = []
    for index, system in enumerate(systems):
        d = after[index] - before[index]
        both = ~np.isnan(d)
        # A shift lies within [-span, span]: its interval is kept there (kept_on_scale).
        diff = kept_on_scale(mean_interval(d[both]), d, -span, span, seed)
        shifts.append(
            Shift(
                system,
                float(np.mean(before[index][both])) if both.any() else math.nan,
                float(np.mean(after[index][both])) if both.any() else math.nan,
                diff,
                bool(abs(diff.mean) > margin) if diff.n else False,
            )
        )
    spearman, kendall = _rank_correlations(before, after, seed)
    means_b, means_a = row_means(before), row_means(after)
    first_b = probability_first(resampled_means(before, N_RESAMPLES, seed), scale.higher_is_better)
    first_a = probability_first(resampled_means(after, N_RESAMPLES, seed), scale.higher_is_better)

    exact, adjacent, kappa = agreement(
        verdicts(before, scale), verdicts(after, scale), has_adjacent_levels(scale), seed
    )
    measured = adjacent if adjacent is not None else exact
    if measured.n and measured.low >= threshold:
        substitution = Substitution.MAY
    elif measured.n and measured.high < threshold:
        substitution = Substitution.MAY_NOT
    else:
        substitution = Substitution.UNDECIDED
    return JudgeChange(
        before_name, after_name, systems, tuple(shifts), spearman, kendall,
        _leader(systems, means_b, scale.higher_is_better),
        _leader(systems, means_a, scale.higher_is_better),
        dict(zip(systems, map(float, first_b), strict=True)),
        dict(zip(systems, map(float, first_a), strict=True)),
        exact, adjacent, kappa,
        "within one level" if adjacent is not None else "the same side",
        substitution, threshold, margin,
    )  # fmt: skip
