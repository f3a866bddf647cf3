"""A release's published figures beside the ones recomputed from its replayed rows.

Each set (category) of an imported model is checked against the figures of the release and
strategy its rows carry in their fingerprint. Rows of one set from two releases or two
strategies are an error, not a reason to skip: the check never goes quiet because a
release was imported from a folder without its README, or a second strategy was imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.calls.backends import is_imported
from judges.core.results import JudgementRow
from judges.sets.benchmark import Published
from judges.sets.imports import published_statistics
from judges.stats.fitness.benchmark import (
    Credits,
    Pair,
    PublishedMatch,
    published_matches,
    subset_scores,
)
from judges.stats.fitness.pairwise import Judged, by_category, judged, llmbar_statistics


@dataclass(frozen=True)
class PublishedCheck:
    """One set of one imported model: its recomputed figures and the published ones."""

    category: str
    source: str
    strategy: str
    recomputed: dict[str, Any]
    published: dict[str, Any] | None  # None: the release published none for this set

    @property
    def equal(self) -> bool:
        return self.published is not None and self.recomputed == self.published


def imported_rows(rows: Sequence[JudgementRow]) -> list[JudgementRow]:
    return [
        r for r in rows if r.run == "main" and is_imported((r.fingerprint or {}).get("backend"))
    ]


def published_checks(
    rows: Sequence[JudgementRow], model: str, planted_sets: Path
) -> list[PublishedCheck]:
    """Every set of `model`'s imported main-run rows, with what its release published.

    Raises ValueError naming the set when its rows come from more than one release or
    strategy (a partial re-import under another name, or two strategies in one version).
    """
    mine = imported_rows(rows)
    fingerprints = {r.item_id: r.fingerprint or {} for r in mine}
    checks = []
    for category, items in by_category(judged(mine)).items():
        prints = [fingerprints[j.item_id] for j in items]
        origins = sorted({(p.get("source", ""), p.get("strategy", "")) for p in prints})
        if len(origins) != 1:
            raise ValueError(
                f"{model} on {category}: rows from {len(origins)} releases or strategies "
                f"({'; '.join(f'{s} ({t})' for s, t in origins)}); import the set again from "
                "one release, each strategy under its own prompt version"
            )
        source, strategy = origins[0]
        published = published_statistics(planted_sets, source, strategy, category, model)
        checks.append(
            PublishedCheck(category, source, strategy, llmbar_statistics(items), published)
        )
    return checks


# --------------------------------------------------------------------------- in the neutral form

# LLMBar's figures that are accuracies under a neutral rule (docs/pairwise-benchmarks.md):
# `correct_False` is the original order alone, the first of the two.
LLMBAR_RULES = {
    "correct_average": "per-judgement",
    "correct_both": "both-orders",
    "correct_False": "single-order",
}
_LABELS = {"1": "A", "2": "B"}


def llmbar_published(stats: dict[str, Any], judge: str, subset: str) -> list[dict[str, Any]]:
    """A release's statistics.json as published rows of the neutral format: `"95.5%"` and
    `"93 / 100 = 93.0%"` are percentages showing their own decimals."""
    rows = []
    for key, rule in LLMBAR_RULES.items():
        if key not in stats:
            continue
        shown = str(stats[key]).rsplit("=", 1)[-1].strip().removesuffix("%")
        try:
            value = float(shown)
        except ValueError:
            raise ValueError(
                f"{judge} on {subset}: {key} = {stats[key]!r} is no percentage"
            ) from None
        row = {"judge": judge, "subset": subset, "rule": rule, "value": value}
        rows.append(row | {"scale": "percent"})
    return rows


def llmbar_pairs(items: Sequence[Judged]) -> list[Pair]:
    """Judged LLMBar items as neutral pairs: labels 1 and 2 are A and B, no winner "none"."""
    return [
        Pair(j.item_id, j.category, _LABELS[j.gold],
             tuple(_LABELS.get(str(w), "none") for w in (j.original, j.swapped)))
        for j in items
    ]  # fmt: skip


def llmbar_neutral_checks(
    items: Sequence[Judged], stats: dict[str, Any], judge: str, subset: str
) -> list[PublishedMatch]:
    """LLMBar's published accuracies checked as any benchmark's are (`published_matches`)."""
    pairs = llmbar_pairs(items)
    found = []
    for row in llmbar_published(stats, judge, subset):
        published = Published.model_validate(row)
        scores = subset_scores(judge, pairs, published.rule, Credits())
        found.append(published_matches(published, next(s for s in scores if s.subset == subset)))
    return found
