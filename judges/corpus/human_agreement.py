"""Each judge against the human labels: how often its verdict is the human's, kappa, the
confusion table, and the judgements where the two disagree (for the review queue).

A judge's verdicts (its first run) and the labels' are read on the corpus's scale (a side of
the midpoint, or the nearest level), on the outputs both judged and labelled. The intervals
resample items, as the judge change's do (`change.agreement`): the judgements of one item
share its difficulty, so an interval over judgements would be too narrow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from judges.corpus.change import agreement, has_adjacent_levels, verdicts
from judges.corpus.manifest import Scale
from judges.corpus.rows import Corpus
from judges.corpus.table import ScoreMatrix, label_matrix
from judges.stats.estimates.intervals import Estimate, Rate


@dataclass(frozen=True)
class HumanAgreement:
    judge: str
    labels: int  # labels on the systems this judge judged
    exact: Rate  # over the judgements with a label
    adjacent: Rate | None  # scales of three levels or more: within one level
    kappa: Estimate  # quadratic-weighted (Cohen's on two verdicts), intervals resampling items
    verdicts: tuple[str, ...]  # the confusion table's rows and columns, in order
    confusion: tuple[tuple[int, ...], ...]  # [human verdict][judge verdict] -> judgements
    disagreeing: tuple[dict[str, Any], ...]  # the review queue's rows, largest gap first


def verdict_names(codes: np.ndarray, scale: Scale) -> tuple[str, ...]:
    """A verdict code in words: below/at/above the midpoint, or the level's score."""
    if scale.verdict == "side":
        return tuple({-1.0: "below", 0.0: "at", 1.0: "above"}[float(c)] for c in codes)
    assert scale.step is not None
    return tuple(f"{scale.low + float(c) * scale.step:g}" for c in codes)


def human_agreement(corpus: Corpus, matrix: ScoreMatrix) -> HumanAgreement | None:
    """The judge of `matrix` (systems x items) against the corpus's labels; None when no
    system it judged has a label."""
    scale = corpus.manifest.scale
    labels = label_matrix(corpus, matrix.systems)
    labelled = int(np.count_nonzero(~np.isnan(labels)))
    if labelled == 0:
        return None
    human, judge = verdicts(labels, scale), verdicts(matrix.scores, scale)
    exact, adjacent, kappa = agreement(
        human, judge, has_adjacent_levels(scale), corpus.manifest.seed
    )
    both = ~np.isnan(human) & ~np.isnan(judge)
    codes = np.unique(np.concatenate([human[both], judge[both]]))
    confusion = np.zeros((codes.size, codes.size), dtype=int)
    np.add.at(confusion, (np.searchsorted(codes, human[both]),
                          np.searchsorted(codes, judge[both])), 1)  # fmt: skip
    rows = []
    for s, i in zip(*np.nonzero(both & (human != judge)), strict=True):
        score, label = float(matrix.scores[s, i]), float(labels[s, i])
        rows.append({
            "system": matrix.systems[s], "item": matrix.items[i], "judge": matrix.judge,
            "score": score, "label": label, "change": score - label,
            "reason": f"{matrix.judge} disagrees with the human label",
        })  # fmt: skip
    rows.sort(key=lambda row: (-abs(row["change"]), row["system"], row["item"]))
    return HumanAgreement(
        matrix.judge, labelled, exact, adjacent, kappa, verdict_names(codes, scale),
        tuple(tuple(int(v) for v in row) for row in confusion), tuple(rows),
    )  # fmt: skip


def human_agreements(corpus: Corpus, mains: dict[str, ScoreMatrix]) -> tuple[HumanAgreement, ...]:
    """Each judge's first run (its reference left out) against the labels."""
    if not corpus.labels:
        return ()
    found = (
        human_agreement(corpus, matrix.without(corpus.manifest.judges[judge].reference))
        for judge, matrix in mains.items()
    )
    return tuple(a for a in found if a is not None)
