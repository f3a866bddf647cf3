"""A judge as a ranker: per query, its scores order the planted documents.

Each query's documents are ranked by the judge's score, tie-aware (a tie is every order of
the tied documents, a failed judgement ranks last), and scored against the expected levels
of the planted set. The random ranking is given exactly (its expectation) and by seeded
draws, seeded per query, which give the chance that a random ranking does as well.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import Estimate, bootstrap_mean
from judges.stats.estimates.memo import Memo, once
from judges.stats.ranking.metrics import (
    LEVEL_TO_LABEL,
    METRIC_KEYS,
    evaluate_ranking,
    lower_bound_corrected_ndcg,
    random_expectation,
)
from judges.stats.ranking.random_draws import draw_metrics

N_DRAWS = 2000
ALPHA = 0.05


class _Items(Protocol):
    def item(self, item_id: str) -> Any: ...


@dataclass(frozen=True)
class Query:
    """One query's documents: score (None = failed), label, and the judge's own level."""

    text: str
    scores: dict[str, float | None]
    labels: dict[str, int]
    levels: dict[str, int | None]

    @property
    def seed(self) -> int:
        # From the query text, so queries never share one permutation and reruns agree.
        return int.from_bytes(hashlib.sha256(self.text.encode()).digest()[:4], "big")


@dataclass(frozen=True)
class MetricSummary:
    """One metric's mean over queries, with its interval, the random value and its p."""

    key: str
    judge: Estimate
    random: float
    p_value: float  # share of random rankings whose mean is at least the judge's

    @property
    def better_than_random(self) -> bool:
        return self.judge.value > self.random and self.p_value < ALPHA

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.key,
            **self.judge.as_dict(),
            "random": round(self.random, 4),
            "p_value": round(self.p_value, 4),
            "better_than_random": self.better_than_random,
        }


@dataclass(frozen=True)
class RankerSummary:
    queries: int
    documents: int
    metrics: dict[str, MetricSummary] = field(default_factory=dict)

    def means(self) -> dict[str, float]:
        return {key: round(m.judge.value, 4) for key, m in self.metrics.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "queries": self.queries,
            "documents": self.documents,
            "metrics": [metric.as_dict() for metric in self.metrics.values()],
        }


def queries_from_rows(rows: Sequence[JudgementRow], planted: _Items) -> list[Query]:
    """Group a relevance run's rows by query; every planted document is kept, judged or not."""
    grouped: dict[str, Query] = {}
    for row in sorted(rows, key=lambda r: r.key):
        item = planted.item(row.item_id)
        expected = next(e.value for e in item.expect if e.field == "level")
        verdict = row.verdict or {}
        ok = row.status == "ok"
        doc = item.inputs["document"]["id"]
        query = grouped.setdefault(item.inputs["query"], Query(item.inputs["query"], {}, {}, {}))
        query.scores[doc] = verdict.get("score") if ok else None
        query.labels[doc] = LEVEL_TO_LABEL[expected]
        query.levels[doc] = verdict.get("level") if ok else None
    return [grouped[text] for text in sorted(grouped)]


def per_query(queries: Sequence[Query]) -> list[dict[str, float]]:
    """Tie-aware metrics of each query, with asta-bench's lower-bound-corrected nDCG.

    asta-bench ranks by the judge's own levels; a level follows from the score, so tied
    scores have equal levels and the order inside a tie cannot move that figure.
    """
    out = []
    for query in queries:
        order = sorted(query.scores, key=lambda d: _sort_key(query.scores[d]))
        levels = [query.levels[d] or 0 for d in order]
        out.append(
            evaluate_ranking(query.scores, query.labels)
            | {"lbc_ndcg": lower_bound_corrected_ndcg(levels)}
        )
    return out


def _sort_key(score: float | None) -> float:
    return -score if score is not None and score == score else float("inf")


def summarise(
    queries: Sequence[Query], n_draws: int = N_DRAWS, memo: Memo | None = None
) -> RankerSummary:
    """Means over queries with bootstrap intervals, against the random ranking; once per run
    for the same queries with the session's `memo` (the test and the report share it)."""
    key = (
        "ranker",
        n_draws,
        tuple(
            (q.text, *(tuple(sorted(m.items())) for m in (q.scores, q.labels, q.levels)))
            for q in queries
        ),
    )
    return once(memo, key, lambda: _summarise(queries, n_draws))


def _summarise(queries: Sequence[Query], n_draws: int) -> RankerSummary:
    judged = per_query(queries)
    expected = [random_expectation(q.labels) for q in queries]
    draws = [draw_metrics(list(q.labels), q.labels, n_draws=n_draws, seed=q.seed) for q in queries]
    metrics = {}
    for key in METRIC_KEYS:
        values = np.array([m[key] for m in judged])
        random_means = np.mean([d[key] for d in draws], axis=0)
        judge = bootstrap_mean(values)
        at_least = int(np.sum(random_means >= judge.value - 1e-12))
        metrics[key] = MetricSummary(
            key=key,
            judge=judge,
            random=float(np.mean([e[key] for e in expected])),
            p_value=(1 + at_least) / (1 + n_draws),
        )
    documents = sum(len(q.labels) for q in queries)
    return RankerSummary(len(queries), documents, metrics)


def below_threshold(summary: RankerSummary, thresholds: Mapping[str, float]) -> dict[str, Any]:
    """Metrics whose mean is below their gate: (value, threshold)."""
    return {
        key: (round(summary.metrics[key].judge.value, 4), threshold)
        for key, threshold in thresholds.items()
        if summary.metrics[key].judge.value < threshold
    }


def not_better_than_random(summary: RankerSummary, keys: Iterable[str]) -> dict[str, MetricSummary]:
    """Gated metrics on which the judge does not beat a random ranking (the sentence a reader
    sees: judges.reports.sections.ranking)."""
    return {
        key: summary.metrics[key] for key in keys if not summary.metrics[key].better_than_random
    }
