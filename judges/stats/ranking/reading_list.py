"""The judge as a ranker of an expert's reading list, next to the citation and random baselines.

One query, graded candidates (4 essential ... 0 excluded by the expert). Every ranker is
scored with the metrics of `judges.stats.ranking.metrics` on the whole list, and each figure gets a
percentile bootstrap interval over the candidates: with a single query an interval over
queries does not exist, so the resampling unit is the candidate (n is reported as both).
The random ranker is the mean of seeded random orderings; its interval is the spread of
those orderings, i.e. what chance alone reaches 95% of the time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judges.core.results import JudgementRow
from judges.sets.reading_list import RUN, ReadingList
from judges.stats.estimates.intervals import Estimate
from judges.stats.estimates.memo import Memo, once
from judges.stats.ranking.metrics import evaluate_ranking, popularity_ranking
from judges.stats.ranking.metrics_matrix import evaluate_rows
from judges.stats.ranking.random_draws import shuffled_labels

# The metrics of a reading list, in the report's order (its section spells them).
SHOWN = ("ndcg@10", "essential_ndcg@10", "recall@10", "mrr", "map", "hard_negative_auc")
N_RESAMPLES = 1000
N_DRAWS = 1000
CONFIDENCE = 0.95


def evaluate_scores(
    scores: Mapping[str, float | None], labels: Mapping[str, int]
) -> dict[str, float]:
    """Metrics of a ranker given as scores, tie-aware: a tie counts as every order of the tied
    candidates; a failed one (None) ranks below every score, never dropped."""
    return evaluate_ranking(dict(scores), labels)


def judge_scores(
    rows: Iterable[JudgementRow], candidate_of: Mapping[str, str]
) -> dict[str, float | None]:
    """Candidate id -> the judge's weighted score (None when the judgement failed).

    `candidate_of` maps item id to candidate id. Every candidate must have exactly one row:
    a missing or doubled judgement is an error, never a silent gap in the ranking.
    """
    scores: dict[str, float | None] = {}
    for row in rows:
        cid = candidate_of[row.item_id]
        if cid in scores:
            raise ValueError(f"candidate {cid} ({row.item_id}) was judged twice in one run")
        score = (row.verdict or {}).get("score") if row.status == "ok" else None
        scores[cid] = float(score) if isinstance(score, int | float) else None
    absent = sorted(set(candidate_of.values()) - set(scores))
    if absent:
        raise ValueError(f"reading-list candidates without a judgement: {absent}")
    return scores


@dataclass(frozen=True)
class RankerFigures:
    """One ranker's metrics on the reading list, each with its interval."""

    name: str
    metrics: dict[str, Estimate]
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "note": self.note,
            "metrics": {key: est.as_dict() for key, est in self.metrics.items()},
        }


def _interval(point: float, samples: np.ndarray, n: int) -> Estimate:
    """The point with the central CONFIDENCE share of `samples`; n counts candidates."""
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return Estimate(float(point), float(low), float(high), n)


def bootstrap_over_candidates(
    scores: Mapping[str, float | None],
    labels: Mapping[str, int],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Each metric of one scored ranker with a percentile interval over resampled candidates.

    A resample draws len(labels) candidates with replacement; a candidate drawn twice enters
    twice (as distinct copies with its score and grade, tied with each other). The estimate's
    n is the number of candidates, not of resamples. All resamples are scored at once, one
    row each (`ranking_matrix.evaluate_rows`).
    """
    ids = sorted(labels)
    missing = sorted(set(ids) - set(scores))
    if missing:
        raise ValueError(f"candidates without a score (use None for a failed one): {missing}")
    point = evaluate_scores({i: scores[i] for i in ids}, labels)  # also validates both
    rng = np.random.default_rng(seed)
    # One draw per resample, in order: the stream the figures were first computed with.
    drawn = np.stack([rng.integers(0, len(ids), len(ids)) for _ in range(n_resamples)])
    grades = np.array([labels[i] for i in ids], dtype=np.int64)
    values = np.array([np.nan if (s := scores[i]) is None else float(s) for i in ids])
    samples = evaluate_rows(grades[drawn], values[drawn])
    return {key: _interval(point[key], samples[key], len(ids)) for key in SHOWN}


def random_figures(
    labels: Mapping[str, int], *, n_draws: int = N_DRAWS, seed: int = 0
) -> dict[str, Estimate]:
    """Mean metric of random orderings, with the central 95% of the orderings as interval."""
    grades = np.array([labels[c] for c in sorted(labels)], dtype=np.int64)
    draws = evaluate_rows(shuffled_labels(grades, n_draws, np.random.default_rng(seed)))
    return {key: _interval(float(np.mean(draws[key])), draws[key], len(grades)) for key in SHOWN}


@dataclass(frozen=True)
class ReadingListResult:
    """The judge and the baselines on one reading list, and the headline answer."""

    query: str
    n_candidates: int
    n_cited: int  # grade >= 1
    n_excluded: int  # grade 0: the expert's hard negatives
    n_failed: int  # candidates the judge gave no score (ranked last)
    rankers: tuple[RankerFigures, ...]

    def ranker(self, name: str) -> RankerFigures:
        return next(r for r in self.rankers if r.name == name)

    def headline(self) -> str:
        """Can the judge separate what the expert cited from what the expert excluded?"""
        auc = self.ranker("judge").metrics["hard_negative_auc"]
        popularity = self.ranker("citations").metrics["hard_negative_auc"].value
        if auc.low > 0.5:
            answer = "Yes"
        elif auc.high < 0.5:
            answer = "No, it ranks them the wrong way round"
        else:
            answer = "Not shown, no better than chance"
        return (
            f"Can the judge separate what the expert cited from what the expert excluded? "
            f"{answer}: hard-negative AUC {auc.value:.2f} [{auc.low:.2f}, {auc.high:.2f}] "
            f"({self.n_cited} cited vs {self.n_excluded} excluded candidates, 1 query, "
            f"bootstrap over candidates), against 0.50 for a random ranking and "
            f"{popularity:.2f} for citation counts."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "n_queries": 1,
            "n_candidates": self.n_candidates,
            "n_cited": self.n_cited,
            "n_excluded": self.n_excluded,
            "n_failed": self.n_failed,
            "headline": self.headline(),
            "rankers": [r.as_dict() for r in self.rankers],
        }


def evaluate_reading_list(
    query: str,
    labels: Mapping[str, int],
    citations: Mapping[str, int],
    judge_scores: Mapping[str, float | None],
    *,
    n_resamples: int = N_RESAMPLES,
    memo: Memo | None = None,
) -> ReadingListResult:
    """The judge's scores, citation counts and random orderings, on the same candidates.

    With the session's `memo`, computed once per run for the same inputs (the test and the
    report of the same rows share it).
    """
    key = (
        "reading_list",
        query,
        tuple(sorted(labels.items())),
        tuple(sorted(citations.items())),
        tuple(sorted(judge_scores.items())),  # ids are unique: scores are never compared
        n_resamples,
    )
    return once(memo, key, lambda: _evaluate(query, labels, citations, judge_scores, n_resamples))


def _evaluate(
    query: str,
    labels: Mapping[str, int],
    citations: Mapping[str, int],
    judge_scores: Mapping[str, float | None],
    n_resamples: int,
) -> ReadingListResult:
    resamples = {"n_resamples": n_resamples}
    popularity = popularity_ranking(dict(citations))
    by_rank = {cid: float(len(popularity) - i) for i, cid in enumerate(popularity)}
    rankers = (
        RankerFigures("judge", bootstrap_over_candidates(judge_scores, labels, **resamples)),
        RankerFigures(
            "citations", bootstrap_over_candidates(by_rank, labels, **resamples), "most cited first"
        ),
        RankerFigures("random", random_figures(labels), "interval: spread of random orderings"),
    )
    return ReadingListResult(
        query=query,
        n_candidates=len(labels),
        n_cited=sum(1 for v in labels.values() if v >= 1),
        n_excluded=sum(1 for v in labels.values() if v == 0),
        n_failed=sum(1 for cid in labels if judge_scores.get(cid) is None),
        rankers=rankers,
    )


def gate_failures(
    result: ReadingListResult, thresholds: Mapping[str, float]
) -> dict[str, tuple[float, float]]:
    """Judge metrics below their minimum in gates.toml: key -> (value, threshold)."""
    unknown = sorted(set(thresholds) - set(SHOWN))
    if unknown:
        raise ValueError(
            f"reading_list gates: unknown metric(s) {unknown}; allowed: {', '.join(SHOWN)}"
        )
    judge = result.ranker("judge").metrics
    return {
        key: (round(judge[key].value, 4), threshold)
        for key, threshold in sorted(thresholds.items())
        if judge[key].value < threshold
    }


def evaluate_run(
    rows: Sequence[JudgementRow],
    reading_list: ReadingList,
    candidate_of: Mapping[str, str],
    memo: Memo | None = None,
) -> ReadingListResult:
    """The judge's run over the reading list (`candidate_of`: item id -> candidate id),
    scored next to the baselines (once per run for the same scores, with the session's
    `memo`)."""
    return evaluate_reading_list(
        reading_list.query,
        reading_list.labels,
        {c.id: c.citations for c in reading_list.candidates},
        judge_scores([row for row in rows if row.run == RUN], candidate_of),
        memo=memo,
    )
