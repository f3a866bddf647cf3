"""Judge reliability: noise floor, test-retest, panel cross-check and SME calibration.

Pure functions over result rows. A row that failed (status != "ok") is counted, never dropped:
each statistic is computed over the items where every verdict it needs exists, and the result
says how many items were left out and why. The statistics themselves come from judges.stats.stats.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judges.core.results import JudgementRow
from judges.files import json_lines
from judges.stats.gates import Gate
from judges.stats.stats import (
    Estimate,
    Rate,
    adjacent_agreement,
    bootstrap_mean,
    bootstrap_mean_difference,
    exact_agreement,
    krippendorff_alpha_ordinal,
    minimum_detectable_difference,
    quadratic_kappa,
    spearman,
    wilson,
)

__all__ = [
    "DEFAULT_DERIVED",
    "NoiseDimension",
    "NoiseFloor",
    "Panel",
    "PanelItem",
    "RetestDimension",
    "SmeCalibration",
    "SmeDisagreement",
    "SmeLabel",
    "SmeLabelError",
    "TestRetest",
    "evaluate_reliability",
    "load_sme_labels",
    "noise_floor",
    "panel_agreement",
    "sme_calibration",
    "test_retest",
]

NAN = float("nan")
# A total a human label may leave implicit: it is the sum of its parts.
DEFAULT_DERIVED: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"core_total": ("factual_accuracy", "completeness", "causal_reasoning")}
)
# Means of scores (3.75 - 3.25) carry float residue that must not tip a comparison.
_EPS = 1e-9

T = TypeVar("T")
Stat = Rate | Estimate


# --------------------------------------------------------------------------- helpers


def _round(value: float | None) -> float | None:
    """JSON-ready float: 4 places, nan as None (JSON has no nan)."""
    if value is None or math.isnan(value):
        return None
    return round(float(value), 4)


def _stat_dict(stat: Stat | None) -> dict[str, int | float | None] | None:
    return None if stat is None else stat.as_dict()


def _number(
    values: Mapping[str, Any] | None,
    name: str,
    derived: Mapping[str, Sequence[str]] | None = None,
) -> float | None:
    """A numeric field, or the sum of its parts when only those are given; None if absent."""
    values = values or {}
    raw = values.get(name)
    if raw is None and derived and name in derived:
        parts = [_number(values, part) for part in derived[name]]
        return (
            None if any(p is None for p in parts) else float(sum(p for p in parts if p is not None))
        )
    # bool is an int subclass, but a flag is not a score.
    if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
        return None
    return float(raw)


def _flag(values: Mapping[str, Any] | None, name: str) -> bool | None:
    """The flag when it was set; None (pre-flag prompt, or not answered) is not a value."""
    raw = (values or {}).get(name)
    return raw if isinstance(raw, bool) else None


def _integral(values: Iterable[float]) -> bool:
    return all(float(v).is_integer() for v in values)


def _errors(rows: Iterable[JudgementRow]) -> dict[str, int]:
    return dict(sorted(Counter(row.status for row in rows if row.status != "ok").items()))


def _rows_of_run(rows: Iterable[JudgementRow], run: str, what: str) -> list[JudgementRow]:
    """Rows of one run, checked to come from one (judge, prompt version, model)."""
    selected = [row for row in rows if row.run == run]
    sources = sorted({(row.judge, row.prompt_version, row.model) for row in selected})
    if len(sources) > 1:
        listing = "; ".join(f"{j} {v} {m}" for j, v, m in sources)
        raise ValueError(
            f"{what}: run {run!r} mixes judge/prompt version/model combinations ({listing}); "
            "pass one combination at a time"
        )
    seen: set[tuple[str, int]] = set()
    for row in selected:
        if (row.item_id, row.repeat) in seen:
            raise ValueError(
                f"{what}: two rows for item {row.item_id!r} repeat {row.repeat} in run {run!r}"
            )
        seen.add((row.item_id, row.repeat))
    return selected


def _one_per_item(
    rows: Iterable[JudgementRow], run: str, what: str
) -> tuple[dict[str, JudgementRow], list[JudgementRow]]:
    selected = _rows_of_run(rows, run, what)
    by_item: dict[str, JudgementRow] = {}
    for row in selected:
        if row.item_id in by_item:
            raise ValueError(
                f"{what}: item {row.item_id!r} has several repeats in run {run!r}; "
                "expected one row per item"
            )
        by_item[row.item_id] = row
    return by_item, selected


def _pair(
    left: Mapping[str, JudgementRow],
    right: Mapping[str, JudgementRow],
    left_name: str,
    right_name: str,
) -> tuple[list[tuple[str, dict[str, Any], dict[str, Any]]], Counter[str]]:
    """Items answered on both sides, sorted by id, and why every other item was left out."""
    pairs: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    excluded: Counter[str] = Counter()
    for item_id in sorted(set(left) | set(right)):
        a, b = left.get(item_id), right.get(item_id)
        if a is None:
            excluded[f"no {left_name} row"] += 1
        elif b is None:
            excluded[f"no {right_name} row"] += 1
        elif a.status != "ok" and b.status != "ok":
            excluded["both failed"] += 1
        elif a.status != "ok":
            excluded[f"{left_name} failed"] += 1
        elif b.status != "ok":
            excluded[f"{right_name} failed"] += 1
        else:
            pairs.append((item_id, a.verdict or {}, b.verdict or {}))
    return pairs, excluded


def _paired(
    pairs: Sequence[tuple[str, dict[str, Any], dict[str, Any]]],
    read: Callable[[Mapping[str, Any]], T | None],
) -> tuple[list[str], list[T], list[T], int]:
    """Both sides' values of one field where both have it, plus how many pairs lacked it."""
    ids: list[str] = []
    xs: list[T] = []
    ys: list[T] = []
    for item_id, a, b in pairs:
        x, y = read(a), read(b)
        if x is not None and y is not None:
            ids.append(item_id)
            xs.append(x)
            ys.append(y)
    return ids, xs, ys, len(pairs) - len(ids)


def _excluded_dict(excluded: Mapping[str, int]) -> dict[str, Any]:
    return {"n_excluded": sum(excluded.values()), "excluded": dict(sorted(excluded.items()))}


# --------------------------------------------------------------------------- noise floor


@dataclass(frozen=True)
class NoiseDimension:
    """Repeat-to-repeat noise of one verdict field."""

    mean_sd: Estimate  # mean within-item sd (ddof=1), bootstrapped over items
    pooled_sd: float  # sqrt of the mean within-item variance
    exact_match: Rate  # items whose repeats all agree
    mdd: float  # minimum detectable difference in mean score over mdd_items items
    excluded: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean_sd": self.mean_sd.as_dict(),
            "pooled_sd": _round(self.pooled_sd),
            "exact_match": self.exact_match.as_dict(),
            "mdd": _round(self.mdd),
            **_excluded_dict(self.excluded),
        }


@dataclass(frozen=True)
class NoiseFloor:
    n_items: int  # items in the noise run
    n_repeats: int  # most repeats any item has
    n_rows: int
    n_errors: int
    errors: dict[str, int]  # failed rows by status
    mdd_items: int  # items per prompt version the minimum detectable difference assumes
    dimensions: dict[str, NoiseDimension]
    flag: str | None
    flag_stability: Rate | None
    flag_excluded: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_items": self.n_items,
            "n_repeats": self.n_repeats,
            "n_rows": self.n_rows,
            "n_errors": self.n_errors,
            "errors": self.errors,
            "mdd_items": self.mdd_items,
            "dimensions": {name: d.as_dict() for name, d in self.dimensions.items()},
            "flag": self.flag,
            "flag_stability": _stat_dict(self.flag_stability),
            "flag_excluded": self.flag_excluded,
        }


def _repeat_values(
    repeats: Sequence[JudgementRow], read: Callable[[Mapping[str, Any] | None], T | None]
) -> tuple[list[T] | None, str]:
    """All repeats' values of an item, or None and the reason the item cannot count."""
    if len(repeats) < 2:
        return None, "fewer than 2 repeats"
    if any(row.status != "ok" for row in repeats):
        # One lost repeat hides whether the item was stable; counting the rest would flatter.
        return None, "failed repeat"
    values = [read(row.verdict) for row in repeats]
    if any(v is None for v in values):
        return None, "missing value"
    return [v for v in values if v is not None], ""


def noise_floor(
    rows: Iterable[JudgementRow],
    dimensions: Sequence[str],
    flag: str | None = None,
    *,
    n_items: int | None = None,
    run: str = "noise",
) -> NoiseFloor:
    """Within-item spread of repeated judgements of the same items (rows of run `run`).

    `n_items` is the number of items a prompt-version comparison averages over (the planted
    set's size) for the minimum detectable difference; it defaults to the noise items.
    """
    selected = _rows_of_run(rows, run, "noise_floor")
    by_item: dict[str, list[JudgementRow]] = {}
    for row in sorted(selected, key=lambda r: (r.item_id, r.repeat)):
        by_item.setdefault(row.item_id, []).append(row)
    mdd_items = len(by_item) if n_items is None else n_items
    if mdd_items < 0:
        raise ValueError(f"n_items must be >= 0, got {n_items}")

    dims: dict[str, NoiseDimension] = {}
    for dim in dimensions:
        sds: list[float] = []
        exact = 0
        excluded: Counter[str] = Counter()
        for repeats in by_item.values():
            values, reason = _repeat_values(repeats, lambda v, d=dim: _number(v, d))
            if values is None:
                excluded[reason] += 1
                continue
            sds.append(float(np.std(values, ddof=1)))
            exact += len(set(values)) == 1
        # Variances add, sds do not: the noise in a mean of single judgements is the pooled sd.
        pooled = math.sqrt(float(np.mean(np.square(sds)))) if sds else NAN
        dims[dim] = NoiseDimension(
            mean_sd=bootstrap_mean(sds),
            pooled_sd=pooled,
            exact_match=wilson(exact, len(sds)),
            mdd=NAN if not sds else minimum_detectable_difference(pooled, mdd_items),
            excluded=dict(sorted(excluded.items())),
        )

    stability: Rate | None = None
    flag_excluded: Counter[str] = Counter()
    if flag is not None:
        stable = counted = 0
        for repeats in by_item.values():
            flags, reason = _repeat_values(repeats, lambda v: _flag(v, flag))
            if flags is None:
                flag_excluded[reason] += 1
                continue
            counted += 1
            stable += len(set(flags)) == 1
        stability = wilson(stable, counted)

    errors = _errors(selected)
    return NoiseFloor(
        n_items=len(by_item),
        n_repeats=max((len(r) for r in by_item.values()), default=0),
        n_rows=len(selected),
        n_errors=sum(errors.values()),
        errors=errors,
        mdd_items=mdd_items,
        dimensions=dims,
        flag=flag,
        flag_stability=stability,
        flag_excluded=dict(sorted(flag_excluded.items())),
    )


# --------------------------------------------------------------------------- test-retest


@dataclass(frozen=True)
class RetestDimension:
    n_missing: int  # answered pairs where either run lacks the field
    exact_match: Rate
    mean_abs_delta: Estimate
    kappa: Estimate | None  # quadratic-weighted; None for non-integer fields
    spearman: Estimate

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_missing": self.n_missing,
            "exact_match": self.exact_match.as_dict(),
            "mean_abs_delta": self.mean_abs_delta.as_dict(),
            "kappa": _stat_dict(self.kappa),
            "spearman": self.spearman.as_dict(),
        }


@dataclass(frozen=True)
class TestRetest:
    __test__ = False  # a result, not a pytest test class

    n_pairs: int  # items answered in both runs
    excluded: dict[str, int]  # items left out, by reason
    n_errors: int
    errors: dict[str, dict[str, int]]  # failed rows by run, then status
    dimensions: dict[str, RetestDimension]
    flag: str | None
    flag_stability: Rate | None
    flag_missing: int

    @property
    def n_excluded(self) -> int:
        return sum(self.excluded.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_pairs": self.n_pairs,
            **_excluded_dict(self.excluded),
            "n_errors": self.n_errors,
            "errors": self.errors,
            "dimensions": {name: d.as_dict() for name, d in self.dimensions.items()},
            "flag": self.flag,
            "flag_stability": _stat_dict(self.flag_stability),
            "flag_missing": self.flag_missing,
        }


def test_retest(
    main_rows: Iterable[JudgementRow],
    retest_rows: Iterable[JudgementRow],
    dimensions: Sequence[str],
    flag: str | None = None,
    *,
    main_run: str = "main",
    retest_run: str = "retest",
) -> TestRetest:
    """Agreement of two independent runs over the same items, paired by item id."""
    main, main_selected = _one_per_item(main_rows, main_run, "test_retest main")
    retest, retest_selected = _one_per_item(retest_rows, retest_run, "test_retest retest")
    pairs, excluded = _pair(main, retest, "main", "retest")

    dims: dict[str, RetestDimension] = {}
    for dim in dimensions:
        _, a, b, missing = _paired(pairs, lambda v, d=dim: _number(v, d))
        deltas = [abs(x - y) for x, y in zip(a, b, strict=True)]
        dims[dim] = RetestDimension(
            n_missing=missing,
            exact_match=exact_agreement(a, b),
            mean_abs_delta=bootstrap_mean(deltas),
            kappa=quadratic_kappa(a, b) if _integral(a + b) else None,
            spearman=spearman(a, b),
        )

    stability: Rate | None = None
    flag_missing = 0
    if flag is not None:
        _, fa, fb, flag_missing = _paired(pairs, lambda v: _flag(v, flag))
        stability = wilson(sum(x == y for x, y in zip(fa, fb, strict=True)), len(fa))

    errors = {"main": _errors(main_selected), "retest": _errors(retest_selected)}
    return TestRetest(
        n_pairs=len(pairs),
        excluded=dict(sorted(excluded.items())),
        n_errors=sum(sum(e.values()) for e in errors.values()),
        errors=errors,
        dimensions=dims,
        flag=flag,
        flag_stability=stability,
        flag_missing=flag_missing,
    )


# Imported into a test module, the name would otherwise be collected as a test.
test_retest.__test__ = False  # type: ignore[attr-defined]


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
            "primary": _round(self.primary),
            "cross": _round(self.cross),
            "difference": _round(self.difference),
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
        return abs(diff) > self.contested_threshold + _EPS

    def as_dict(self) -> dict[str, Any]:
        return {
            "primary_label": self.primary_label,
            "cross_label": self.cross_label,
            "contested_threshold": self.contested_threshold,
            "n_pairs": self.n_pairs,
            **_excluded_dict(self.excluded),
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
            "flag_agreement": _stat_dict(self.flag_agreement),
        }


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
    primary, primary_selected = _one_per_item(primary_rows, primary_run, "panel primary")
    cross, cross_selected = _one_per_item(cross_rows, cross_run, "panel cross-check")
    pairs, excluded = _pair(primary, cross, "primary", "cross")

    # Counting the aggregate as one more dimension would count each item's scores twice.
    rubric = [d for d in dimensions if d != overall]
    by_dim: dict[str, Rate] = {}
    pooled_a: list[float] = []
    pooled_b: list[float] = []
    for dim in rubric:
        _, a, b, _ = _paired(pairs, lambda v, d=dim: _number(v, d))
        by_dim[dim] = adjacent_agreement(a, b, tolerance=1)
        pooled_a += a
        pooled_b += b

    def overall_score(verdict: Mapping[str, Any]) -> float | None:
        direct = _number(verdict, overall)
        if direct is not None:
            return direct
        values = [_number(verdict, d) for d in rubric]
        if not values or any(v is None for v in values):
            return None
        return float(np.mean([v for v in values if v is not None]))

    ids, p, c, overall_missing = _paired(pairs, overall_score)
    items = tuple(
        PanelItem(item_id, x, y, abs(x - y) > contested_threshold + _EPS)
        for item_id, x, y in zip(ids, p, c, strict=True)
    )

    flag_rate: dict[str, Rate] = {}
    flag_agreement: Rate | None = None
    if flag is not None:
        for side, index in (("primary", 1), ("cross", 2)):
            flags = [f for f in (_flag(pair[index], flag) for pair in pairs) if f is not None]
            flag_rate[side] = wilson(sum(not f for f in flags), len(flags))
        _, fa, fb, _ = _paired(pairs, lambda v: _flag(v, flag))
        flag_agreement = wilson(sum(x == y for x, y in zip(fa, fb, strict=True)), len(fa))

    errors = {"primary": _errors(primary_selected), "cross": _errors(cross_selected)}
    return Panel(
        primary_label=primary_label,
        cross_label=cross_label,
        contested_threshold=contested_threshold,
        n_pairs=len(pairs),
        excluded=dict(sorted(excluded.items())),
        n_errors=sum(sum(e.values()) for e in errors.values()),
        errors=errors,
        agreement=adjacent_agreement(pooled_a, pooled_b, tolerance=1),
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


# --------------------------------------------------------------------------- SME calibration


class SmeLabelError(ValueError):
    """An SME label file is malformed; the message names file and line."""


class SmeLabel(BaseModel):
    """One human label of one item; score fields (e.g. core_total) are extra fields."""

    model_config = ConfigDict(extra="allow", frozen=True)

    item_id: str = Field(min_length=1)
    labeller: str = Field(min_length=1)
    method: str
    note: str = ""

    @property
    def scores(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def load_sme_labels(path: Path | str) -> list[SmeLabel]:
    """Every label of a JSONL file, one object a line; blank lines are allowed."""
    path = Path(path)
    labels: list[SmeLabel] = []
    seen: dict[tuple[str, str], int] = {}
    for number, raw in json_lines(path, SmeLabelError):
        if not isinstance(raw, dict):
            raise SmeLabelError(
                f"{path}:{number}: expected a JSON object, got {type(raw).__name__}"
            )
        try:
            label = SmeLabel.model_validate(raw)
        except ValidationError as error:
            problems = "; ".join(
                f"field {'.'.join(str(p) for p in e['loc']) or '<label>'!r}: {e['msg']}"
                for e in error.errors(include_url=False)
            )
            raise SmeLabelError(f"{path}:{number}: {problems}") from None
        key = (label.item_id, label.labeller)
        if key in seen:
            raise SmeLabelError(
                f"{path}:{number}: item {label.item_id!r} by {label.labeller!r} already "
                f"labelled on line {seen[key]}"
            )
        seen[key] = number
        labels.append(label)
    return labels


@dataclass(frozen=True)
class SmeDisagreement:
    item_id: str
    judge: float
    human: float
    labeller: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "judge": _round(self.judge),
            "human": _round(self.human),
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
            **_excluded_dict(self.excluded),
            "n_errors": self.n_errors,
            "errors": self.errors,
            "spearman": self.spearman.as_dict(),
            "kappa": _stat_dict(self.kappa),
            "alpha": self.alpha.as_dict(),
            "mean_difference": self.mean_difference.as_dict(),
            "flag": self.flag,
            "flag_agreement": _stat_dict(self.flag_agreement),
            "disagreement_at": self.disagreement_at,
            "disagreements": [d.as_dict() for d in self.disagreements],
        }


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
    judged, _ = _one_per_item(rows, run, "sme_calibration")
    by_item: dict[str, SmeLabel] = {}
    for label in labels:
        if label.item_id in by_item:
            raise ValueError(
                f"sme_calibration: item {label.item_id!r} has several labels "
                f"({by_item[label.item_id].labeller!r}, {label.labeller!r}); pass one labeller"
            )
        by_item[label.item_id] = label

    ids: list[str] = []
    judge_values: list[float] = []
    human_values: list[float] = []
    flag_pairs: list[tuple[bool, bool]] = []
    excluded: Counter[str] = Counter()
    failed: list[JudgementRow] = []
    for item_id, label in sorted(by_item.items()):
        row = judged.get(item_id)
        if row is None:
            excluded["no judge row"] += 1
            continue
        if row.status != "ok":
            failed.append(row)
            excluded["judge failed"] += 1
            continue
        if flag is not None:
            judge_flag, human_flag = _flag(row.verdict, flag), _flag(label.scores, flag)
            if judge_flag is not None and human_flag is not None:
                flag_pairs.append((judge_flag, human_flag))
        judge_value = _number(row.verdict, dimension, derived)
        human_value = _number(label.scores, dimension, derived)
        if judge_value is None:
            excluded["judge missing value"] += 1
        elif human_value is None:
            excluded["human missing value"] += 1
        else:
            ids.append(item_id)
            judge_values.append(judge_value)
            human_values.append(human_value)

    disagreements = tuple(
        SmeDisagreement(item_id, j, h, by_item[item_id].labeller)
        for item_id, j, h in zip(ids, judge_values, human_values, strict=True)
        if abs(j - h) >= disagreement_at - _EPS
    )
    integral = _integral(judge_values + human_values)
    errors = _errors(failed)
    return SmeCalibration(
        dimension=dimension,
        n_labels=len(by_item),
        n_pairs=len(ids),
        excluded=dict(sorted(excluded.items())),
        n_errors=sum(errors.values()),
        errors=errors,
        spearman=spearman(judge_values, human_values),
        kappa=quadratic_kappa(judge_values, human_values) if integral else None,
        alpha=krippendorff_alpha_ordinal(np.array([judge_values, human_values], dtype=float)),
        mean_difference=bootstrap_mean_difference(judge_values, human_values, paired=True),
        flag=flag,
        flag_agreement=(
            None if flag is None else wilson(sum(a == b for a, b in flag_pairs), len(flag_pairs))
        ),
        disagreements=disagreements,
        disagreement_at=disagreement_at,
    )


# --------------------------------------------------------------------------- gates


Reliability = NoiseFloor | TestRetest | Panel | SmeCalibration
_SECTIONS: dict[str, type] = {
    "noise_floor": NoiseFloor,
    "test_retest": TestRetest,
    "panel": Panel,
    "sme": SmeCalibration,
}


def gate_statistics(result: Reliability) -> dict[str, tuple[Stat, bool]]:
    """Every threshold key a result supports: key -> (statistic, at_least)."""
    out: dict[str, tuple[Stat, bool]] = {}
    if isinstance(result, NoiseFloor):
        for dim, noise in result.dimensions.items():
            out[f"min_exact_match.{dim}"] = (noise.exact_match, True)
            out[f"max_sd.{dim}"] = (noise.mean_sd, False)
        if result.flag_stability is not None:
            out["min_flag_stability"] = (result.flag_stability, True)
    elif isinstance(result, TestRetest):
        for dim, retest in result.dimensions.items():
            out[f"min_exact_match.{dim}"] = (retest.exact_match, True)
            out[f"max_mean_abs_delta.{dim}"] = (retest.mean_abs_delta, False)
            if retest.kappa is not None:
                out[f"min_kappa.{dim}"] = (retest.kappa, True)
        if result.flag_stability is not None:
            out["min_flag_stability"] = (result.flag_stability, True)
    elif isinstance(result, Panel):
        out["min_adjacent_agreement"] = (result.agreement, True)
        out["max_contested_rate"] = (result.contested_rate, False)
    else:
        out["min_spearman"] = (result.spearman, True)
        if result.kappa is not None:
            out["min_kappa"] = (result.kappa, True)
    return out


def evaluate_reliability(
    section_name: str, result: Reliability, thresholds: Mapping[str, float]
) -> list[Gate]:
    """One gate per threshold (e.g. `"min_exact_match.core_total" = 0.4`), in key order.

    Each gates on the point estimate of its statistic.
    """
    expected = _SECTIONS.get(section_name)
    if expected is None:
        raise ValueError(
            f"unknown reliability section {section_name!r}; allowed: {', '.join(_SECTIONS)}"
        )
    if not isinstance(result, expected):
        raise ValueError(
            f"section {section_name!r} takes a {expected.__name__}, got {type(result).__name__}"
        )
    allowed = gate_statistics(result)
    gates: list[Gate] = []
    for key in sorted(thresholds):
        threshold = thresholds[key]
        if key not in allowed:
            hint = ""
            if key.startswith("min_kappa") or key == "min_flag_stability":
                hint = " (kappa needs integer scores; flag stability needs a flag)"
            raise ValueError(
                f"{section_name}: unknown threshold key {key!r}{hint}; allowed: "
                f"{', '.join(sorted(allowed))}"
            )
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValueError(
                f"{section_name}: threshold {key!r} must be a number, got {threshold!r}"
            )
        stat, at_least = allowed[key]
        gates.append(Gate(f"{section_name}.{key}", stat, float(threshold), at_least))
    return gates
