"""Rows to paired values: one verdict per item and run, with the items left out counted.

Shared by the reliability analyses (noise floor, test-retest, panel, SME calibration); a
row that failed is counted among the exclusions, never dropped silently.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import Estimate, Rate

__all__ = [
    "EPS",
    "NAN",
    "Stat",
    "T",
    "all_integers",
    "error_counts",
    "excluded_dict",
    "flag_of",
    "number_of",
    "one_per_item",
    "pair_rows",
    "paired_values",
    "round4",
    "rows_of_run",
    "stat_dict",
]


NAN = float("nan")
# Means of scores (3.75 - 3.25) carry float residue that must not tip a comparison.
EPS = 1e-9

T = TypeVar("T")
Stat = Rate | Estimate


def round4(value: float | None) -> float | None:
    """JSON-ready float: 4 places, nan as None (JSON has no nan)."""
    if value is None or math.isnan(value):
        return None
    return round(float(value), 4)


def stat_dict(stat: Stat | None) -> dict[str, int | float | None] | None:
    return None if stat is None else stat.as_dict()


def number_of(
    values: Mapping[str, Any] | None,
    name: str,
    derived: Mapping[str, Sequence[str]] | None = None,
) -> float | None:
    """A numeric field, or the sum of its parts when only those are given; None if absent."""
    values = values or {}
    raw = values.get(name)
    if raw is None and derived and name in derived:
        parts = [number_of(values, part) for part in derived[name]]
        return (
            None if any(p is None for p in parts) else float(sum(p for p in parts if p is not None))
        )
    # bool is an int subclass, but a flag is not a score.
    if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
        return None
    return float(raw)


def flag_of(values: Mapping[str, Any] | None, name: str) -> bool | None:
    """The flag when it was set; None (pre-flag prompt, or not answered) is not a value."""
    raw = (values or {}).get(name)
    return raw if isinstance(raw, bool) else None


def all_integers(values: Iterable[float]) -> bool:
    return all(float(v).is_integer() for v in values)


def error_counts(rows: Iterable[JudgementRow]) -> dict[str, int]:
    return dict(sorted(Counter(row.status for row in rows if row.status != "ok").items()))


def rows_of_run(rows: Iterable[JudgementRow], run: str, what: str) -> list[JudgementRow]:
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


def one_per_item(
    rows: Iterable[JudgementRow], run: str, what: str
) -> tuple[dict[str, JudgementRow], list[JudgementRow]]:
    selected = rows_of_run(rows, run, what)
    by_item: dict[str, JudgementRow] = {}
    for row in selected:
        if row.item_id in by_item:
            raise ValueError(
                f"{what}: item {row.item_id!r} has several repeats in run {run!r}; "
                "expected one row per item"
            )
        by_item[row.item_id] = row
    return by_item, selected


def pair_rows(
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


def paired_values(
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


def excluded_dict(excluded: Mapping[str, int]) -> dict[str, Any]:
    return {"n_excluded": sum(excluded.values()), "excluded": dict(sorted(excluded.items()))}
