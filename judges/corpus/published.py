"""A release's published figures, recomputed from its judgements and compared.

The statistics are those of a preference against a reference (a side scale: above the
midpoint a win, at it a tie, below it a loss), each as released leaderboards define them:

    mean            factor x mean(score)                      (a win rate, ties counting half)
    standard_error  factor x sample standard error (ddof=1)
    n_total         judgements with a score (error rows are not judgements)
    n_above, n_below, n_at   wins, losses, ties
    discrete_mean   factor x mean of 1 / 0.5 / 0 for above / at / below

Floats agree when equal to 12 significant digits: a release computed with another
summation order differs in the last one or two of its 17 printed digits, not before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from judges.corpus.manifest import Scale
from judges.corpus.rows import PublishedFigure, Statistic
from judges.corpus.table import ScoreMatrix

RELATIVE_TOLERANCE = 1e-12
_COUNTS = frozenset({"n_total", "n_above", "n_below", "n_at"})


@dataclass(frozen=True)
class FigureCheck:
    figure: PublishedFigure
    recomputed: float

    @property
    def agrees(self) -> bool:
        published = float(self.figure.value)
        if self.figure.statistic in _COUNTS:
            return self.recomputed == published
        return math.isclose(self.recomputed, published, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12)


def statistic(values: np.ndarray, name: Statistic, scale: Scale) -> float:
    x = values[~np.isnan(values)]
    midpoint = scale.midpoint if scale.midpoint is not None else (scale.low + scale.high) / 2
    if name == "n_total":
        return float(x.size)
    if name == "n_above":
        return float(np.count_nonzero(x > midpoint))
    if name == "n_below":
        return float(np.count_nonzero(x < midpoint))
    if name == "n_at":
        return float(np.count_nonzero(x == midpoint))
    if x.size == 0:
        return math.nan
    if name == "mean":
        return float(np.mean(x)) * scale.factor
    if name == "standard_error":
        return float(np.std(x, ddof=1) / np.sqrt(x.size)) * scale.factor if x.size > 1 else math.nan
    # discrete_mean: the side of each score, scaled to the scale's range
    sides = np.where(x > midpoint, scale.high, np.where(x < midpoint, scale.low, midpoint))
    return float(np.mean(sides)) * scale.factor


def check_published(
    figures: tuple[PublishedFigure, ...], matrices: dict[str, ScoreMatrix], scale: Scale
) -> list[FigureCheck]:
    """Each figure beside its recomputation from run 0 of its judge; a system the corpus
    never judged recomputes as NaN, so it cannot agree."""
    checks = []
    for figure in figures:
        matrix = matrices.get(figure.judge)
        if matrix is None or figure.system not in matrix.systems:
            checks.append(FigureCheck(figure, math.nan))
            continue
        checks.append(
            FigureCheck(figure, statistic(matrix.row(figure.system), figure.statistic, scale))
        )
    return checks
