"""Rows -> arrays: one matrix of scores per judge and run, systems by items, NaN where a
system was not judged on an item (absent from the release, or an error row). Items are the
columns every statistic resamples: they are what the systems share."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from judges.corpus.rows import Corpus


@dataclass(frozen=True)
class ScoreMatrix:
    judge: str
    run: int
    systems: tuple[str, ...]
    items: tuple[str, ...]
    scores: np.ndarray  # (systems, items), NaN = no score
    errors: dict[str, int]  # system -> error rows (judged, but no score)
    flags: np.ndarray  # (systems, items): 1 flagged by the judge, 0 not, NaN no flag given

    def row(self, system: str) -> np.ndarray:
        return self.scores[self.systems.index(system)]

    def without(self, system: str | None) -> ScoreMatrix:
        """The matrix without one system (a judge's reference, judged against itself)."""
        if system not in self.systems:
            return self
        keep = [i for i, s in enumerate(self.systems) if s != system]
        return ScoreMatrix(
            self.judge, self.run, tuple(self.systems[i] for i in keep), self.items,
            self.scores[keep], {s: n for s, n in self.errors.items() if s != system},
            self.flags[keep],
        )  # fmt: skip

    def judged(self, system: str) -> int:
        return int(np.count_nonzero(~np.isnan(self.row(system))))


def item_index(corpus: Corpus) -> dict[str, int]:
    return {item.id: column for column, item in enumerate(corpus.items)}


def score_matrices(corpus: Corpus) -> dict[tuple[str, int], ScoreMatrix]:
    """(judge, run) -> its matrix over the corpus's systems that judge judged, manifest order."""
    columns = item_index(corpus)
    items = tuple(columns)
    keys = sorted(
        {(j.judge, j.run) for j in corpus.judgements},
        key=lambda key: (list(corpus.manifest.judges).index(key[0]), key[1]),
    )
    matrices: dict[tuple[str, int], ScoreMatrix] = {}
    for judge, run in keys:
        rows = [j for j in corpus.judgements if j.judge == judge and j.run == run]
        systems = tuple(dict.fromkeys(j.system for j in rows))
        scores = np.full((len(systems), len(items)), np.nan)
        flags = np.full_like(scores, np.nan)
        where = {system: index for index, system in enumerate(systems)}
        for j in rows:
            if j.score is not None:
                scores[where[j.system], columns[j.item]] = float(j.score)
                if j.flagged is not None:
                    flags[where[j.system], columns[j.item]] = float(j.flagged)
        errors = Counter(j.system for j in rows if j.score is None)
        matrices[(judge, run)] = ScoreMatrix(
            judge, run, systems, items, scores, {s: errors.get(s, 0) for s in systems}, flags
        )
    return matrices


def label_matrix(corpus: Corpus, systems: tuple[str, ...]) -> np.ndarray:
    """The gold labels on the same grid (NaN where unlabelled)."""
    columns = item_index(corpus)
    labels = np.full((len(systems), len(columns)), np.nan)
    for label in corpus.labels:
        if label.system in systems:
            labels[systems.index(label.system), columns[label.item]] = float(label.score)
    return labels
