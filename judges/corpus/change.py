"""Two judges (or two runs of one judge) on the same corpus: what the change does.

Each system's shift is paired over the items both judged it on. The two rankings' rank
correlation gets a bootstrap interval from resampling items for both judges at once. Verdict
agreement is on the judgements both made, against a stated substitution threshold: a judge
may replace the other only when the Wilson lower bound reaches it, may not when the upper
bound misses it, and otherwise the pilot is too small to say.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import scipy.stats

from judges.corpus.estimates import (
    CONFIDENCE,
    N_RESAMPLES,
    MeanInterval,
    mean_interval,
    probability_first,
    resampled_means,
)
from judges.corpus.manifest import Scale
from judges.stats.estimates.intervals import Estimate, Rate, wilson
from judges.stats.reliability.agreement import quadratic_kappa


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
    means_b, means_a = np.nanmean(before, axis=1), np.nanmean(after, axis=1)
    n = len(means_b)
    if n < 3:
        nan = Estimate(math.nan, math.nan, math.nan, n)
        return nan, nan
    # One resample of items serves both judges: the pairing of items is kept.
    stacked = np.concatenate([before, after])
    draws = resampled_means(stacked, N_RESAMPLES, seed)
    rb, ra = draws[:, :n], draws[:, n:]
    spearman_draws = [
        float(scipy.stats.spearmanr(x, y).statistic) for x, y in zip(rb, ra, strict=True)
    ]
    kendall_draws = [
        float(scipy.stats.kendalltau(x, y).statistic) for x, y in zip(rb, ra, strict=True)
    ]
    tail = (1 - CONFIDENCE) / 2 * 100

    def estimate(point: float, values: list[float]) -> Estimate:
        finite = np.asarray(values, dtype=float)
        finite = finite[~np.isnan(finite)]
        if finite.size == 0:
            return Estimate(point, math.nan, math.nan, n)
        low, high = np.percentile(finite, [tail, 100 - tail])
        return Estimate(point, float(low), float(high), n)

    return (
        estimate(float(scipy.stats.spearmanr(means_b, means_a).statistic), spearman_draws),
        estimate(float(scipy.stats.kendalltau(means_b, means_a).statistic), kendall_draws),
    )


def _leader(systems: tuple[str, ...], means: np.ndarray, higher_is_better: bool) -> str:
    signed = means if higher_is_better else -means
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
    shifts = []
    for index, system in enumerate(systems):
        d = after[index] - before[index]
        both = ~np.isnan(d)
        diff = mean_interval(d[both])
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
    means_b, means_a = np.nanmean(before, axis=1), np.nanmean(after, axis=1)
    first_b = probability_first(resampled_means(before, N_RESAMPLES, seed), scale.higher_is_better)
    first_a = probability_first(resampled_means(after, N_RESAMPLES, seed), scale.higher_is_better)

    vb, va = verdicts(before, scale).ravel(), verdicts(after, scale).ravel()
    both = ~np.isnan(vb) & ~np.isnan(va)
    vb, va = vb[both], va[both]
    exact = wilson(int(np.count_nonzero(vb == va)), int(vb.size))
    adjacent = None
    if scale.verdict == "level":
        adjacent = wilson(int(np.count_nonzero(np.abs(vb - va) <= 1)), int(vb.size))
    measured = adjacent if adjacent is not None else exact
    if measured.n and measured.low >= threshold:
        substitution = Substitution.MAY
    elif measured.n and measured.high < threshold:
        substitution = Substitution.MAY_NOT
    else:
        substitution = Substitution.UNDECIDED
    kappa = (
        quadratic_kappa(vb, va, n_resamples=N_RESAMPLES, seed=seed)
        if vb.size
        else (Estimate(math.nan, math.nan, math.nan, 0))
    )
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
