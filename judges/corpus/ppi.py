"""Prediction-powered inference: a few gold labels and many judge scores, combined.

PPI++ (Angelopoulos, Duchi, Zrnic 2023) through `ppi-python`: on the labelled items the
judge's error is measured, on the rest its scores are used, and the power-tuning weight is
fitted from the data (0 would be the labels alone, 1 plain PPI). Beside it, the labels-only
interval from the same labels, so the report shows what the judge is worth in labels: the
effective label count is the labels times the squared ratio of the two widths.

A difference between two systems is the mean of paired differences on the items both were
labelled (and judged) on; the other items both were judged on are its unlabelled part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from judges.corpus.estimates import CONFIDENCE

MIN_LABELS = 3  # below this neither interval means anything


@dataclass(frozen=True)
class PPIEstimate:
    target: str  # a system, or "A - B"
    labels: int
    unlabelled: int
    ppi: float
    ppi_low: float
    ppi_high: float
    classical: float
    classical_low: float
    classical_high: float

    @property
    def defined(self) -> bool:
        return not math.isnan(self.ppi)

    @property
    def width_ratio(self) -> float:
        """Labels-only width over PPI++ width: above 1, the judge's scores are worth labels."""
        ppi_width = self.ppi_high - self.ppi_low
        return (self.classical_high - self.classical_low) / ppi_width if ppi_width else math.nan

    @property
    def effective_labels(self) -> float:
        return self.labels * self.width_ratio**2


def ppi_estimate(
    target: str, labels: np.ndarray, judged: np.ndarray, confidence: float = CONFIDENCE
) -> PPIEstimate | None:
    """`labels` and `judged` on the same columns (NaN where absent). None without a single
    label; undefined figures (NaN, shown as such) below MIN_LABELS labelled-and-judged
    items or with nothing unlabelled to add: a target with labels is never left out."""
    import ppi_py  # heavy (numba, statsmodels): only a labelled corpus needs it

    both = ~np.isnan(labels) & ~np.isnan(judged)
    rest = np.isnan(labels) & ~np.isnan(judged)
    y, yhat, yhat_unlabelled = labels[both], judged[both], judged[rest]
    if not np.any(~np.isnan(labels)):
        return None
    if y.size < MIN_LABELS or yhat_unlabelled.size == 0:
        nan = math.nan
        return PPIEstimate(target, int(y.size), int(yhat_unlabelled.size), *[nan] * 6)
    alpha = 1 - confidence
    point = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabelled)).item())
    low, high = (float(np.asarray(v).item()) for v in ppi_py.ppi_mean_ci(
        y, yhat, yhat_unlabelled, alpha=alpha
    ))  # fmt: skip
    c_low, c_high = (float(np.asarray(v).item()) for v in ppi_py.classical_mean_ci(y, alpha=alpha))
    return PPIEstimate(
        target, int(y.size), int(yhat_unlabelled.size), point, low, high,
        float(np.mean(y)), c_low, c_high,
    )  # fmt: skip


def ppi_estimates(
    systems: tuple[str, ...], labels: np.ndarray, judged: np.ndarray
) -> tuple[list[PPIEstimate], list[PPIEstimate]]:
    """Each system's score, then each pair's difference (first minus second)."""
    per_system = [
        found
        for index, system in enumerate(systems)
        if (found := ppi_estimate(system, labels[index], judged[index])) is not None
    ]
    differences = [
        found
        for i, j in combinations(range(len(systems)), 2)
        if (
            found := ppi_estimate(
                f"{systems[i]} - {systems[j]}", labels[i] - labels[j], judged[i] - judged[j]
            )
        )
        is not None
    ]
    return per_system, differences
