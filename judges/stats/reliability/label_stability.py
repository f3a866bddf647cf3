"""Stability of categorical verdict values, per value: does a label survive another draw?

A judge's `judge.toml` names its categorical fields in `[labels]`, each a verdict path:
`level` (a field) or `judgements[criterion].relevance` (a list whose entries are told apart
by `criterion`, one value each). A unit is an item, or an (item, criterion) pair.

- test-retest (runs `main` and `retest`): per value v, the share of units judged v in the
  main run that the retest judged v again (Wilson interval over those units);
- noise floor (run `noise`, repeats): per value v, the share of units whose first repeat is
  v where every repeat is v.

Failed judgements are counted and reported, never dropped into agreement.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from judges.core.label_paths import read_labels
from judges.core.results import JudgementRow
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import Rate, wilson


@dataclass(frozen=True)
class FieldStability:
    """One categorical field: overall and per value."""

    name: str
    path: str
    overall: Rate
    per_value: dict[str, Rate]
    excluded: dict[str, int]  # units left out, by reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "overall": self.overall.as_dict(),
            "per_value": {value: rate.as_dict() for value, rate in self.per_value.items()},
            "n_excluded": sum(self.excluded.values()),
            "excluded": self.excluded,
        }


@dataclass(frozen=True)
class LabelStability:
    """Per-value stability of every declared label field in one run kind."""

    run: str  # "retest" or "noise"
    fields: dict[str, FieldStability]

    def as_dict(self) -> dict[str, Any]:
        return {"run": self.run, "fields": {n: f.as_dict() for n, f in self.fields.items()}}


def _tally(pairs: Iterable[tuple[str, bool]]) -> tuple[Rate, dict[str, Rate]]:
    """(first value, kept?) pairs -> overall rate and a rate per first value."""
    kept: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for value, same in pairs:
        seen[value] += 1
        kept[value] += same
    overall = wilson(sum(kept.values()), sum(seen.values()))
    return overall, {value: wilson(kept[value], seen[value]) for value in sorted(seen)}


def _by_item(rows: Iterable[JudgementRow], run: str) -> dict[str, list[JudgementRow]]:
    grouped: dict[str, list[JudgementRow]] = {}
    for row in sorted((r for r in rows if r.run == run), key=lambda r: (r.item_id, r.repeat)):
        grouped.setdefault(row.item_id, []).append(row)
    return grouped


def _units(draws: list[JudgementRow], path: str, excluded: Counter[str]) -> list[list[str]]:
    """Each unit's values across the draws of one item, or nothing (with the reason)."""
    if any(row.status != "ok" for row in draws):
        excluded["failed judgement"] += 1
        return []
    read = [read_labels(row.verdict, path) for row in draws]
    if any(values is None for values in read):
        excluded["field absent"] += 1
        return []
    maps = [values for values in read if values is not None]
    keys = sorted(set().union(*maps))
    units = []
    for key in keys:
        if all(key in values for values in maps):
            units.append([values[key] for values in maps])
        else:
            excluded["unit missing in a draw"] += 1
    return units


def _field(
    name: str, path: str, pairs: list[tuple[str, bool]], excluded: Counter[str]
) -> FieldStability:
    overall, per_value = _tally(pairs)
    return FieldStability(name, path, overall, per_value, dict(sorted(excluded.items())))


def retest_stability(
    main_rows: Iterable[JudgementRow],
    retest_rows: Iterable[JudgementRow],
    labels: Mapping[str, str],
) -> LabelStability:
    """Per value: units judged v in `main` that `retest` judged v again."""
    main, retest = _by_item(main_rows, "main"), _by_item(retest_rows, "retest")
    fields = {}
    for name, path in labels.items():
        excluded: Counter[str] = Counter()
        pairs: list[tuple[str, bool]] = []
        for item_id in sorted(set(main) | set(retest)):
            if item_id not in main or item_id not in retest:
                excluded["no pair of runs"] += 1
                continue
            draws = [main[item_id][0], retest[item_id][0]]
            pairs += [(unit[0], unit[0] == unit[1]) for unit in _units(draws, path, excluded)]
        overall, per_value = _tally(pairs)
        fields[name] = FieldStability(
            name, path, overall, per_value, dict(sorted(excluded.items()))
        )
    return LabelStability("retest", fields)


def noise_stability(rows: Iterable[JudgementRow], labels: Mapping[str, str]) -> LabelStability:
    """Per value: units whose first repeat is v where every repeat is v."""
    noise = _by_item(rows, "noise")
    fields = {}
    for name, path in labels.items():
        excluded: Counter[str] = Counter()
        pairs: list[tuple[str, bool]] = []
        for repeats in noise.values():
            if len(repeats) < 2:
                excluded["fewer than 2 repeats"] += 1
                continue
            pairs += [(u[0], len(set(u)) == 1) for u in _units(repeats, path, excluded)]
        overall, per_value = _tally(pairs)
        fields[name] = FieldStability(
            name, path, overall, per_value, dict(sorted(excluded.items()))
        )
    return LabelStability("noise", fields)


def gate_statistics(result: LabelStability) -> dict[str, Rate]:
    """`<run>.<field>` (overall) and `<run>.<field>.<value>` -> its rate; all are minimums."""
    out: dict[str, Rate] = {}
    for name, stability in result.fields.items():
        out[f"{result.run}.{name}"] = stability.overall
        for value, rate in stability.per_value.items():
            out[f"{result.run}.{name}.{value}"] = rate
    return out


def evaluate_stability(
    results: Iterable[LabelStability], thresholds: Mapping[str, float]
) -> list[Gate]:
    """One gate per threshold of gates.toml `label_stability`.

    A value no draw produced this time is a gate without data (not evaluated, never a pass);
    a key naming no run and field is an error that lists the allowed keys.
    """
    allowed: dict[str, Rate] = {}
    fields: set[str] = set()
    for result in results:
        allowed |= gate_statistics(result)
        fields |= {f"{result.run}.{name}." for name in result.fields}
    unknown = sorted(
        key for key in thresholds if key not in allowed and not key.startswith(tuple(fields))
    )
    if unknown:
        raise ValueError(
            f"label_stability: unknown threshold key(s) {unknown}; allowed: "
            f"{', '.join(sorted(allowed))} or <run>.<field>.<value>"
        )
    return [
        Gate(f"label_stability.{key}", allowed.get(key, wilson(0, 0)), float(value), True)
        for key, value in sorted(thresholds.items())
    ]
