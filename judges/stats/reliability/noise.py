"""Repeat and retest stability of one judge: the noise floor and test-retest."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import (
    Estimate,
    Rate,
    bootstrap_mean,
    minimum_detectable_difference,
    wilson,
)
from judges.stats.estimates.pairing import (
    NAN,
    T,
    all_integers,
    error_counts,
    excluded_dict,
    flag_of,
    number_of,
    one_per_item,
    pair_rows,
    paired_values,
    round4,
    rows_of_run,
    stat_dict,
)
from judges.stats.reliability.agreement import exact_agreement, quadratic_kappa, spearman

__all__ = [
    "NoiseDimension",
    "NoiseFloor",
    "RetestDimension",
    "TestRetest",
    "noise_floor",
    "test_retest",
]


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
            "pooled_sd": round4(self.pooled_sd),
            "exact_match": self.exact_match.as_dict(),
            "mdd": round4(self.mdd),
            **excluded_dict(self.excluded),
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
            "flag_stability": stat_dict(self.flag_stability),
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


def _noise_dimension(
    by_item: Mapping[str, Sequence[JudgementRow]], dim: str, mdd_items: int
) -> NoiseDimension:
    sds: list[float] = []
    exact = 0
    excluded: Counter[str] = Counter()
    for repeats in by_item.values():
        values, reason = _repeat_values(repeats, lambda v: number_of(v, dim))
        if values is None:
            excluded[reason] += 1
            continue
        sds.append(float(np.std(values, ddof=1)))
        exact += len(set(values)) == 1
    # Variances add, sds do not: the noise in a mean of single judgements is the pooled sd.
    pooled = math.sqrt(float(np.mean(np.square(sds)))) if sds else NAN
    return NoiseDimension(
        mean_sd=bootstrap_mean(sds),
        pooled_sd=pooled,
        exact_match=wilson(exact, len(sds)),
        mdd=NAN if not sds else minimum_detectable_difference(pooled, mdd_items),
        excluded=dict(sorted(excluded.items())),
    )


def _flag_stability(
    by_item: Mapping[str, Sequence[JudgementRow]], flag: str
) -> tuple[Rate, Counter[str]]:
    """Share of items whose repeats all give the same flag, and why the others are out."""
    excluded: Counter[str] = Counter()
    stable = counted = 0
    for repeats in by_item.values():
        flags, reason = _repeat_values(repeats, lambda v: flag_of(v, flag))
        if flags is None:
            excluded[reason] += 1
            continue
        counted += 1
        stable += len(set(flags)) == 1
    return wilson(stable, counted), excluded


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
    selected = rows_of_run(rows, run, "noise_floor")
    by_item: dict[str, list[JudgementRow]] = {}
    for row in sorted(selected, key=lambda r: (r.item_id, r.repeat)):
        by_item.setdefault(row.item_id, []).append(row)
    mdd_items = len(by_item) if n_items is None else n_items
    if mdd_items < 0:
        raise ValueError(f"n_items must be >= 0, got {n_items}")

    dims = {dim: _noise_dimension(by_item, dim, mdd_items) for dim in dimensions}
    stability: Rate | None = None
    flag_excluded: Counter[str] = Counter()
    if flag is not None:
        stability, flag_excluded = _flag_stability(by_item, flag)

    errors = error_counts(selected)
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
            "kappa": stat_dict(self.kappa),
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
            **excluded_dict(self.excluded),
            "n_errors": self.n_errors,
            "errors": self.errors,
            "dimensions": {name: d.as_dict() for name, d in self.dimensions.items()},
            "flag": self.flag,
            "flag_stability": stat_dict(self.flag_stability),
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
    """Agreement of two independent runs over the same items, paired by item id. A retest
    of several draws (repeats) counts its first; the others feed the agreement gate."""
    retest_rows = [row for row in retest_rows if row.repeat == 0]
    main, main_selected = one_per_item(main_rows, main_run, "test_retest main")
    retest, retest_selected = one_per_item(retest_rows, retest_run, "test_retest retest")
    pairs, excluded = pair_rows(main, retest, "main", "retest")

    dims: dict[str, RetestDimension] = {}
    for dim in dimensions:
        _, a, b, missing = paired_values(pairs, partial(number_of, name=dim))
        deltas = [abs(x - y) for x, y in zip(a, b, strict=True)]
        dims[dim] = RetestDimension(
            n_missing=missing,
            exact_match=exact_agreement(a, b),
            mean_abs_delta=bootstrap_mean(deltas),
            kappa=quadratic_kappa(a, b) if all_integers(a + b) else None,
            spearman=spearman(a, b),
        )

    stability: Rate | None = None
    flag_missing = 0
    if flag is not None:
        _, fa, fb, flag_missing = paired_values(pairs, lambda v: flag_of(v, flag))
        stability = wilson(sum(x == y for x, y in zip(fa, fb, strict=True)), len(fa))

    errors = {"main": error_counts(main_selected), "retest": error_counts(retest_selected)}
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


# Imported into a test module, the name would otherwise be collected as a test. (mypy knows
# no attributes on a function but its own.)
test_retest.__test__ = False  # type: ignore[attr-defined]
