"""A pairwise judge's sets: per set, every judge model's figures against chance and its
floors, the McNemar tests between models and the leaderboards, computed from a version's
main-run rows (`judges.stats.fitness.pairwise`) with each model's gates.toml table, so
`python -m judges report` rebuilds them without judging. `judges.reports.sections.pairwise`
words them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judges.core.results import JudgementRow
from judges.sets.items import PlantedItem
from judges.sets.planted import Gates, PlantedSet
from judges.stats.fitness.evaluator import Outputs
from judges.stats.fitness.leaderboard import SetLeaderboard, leaderboards
from judges.stats.fitness.pairwise import (
    ModelPair,
    SetOutcome,
    by_category,
    gated_outcomes,
    is_pairwise,
    judged,
    llmbar_statistics,
    model_pairs,
)
from judges.verdicts.vocabulary import FAIL, NOT_FIT, PASS, Verdict

__all__ = [
    "ModelSet",
    "PairwiseReport",
    "folder_pairwise",
    "outputs_of",
    "pairwise_report",
    "set_verdict",
]


@dataclass(frozen=True)
class ModelSet:
    model: str
    outcome: SetOutcome
    llmbar: dict[str, Any]  # a release's `statistics.json` figures, recomputed from the rows


def set_verdict(outcome: SetOutcome) -> Verdict:
    """NOT FIT unless better than chance; FAIL when the agreement floor fails; else PASS."""
    if not outcome.figures.chance.fit:
        return NOT_FIT
    return FAIL if outcome.agreement_passed is False else PASS


@dataclass(frozen=True)
class PairwiseReport:
    sets: dict[str, tuple[ModelSet, ...]]  # category -> one entry per model
    pairs: tuple[ModelPair, ...]  # McNemar between models, per category
    leaderboards: tuple[SetLeaderboard, ...] = ()  # per category, models ranked

    def problems(self) -> list[str]:
        """Sets a model is NOT FIT on, or FAILs, that gates.toml does not accept."""
        return [
            f"{entry.model} {category}: {set_verdict(entry.outcome)}"
            for category, entries in self.sets.items()
            for entry in entries
            if set_verdict(entry.outcome) != PASS and not entry.outcome.accepted
        ]


def outputs_of(items: Sequence[PlantedItem]) -> dict[str, tuple[str, str]]:
    """Item id -> its two outputs (output_1, output_2), as the leaderboard reads them."""
    return {
        item.id: (str(item.inputs.get("output_1", "")), str(item.inputs.get("output_2", "")))
        for item in items
    }


def pairwise_report(
    rows: Sequence[JudgementRow], gates: Mapping[str, Gates | None], outputs: Outputs
) -> PairwiseReport | None:
    """`gates`: model -> its table for this version (None: no floors, nothing accepted);
    `outputs`: item id -> its two outputs, for the leaderboard's length and list figures."""
    by_model = {
        model: judged(r for r in rows if r.model == model)
        for model in sorted({row.model for row in rows if row.run == "main"})
    }
    by_model = {model: items for model, items in by_model.items() if items}
    if not by_model:
        return None
    sets: dict[str, list[ModelSet]] = {}
    for model, items in by_model.items():
        found = gated_outcomes(items, gates.get(model))
        grouped = by_category(items)
        for outcome in found:
            category = outcome.figures.category
            entry = ModelSet(model, outcome, llmbar_statistics(grouped[category]))
            sets.setdefault(category, []).append(entry)
    return PairwiseReport(
        {c: tuple(entries) for c, entries in sorted(sets.items())},
        tuple(model_pairs(by_model)),
        tuple(leaderboards(rows, outputs)),
    )


def folder_pairwise(
    version: str, rows: Sequence[JudgementRow], planted: PlantedSet | None
) -> PairwiseReport | None:
    """A report folder's pairwise sets, when its rows are a pairwise judge's."""
    if not is_pairwise(rows):
        return None
    gates = {
        model: planted.gates.get((model, version)) if planted is not None else None
        for model in {row.model for row in rows}
    }
    return pairwise_report(rows, gates, outputs_of(planted.items if planted else ()))
