"""SME calibration: a judge's scores against human (SME) labels of the same items."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from judges.core.results import JudgementRow
from judges.sets.sme import SmeLabel
from judges.stats.estimates.intervals import Estimate, Rate, bootstrap_mean_difference, wilson
from judges.stats.estimates.pairing import (
    EPS,
    all_integers,
    error_counts,
    excluded_dict,
    flag_of,
    number_of,
    one_per_item,
    round4,
    stat_dict,
)
from judges.stats.reliability.agreement import krippendorff_alpha_ordinal, quadratic_kappa, spearman

__all__ = ["DEFAULT_DERIVED", "SmeCalibration", "SmeDisagreement", "sme_calibration"]


# A total a human label may leave implicit: it is the sum of its parts.
DEFAULT_DERIVED: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"core_total": ("factual_accuracy", "completeness", "causal_reasoning")}
)


@dataclass(frozen=True)
class SmeDisagreement:
    item_id: str
    judge: float
    human: float
    labeller: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "judge": round4(self.judge),
            "human": round4(self.human),
            "labeller": self.labeller,
        }


@dataclass(frozen=True)
class SmeCalibration:
    dimension: str
    n_labels: int
    n_pairs: int  # labelled items with both a judge and a human value
    excluded: dict[str, int]  # labelled items left out, by reason
    n_errors: int  # failed judge rows among labelled items
    errors: dict[str, int]
    spearman: Estimate
    kappa: Estimate | None  # quadratic-weighted; None for non-integer values
    alpha: Estimate  # Krippendorff ordinal, judge and human as two raters
    mean_difference: Estimate  # judge - human, paired
    flag: str | None
    flag_agreement: Rate | None
    disagreements: tuple[SmeDisagreement, ...]
    disagreement_at: float

    @property
    def n_excluded(self) -> int:
        return sum(self.excluded.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "n_labels": self.n_labels,
            "n_pairs": self.n_pairs,
            **excluded_dict(self.excluded),
            "n_errors": self.n_errors,
            "errors": self.errors,
            "spearman": self.spearman.as_dict(),
            "kappa": stat_dict(self.kappa),
            "alpha": self.alpha.as_dict(),
            "mean_difference": self.mean_difference.as_dict(),
            "flag": self.flag,
            "flag_agreement": stat_dict(self.flag_agreement),
            "disagreement_at": self.disagreement_at,
            "disagreements": [d.as_dict() for d in self.disagreements],
        }


@dataclass
class _Pairs:
    """Judge and human values of the items both scored, and why the other items are out."""

    ids: list[str] = field(default_factory=list)
    judge: list[float] = field(default_factory=list)
    human: list[float] = field(default_factory=list)
    flags: list[tuple[bool, bool]] = field(default_factory=list)
    excluded: Counter[str] = field(default_factory=Counter)
    failed: list[JudgementRow] = field(default_factory=list)


def _labels_by_item(labels: Sequence[SmeLabel]) -> dict[str, SmeLabel]:
    by_item: dict[str, SmeLabel] = {}
    for label in labels:
        if label.item_id in by_item:
            raise ValueError(
                f"sme_calibration: item {label.item_id!r} has several labels "
                f"({by_item[label.item_id].labeller!r}, {label.labeller!r}); pass one labeller"
            )
        by_item[label.item_id] = label
    return by_item


def _pair_with_labels(
    judged: Mapping[str, JudgementRow],
    by_item: Mapping[str, SmeLabel],
    dimension: str,
    flag: str | None,
    derived: Mapping[str, Sequence[str]],
) -> _Pairs:
    pairs = _Pairs()
    for item_id, label in sorted(by_item.items()):
        row = judged.get(item_id)
        if row is None:
            pairs.excluded["no judge row"] += 1
            continue
        if row.status != "ok":
            pairs.failed.append(row)
            pairs.excluded["judge failed"] += 1
            continue
        if flag is not None:
            judge_flag, human_flag = flag_of(row.verdict, flag), flag_of(label.scores, flag)
            if judge_flag is not None and human_flag is not None:
                pairs.flags.append((judge_flag, human_flag))
        judge_value = number_of(row.verdict, dimension, derived)
        human_value = number_of(label.scores, dimension, derived)
        if judge_value is None:
            pairs.excluded["judge missing value"] += 1
        elif human_value is None:
            pairs.excluded["human missing value"] += 1
        else:
            pairs.ids.append(item_id)
            pairs.judge.append(judge_value)
            pairs.human.append(human_value)
    return pairs


SME_DIMENSION = "core_total"


def sme_dimension(dimensions: Sequence[str]) -> str:
    """The dimension compared with the labels: they score the parts and their total; a judge
    without core_total compares its last dimension, its aggregate by convention (geval's
    overall)."""
    return SME_DIMENSION if SME_DIMENSION in dimensions else dimensions[-1]


def judge_and_human(
    rows: Iterable[JudgementRow],
    labels: Sequence[SmeLabel],
    dimension: str,
    *,
    derived: Mapping[str, Sequence[str]] = DEFAULT_DERIVED,
    run: str = "main",
) -> dict[str, tuple[float, float]]:
    """Per labelled item the judge answered: (judge value, human value) of `dimension`."""
    judged, _ = one_per_item(rows, run, "sme_calibration")
    pairs = _pair_with_labels(judged, _labels_by_item(labels), dimension, None, derived)
    return dict(zip(pairs.ids, zip(pairs.judge, pairs.human, strict=True), strict=True))


def sme_calibration(
    rows: Iterable[JudgementRow],
    labels: Sequence[SmeLabel],
    dimension: str,
    *,
    flag: str | None = None,
    derived: Mapping[str, Sequence[str]] = DEFAULT_DERIVED,
    run: str = "main",
    disagreement_at: float = 2,
) -> SmeCalibration:
    """Judge verdicts of the main run against human labels, paired by item id.

    A value missing on either side is derived from its parts when `derived` names them
    (core_total = factual_accuracy + completeness + causal_reasoning by default).
    """
    judged, _ = one_per_item(rows, run, "sme_calibration")
    by_item = _labels_by_item(labels)
    pairs = _pair_with_labels(judged, by_item, dimension, flag, derived)
    judge_values, human_values = pairs.judge, pairs.human
    disagreements = tuple(
        SmeDisagreement(item_id, j, h, by_item[item_id].labeller)
        for item_id, j, h in zip(pairs.ids, judge_values, human_values, strict=True)
        if abs(j - h) >= disagreement_at - EPS
    )
    integral = all_integers(judge_values + human_values)
    errors = error_counts(pairs.failed)
    flags = pairs.flags
    return SmeCalibration(
        dimension=dimension,
        n_labels=len(by_item),
        n_pairs=len(pairs.ids),
        excluded=dict(sorted(pairs.excluded.items())),
        n_errors=sum(errors.values()),
        errors=errors,
        spearman=spearman(judge_values, human_values),
        kappa=quadratic_kappa(judge_values, human_values) if integral else None,
        alpha=krippendorff_alpha_ordinal(np.array([judge_values, human_values], dtype=float)),
        mean_difference=bootstrap_mean_difference(judge_values, human_values, paired=True),
        flag=flag,
        flag_agreement=(
            None if flag is None else wilson(sum(a == b for a, b in flags), len(flags))
        ),
        disagreements=disagreements,
        disagreement_at=disagreement_at,
    )
