"""The figures a report shows beside a model's verdict, computed here from its rows so that
the report only writes them: detection and error rates with their intervals, scores per
dimension, the comparison with the previous version and with the accepted baseline, the
judge as a ranker, and lenient parsing's coercions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judges.core.results import JudgementRow
from judges.core.spec import JudgeSpec
from judges.sets.planted import PlantedSet
from judges.stats.estimates.floors import (
    control_false_positive_rate,
    detected,
    detection_rates,
    error_rate,
)
from judges.stats.estimates.intervals import Rate, wilson
from judges.stats.estimates.memo import Memo
from judges.stats.ranking.ranker import queries_from_rows, summarise
from judges.stats.regression.comparison import Comparison, compare_versions, numeric

__all__ = [
    "Coercions",
    "baseline_comparison",
    "coercions",
    "dimensions_of",
    "ranking",
    "rates",
    "scores",
    "version_comparisons",
]


def dimensions_of(spec: JudgeSpec | None, rows: Sequence[JudgementRow]) -> tuple[str, ...]:
    if spec is not None:
        return tuple(spec.config.dimensions)
    # Without a spec, every numeric field of a verdict is a dimension.
    found = {
        key
        for row in rows
        if row.run == "main" and row.status == "ok"
        for key in (row.verdict or {})
        if numeric(row.verdict, key) is not None
    }
    return tuple(sorted(found))


def scores(
    main: Sequence[JudgementRow], dimensions: tuple[str, ...]
) -> dict[str, tuple[float, ...]]:
    """Each dimension's answered scores, sorted."""
    return {
        dim: tuple(
            sorted(
                value
                for row in main
                if row.status == "ok" and (value := numeric(row.verdict, dim)) is not None
            )
        )
        for dim in dimensions
    }


def rates(main: Sequence[JudgementRow]) -> dict[str, Any]:
    """Detection per category and overall, control false positives and the error rate."""
    defects = [row for row in main if not row.control]
    return {
        "detection": detection_rates(list(main)),
        "all_defects": wilson(sum(detected(row) for row in defects), len(defects)),
        "control_false_positive": control_false_positive_rate(list(main)),
        "error_rate": error_rate(list(main)),
    }


def version_comparisons(
    judge: str,
    before: tuple[str, Sequence[JudgementRow]],
    after: tuple[str, Sequence[JudgementRow]],
    dimensions: tuple[str, ...],
) -> dict[str, Comparison]:
    """Prompt version `before` against `after`, paired per item, by model."""
    return {c.model: c for c in compare_versions(judge, before, after, dimensions)}


def baseline_comparison(
    judge: str,
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    baseline: str | None,
    previous: Comparison | None,
    baselines: Mapping[str, Sequence[JudgementRow]],
    dimensions: tuple[str, ...],
) -> Comparison | None:
    """This version against the accepted baseline its gates use, where that is not the
    previous version (whose comparison the report has already) nor itself."""
    if baseline is None or baseline == version or (previous and previous.before == baseline):
        return None
    before = [row for row in baselines.get(baseline, ()) if row.model == model]
    if not before:
        return None
    found = compare_versions(judge, (baseline, before), (version, rows), dimensions)
    return next((c for c in found if c.model == model), None)


def ranking(
    model: str,
    version: str,
    main: Sequence[JudgementRow],
    planted: PlantedSet | None,
    memo: Memo | None,
) -> dict[str, Any]:
    """The judge as a ranker, for sets whose gates.toml sets ranking thresholds or records
    a known ranking failure (a judge at chance has no threshold worth setting)."""
    gates = planted.gates.get((model, version)) if planted else None
    ranked = gates is not None and (gates.ranking or gates.ranking_known_failure)
    if planted is None or gates is None or not ranked or not main:
        return {}
    summary = summarise(queries_from_rows(main, planted), memo=memo)
    return {"ranking": summary, "ranking_note": gates.ranking_known_failure}


@dataclass(frozen=True)
class Coercions:
    """Lenient parsing's conversions over a model's main-run rows."""

    n: int  # judgements
    coerced: int  # judgements that needed a conversion
    rate: Rate  # coerced / n with its interval
    per_field: dict[str, int]  # conversions per field (`coverage.score`, ...)


def coercions(rows: Sequence[JudgementRow]) -> Coercions:
    coerced = [row for row in rows if row.coerced]
    per_field = Counter(entry.split(": ", 1)[0] for row in rows for entry in row.coerced)
    return Coercions(len(rows), len(coerced), wilson(len(coerced), len(rows)), dict(per_field))
