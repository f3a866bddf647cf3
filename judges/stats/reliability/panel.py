"""Panel cross-check: a primary and a cross-check judge scoring the same items."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import (
    Estimate,
    Rate,
    bootstrap_mean,
    bootstrap_mean_difference,
    wilson,
)
from judges.stats.estimates.pairing import (
    EPS,
    error_counts,
    excluded_dict,
    flag_of,
    number_of,
    one_per_item,
    pair_rows,
    paired_values,
    round4,
    stat_dict,
)
from judges.stats.reliability.agreement import adjacent_agreement

__all__ = ["Panel", "PanelItem", "panel_agreement"]


# --------------------------------------------------------------------------- panel


@dataclass(frozen=True)
class PanelItem:
    item_id: str
    primary: float  # the primary judge's overall score
    cross: float
    contested: bool

    @property
    def difference(self) -> float:
        return self.primary - self.cross

    def as_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "primary": round4(self.primary),
            "cross": round4(self.cross),
            "difference": round4(self.difference),
            "contested": self.contested,
        }


@dataclass(frozen=True)
class Panel:
    primary_label: str
    cross_label: str
    contested_threshold: float
    n_pairs: int  # items answered by both judges
    excluded: dict[str, int]
    n_errors: int
    errors: dict[str, dict[str, int]]  # failed rows by judge ("primary"/"cross"), then status
    agreement: Rate  # exact-or-adjacent over all item x dimension pairs
    agreement_by_dimension: dict[str, Rate]
    items: tuple[PanelItem, ...]
    overall_missing: int  # answered pairs without an overall score on either side
    contested_rate: Rate
    mean_overall: dict[str, Estimate]  # "primary", "cross"
    overall_difference: Estimate  # primary - cross, paired over items
    flag: str | None
    flag_rate: dict[str, Rate]  # share of items flagged False, per judge
    flag_agreement: Rate | None

    @property
    def n_excluded(self) -> int:
        return sum(self.excluded.values())

    @property
    def contested(self) -> list[str]:
        return [item.item_id for item in self.items if item.contested]

    @property
    def contested_overall(self) -> bool | None:
        """The finale-tier rule applied to the overall means rather than per item."""
        diff = self.overall_difference.value
        if math.isnan(diff):
            return None
        return abs(diff) > self.contested_threshold + EPS

    def as_dict(self) -> dict[str, Any]:
        return {
            "primary_label": self.primary_label,
            "cross_label": self.cross_label,
            "contested_threshold": self.contested_threshold,
            "n_pairs": self.n_pairs,
            **excluded_dict(self.excluded),
            "n_errors": self.n_errors,
            "errors": self.errors,
            "agreement": self.agreement.as_dict(),
            "agreement_by_dimension": {
                name: rate.as_dict() for name, rate in self.agreement_by_dimension.items()
            },
            "items": [item.as_dict() for item in self.items],
            "overall_missing": self.overall_missing,
            "contested": self.contested,
            "contested_rate": self.contested_rate.as_dict(),
            "mean_overall": {side: e.as_dict() for side, e in self.mean_overall.items()},
            "overall_difference": self.overall_difference.as_dict(),
            "contested_overall": self.contested_overall,
            "flag": self.flag,
            "flag_rate": {side: rate.as_dict() for side, rate in self.flag_rate.items()},
            "flag_agreement": stat_dict(self.flag_agreement),
        }


Pairs = Sequence[tuple[str, dict[str, Any], dict[str, Any]]]


def _overall_score(verdict: Mapping[str, Any], overall: str, rubric: Sequence[str]) -> float | None:
    """The verdict's overall field, else the mean of the rubric dimensions (all present)."""
    direct = number_of(verdict, overall)
    if direct is not None:
        return direct
    values = [number_of(verdict, d) for d in rubric]
    if not values or any(v is None for v in values):
        return None
    return float(np.mean([v for v in values if v is not None]))


def _agreement(pairs: Pairs, rubric: Sequence[str]) -> tuple[dict[str, Rate], Rate]:
    """Exact-or-adjacent agreement per rubric dimension, and pooled over them all."""
    by_dim: dict[str, Rate] = {}
    pooled_a: list[float] = []
    pooled_b: list[float] = []
    for dim in rubric:
        _, a, b, _ = paired_values(pairs, partial(number_of, name=dim))
        by_dim[dim] = adjacent_agreement(a, b, tolerance=1)
        pooled_a += a
        pooled_b += b
    return by_dim, adjacent_agreement(pooled_a, pooled_b, tolerance=1)


def _flags(pairs: Pairs, flag: str) -> tuple[dict[str, Rate], Rate]:
    """Each side's rate of a false flag, and how often the two sides' flags agree."""
    flag_rate: dict[str, Rate] = {}
    sides = {"primary": [a for _, a, _ in pairs], "cross": [b for _, _, b in pairs]}
    for side, verdicts in sides.items():
        flags = [f for f in (flag_of(verdict, flag) for verdict in verdicts) if f is not None]
        flag_rate[side] = wilson(sum(not f for f in flags), len(flags))
    _, fa, fb, _ = paired_values(pairs, lambda v: flag_of(v, flag))
    return flag_rate, wilson(sum(x == y for x, y in zip(fa, fb, strict=True)), len(fa))


def panel_agreement(
    primary_rows: Iterable[JudgementRow],
    cross_rows: Iterable[JudgementRow],
    dimensions: Sequence[str],
    *,
    primary_label: str,
    cross_label: str,
    contested_threshold: float = 0.5,
    overall: str = "overall",
    flag: str | None = None,
    primary_run: str = "main",
    cross_run: str = "panel",
) -> Panel:
    """A cross-check judge against the primary on the same items.

    An item is contested when the two overall scores differ by more than the threshold; the
    overall score is the verdict's `overall` field, else the mean of the other dimensions.
    Agreement covers the rubric dimensions only: `overall`, if listed, is their aggregate.
    """
    if contested_threshold < 0:
        raise ValueError(f"contested_threshold must be >= 0, got {contested_threshold}")
    primary, primary_selected = one_per_item(primary_rows, primary_run, "panel primary")
    cross, cross_selected = one_per_item(cross_rows, cross_run, "panel cross-check")
    pairs, excluded = pair_rows(primary, cross, "primary", "cross")

    # Counting the aggregate as one more dimension would count each item's scores twice.
    rubric = [d for d in dimensions if d != overall]
    by_dim, agreement = _agreement(pairs, rubric)

    ids, p, c, overall_missing = paired_values(pairs, lambda v: _overall_score(v, overall, rubric))
    items = tuple(
        PanelItem(item_id, x, y, abs(x - y) > contested_threshold + EPS)
        for item_id, x, y in zip(ids, p, c, strict=True)
    )
    flag_rate, flag_agreement = _flags(pairs, flag) if flag is not None else ({}, None)

    errors = {"primary": error_counts(primary_selected), "cross": error_counts(cross_selected)}
    return Panel(
        primary_label=primary_label,
        cross_label=cross_label,
        contested_threshold=contested_threshold,
        n_pairs=len(pairs),
        excluded=dict(sorted(excluded.items())),
        n_errors=sum(sum(e.values()) for e in errors.values()),
        errors=errors,
        agreement=agreement,
        agreement_by_dimension=by_dim,
        items=items,
        overall_missing=overall_missing,
        contested_rate=wilson(sum(item.contested for item in items), len(items)),
        mean_overall={"primary": bootstrap_mean(p), "cross": bootstrap_mean(c)},
        overall_difference=bootstrap_mean_difference(p, c, paired=True),
        flag=flag,
        flag_rate=flag_rate,
        flag_agreement=flag_agreement,
    )
