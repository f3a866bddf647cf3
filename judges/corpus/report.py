"""A corpus -> its report as data: each judge's systems, their ranking and who is first,
the change between two judges, test-retest where a judge has a second run, PPI++ where
there are labels, the published figures recomputed, and the review queue."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judges.corpus.change import JudgeChange, compare_judges
from judges.corpus.estimates import (
    N_RESAMPLES,
    PairedDifference,
    SystemScore,
    paired_differences,
    probability_first,
    resampled_means,
    system_scores,
)
from judges.corpus.human_agreement import HumanAgreement, human_agreements
from judges.corpus.manifest import CorpusError
from judges.corpus.ppi import PPIEstimate, ppi_estimates
from judges.corpus.published import FigureCheck, check_published
from judges.corpus.review_queue import changed_verdicts
from judges.corpus.rows import Corpus
from judges.corpus.table import ScoreMatrix, label_matrix, score_matrices


@dataclass(frozen=True)
class JudgeSummary:
    judge: str
    description: str
    reference: str | None
    scores: tuple[SystemScore, ...]  # ranked, best first
    differences: tuple[PairedDifference, ...]
    first: dict[str, float]  # P(first) by the item bootstrap
    # The judge's reference when it is also a system here: judged against itself, its
    # score is set by construction (a tie on every item), so it is shown, not ranked.
    reference_score: SystemScore | None = None
    ppi_systems: tuple[PPIEstimate, ...] = ()
    ppi_differences: tuple[PPIEstimate, ...] = ()

    def better_than(self, system: str) -> list[str]:
        return self._decided.get(system, [])

    @functools.cached_property
    def _decided(self) -> dict[str, list[str]]:
        """better -> every system it is decided better than, in the order of the pairs."""
        found: dict[str, list[str]] = {}
        for d in self.differences:
            if d.decided:
                found.setdefault(d.better, []).append(d.worse)
        return found


@dataclass(frozen=True)
class CorpusReport:
    corpus: Corpus
    judges: tuple[JudgeSummary, ...]
    change: JudgeChange | None
    change_caveat: str | None  # the two judges' references differ
    retests: tuple[JudgeChange, ...]
    published: tuple[FigureCheck, ...]
    queue: tuple[dict[str, Any], ...]
    errors: dict[str, int] = field(default_factory=dict)  # judge -> error rows
    human: tuple[HumanAgreement, ...] = ()  # each judge against labels.jsonl

    @property
    def review_rows(self) -> tuple[dict[str, Any], ...]:
        """review_queue.jsonl: the judge change's queue, then each judge's disagreements
        with the human labels."""
        return self.queue + tuple(row for h in self.human for row in h.disagreeing)

    @property
    def name(self) -> str:
        return self.corpus.manifest.name


def _aligned(a: ScoreMatrix, b: ScoreMatrix) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    systems = tuple(s for s in a.systems if s in b.systems)
    return (
        systems,
        np.stack([a.row(s) for s in systems]) if systems else np.empty((0, len(a.items))),
        np.stack([b.row(s) for s in systems]) if systems else np.empty((0, len(b.items))),
    )


def _summary(corpus: Corpus, full: ScoreMatrix) -> JudgeSummary:
    manifest = corpus.manifest
    scale = manifest.scale
    entry = manifest.judges[full.judge]
    matrix = full.without(entry.reference)
    reference_score = None
    if entry.reference in full.systems:
        reference_score = system_scores(
            (entry.reference,), full.row(entry.reference)[None, :], full.errors, scale,
            manifest.seed, full.flags[[full.systems.index(entry.reference)]],
        )[0]  # fmt: skip
    scores = system_scores(
        matrix.systems, matrix.scores, matrix.errors, scale, manifest.seed, matrix.flags
    )
    sign = 1 if scale.higher_is_better else -1
    # A system without a single score (every judgement an error row) is ranked last.
    ranked = tuple(sorted(scores, key=lambda s: (
        math.isnan(s.score.mean), 0.0 if math.isnan(s.score.mean) else -sign * s.score.mean,
        s.system,
    )))  # fmt: skip
    first = probability_first(
        resampled_means(matrix.scores, N_RESAMPLES, manifest.seed), scale.higher_is_better
    )
    ppi_systems: list[PPIEstimate] = []
    ppi_differences: list[PPIEstimate] = []
    if corpus.labels:
        labels = label_matrix(corpus, matrix.systems)
        ppi_systems, ppi_differences = ppi_estimates(matrix.systems, labels, matrix.scores)
    return JudgeSummary(
        matrix.judge, entry.description, entry.reference, ranked,
        tuple(paired_differences(matrix.systems, matrix.scores, scale.higher_is_better,
                                 scale.high - scale.low, manifest.seed)),
        dict(zip(matrix.systems, map(float, first), strict=True)),
        reference_score, tuple(ppi_systems), tuple(ppi_differences),
    )  # fmt: skip


def _pair(corpus: Corpus, mains: dict[str, ScoreMatrix]) -> tuple[str, str] | None:
    compare = corpus.manifest.compare
    if compare.before or compare.after:
        pair = (compare.before, compare.after)
        for judge in pair:
            if judge not in mains:
                raise CorpusError(
                    f"{corpus.folder / 'corpus.toml'}: [compare] names judge {judge!r}, which "
                    f"judged nothing (judges with judgements: {', '.join(mains)})"
                )
        return pair  # type: ignore[return-value]
    names = list(mains)
    return (names[0], names[1]) if len(names) >= 2 else None


def build_report(corpus: Corpus) -> CorpusReport:
    manifest = corpus.manifest
    scale = manifest.scale
    if corpus.summarised is not None:  # the columnar store's (store.py, engine.py)
        matrices = dict(corpus.summarised.matrices)
    else:
        matrices = score_matrices(corpus)
    mains = {judge: m for (judge, run), m in matrices.items() if run == 0}
    summaries = tuple(_summary(corpus, m) for m in mains.values())

    change, caveat = None, None
    queue: tuple[dict[str, Any], ...] = ()
    pair = _pair(corpus, mains)
    if pair is not None:
        # A system that is either judge's reference has a score by construction there.
        references = (manifest.judges[pair[0]].reference, manifest.judges[pair[1]].reference)
        before, after = mains[pair[0]], mains[pair[1]]
        for reference in references:
            before, after = before.without(reference), after.without(reference)
        systems, b, a = _aligned(before, after)
        if systems:
            change = compare_judges(
                pair[0], pair[1], systems, b, a, scale, manifest.compare.substitution_agreement,
                manifest.contested_margin(), manifest.seed,
            )  # fmt: skip
            queue = tuple(changed_verdicts(systems, before.items, b, a, scale, pair))
        if references[0] != references[1]:
            caveat = (
                f"{pair[0]} scores against {references[0] or 'no reference'}, {pair[1]} "
                f"against {references[1] or 'no reference'}: the change is one of judge and "
                "reference together, not of the judge alone"
            )
    retests = []
    for (judge, run), matrix in matrices.items():
        if run == 1 and judge in mains:
            reference = manifest.judges[judge].reference
            systems, b, a = _aligned(mains[judge].without(reference), matrix.without(reference))
            retests.append(compare_judges(
                f"{judge} run 0", f"{judge} run 1", systems, b, a, scale,
                manifest.compare.substitution_agreement, manifest.contested_margin(), manifest.seed,
            ))  # fmt: skip
    errors = {judge: sum(m.errors.values()) for judge, m in mains.items()}
    return CorpusReport(
        corpus, summaries, change, caveat, tuple(retests),
        tuple(check_published(corpus.published, mains, scale)), queue, errors,
        human_agreements(corpus, mains),
    )  # fmt: skip
