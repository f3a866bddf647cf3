"""The evaluator leaderboard: every model that judged a set, ranked by agreement, with
the exact test between neighbours in the ranking (is #1 really better than #2?).

Built from a prompt version's main-run rows of a pairwise judge and the items' outputs;
each entry is `judges.stats.fitness.evaluator.EvaluatorFigures`. Between two neighbours,
the test pairs their items: the items where the upper model's agreement (0, 1/2 or 1) is
higher against those where it is lower, an exact two-sided sign test at 0.5 (McNemar's
exact test; items judged alike carry no evidence).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import McNemar
from judges.stats.fitness.evaluator import (
    EvaluatorFigures,
    Outputs,
    evaluator_figures,
    item_scores,
    sign_test,
)
from judges.stats.fitness.pairwise import Judged, by_category, judged


@dataclass(frozen=True)
class Neighbours:
    """The test between a model and the one ranked just above it, on the items both judged."""

    upper: str
    lower: str
    test: McNemar  # b: items the upper model did better on, c: the lower one

    def as_dict(self) -> dict[str, Any]:
        return {"upper": self.upper, "lower": self.lower, **self.test.as_dict()}


@dataclass(frozen=True)
class SetLeaderboard:
    category: str
    entries: tuple[EvaluatorFigures, ...]  # ranked, best agreement first
    neighbours: tuple[Neighbours, ...]  # neighbours[i]: entries[i] against entries[i + 1]

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "ranking": [
                {"rank": rank, **entry.as_dict()}
                for rank, entry in enumerate(self.entries, start=1)
            ],
            "neighbours": [n.as_dict() for n in self.neighbours],
        }


def neighbour_test(upper: Sequence[Judged], lower: Sequence[Judged]) -> McNemar:
    """Items both judged: where the upper model's agreement is higher, against lower."""
    theirs = {item.item_id: score for item, score in zip(lower, item_scores(lower), strict=True)}
    pairs = [
        (score, theirs[item.item_id])
        for item, score in zip(upper, item_scores(upper), strict=True)
        if item.item_id in theirs
    ]
    return sign_test(sum(a > b for a, b in pairs), sum(a < b for a, b in pairs))


def _per_category(rows: Sequence[JudgementRow]) -> dict[str, dict[str, list[Judged]]]:
    per_model: dict[str, dict[str, list[Judged]]] = {}
    for model in sorted({row.model for row in rows if row.run == "main"}):
        mine = judged(row for row in rows if row.model == model)
        for category, items in by_category(mine).items():
            per_model.setdefault(category, {})[model] = items
    return dict(sorted(per_model.items()))


def _board(
    category: str,
    models: dict[str, list[Judged]],
    rows: Sequence[JudgementRow],
    outputs: Outputs,
) -> SetLeaderboard:
    figures = [
        evaluator_figures(
            model,
            category,
            items,
            outputs,
            [r for r in rows if r.model == model and r.run == "main" and r.category == category],
        )
        for model, items in models.items()
    ]
    # Best agreement first; ties by name so the order never depends on dict order.
    figures.sort(key=lambda f: (-f.agreement.value, f.model))
    neighbours = tuple(
        Neighbours(
            upper.model, lower.model, neighbour_test(models[upper.model], models[lower.model])
        )
        for upper, lower in itertools.pairwise(figures)
    )
    return SetLeaderboard(category, tuple(figures), neighbours)


def leaderboards(rows: Sequence[JudgementRow], outputs: Outputs) -> list[SetLeaderboard]:
    """One leaderboard per set (category) of the rows' pairwise items."""
    return [
        _board(category, models, rows, outputs) for category, models in _per_category(rows).items()
    ]


def leaderboards_by_items(rows: Sequence[JudgementRow], outputs: Outputs) -> list[SetLeaderboard]:
    """Per set, one leaderboard per group of models that judged the same items there: rows
    of several prompt versions (their models labelled apart) ranked together, never a model
    against one that judged other items."""
    boards = []
    for category, models in _per_category(rows).items():
        groups: dict[tuple[str, ...], dict[str, list[Judged]]] = {}
        for model, items in models.items():
            groups.setdefault(tuple(j.item_id for j in items), {})[model] = items
        for _, group in sorted(groups.items(), key=lambda g: (-len(g[0]), g[0])):
            boards.append(_board(category, group, rows, outputs))
    return boards
