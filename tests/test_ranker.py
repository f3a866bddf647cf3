"""The judge-as-ranker summary: adversarial judges on the relevance set fail its gates."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from judges.core.spec import load_catalog
from judges.reports.sections.ranking import metric_sentence
from judges.sets.planted import load_planted_set
from judges.stats.ranking.metrics import (
    LEVEL_TO_LABEL,
    METRIC_KEYS,
    evaluate_ranking,
    random_expectation,
)
from judges.stats.ranking.ranker import (
    Query,
    below_threshold,
    not_better_than_random,
    summarise,
)

ROOT = Path(__file__).parent.parent / "planted_sets"
GATED = ("ndcg@10", "hard_negative_auc", "mrr")


def relevance_queries(score_of: dict[int, float | None] | None, seed: int = 0) -> list[Query]:
    """The relevance set's queries, scored from each document's expected level.

    `score_of` maps an expected level to a score; None gives every document a random score.
    """
    planted = load_planted_set(ROOT, load_catalog()["relevance"])
    rnd = random.Random(seed)
    queries: dict[str, Query] = {}
    for item in planted.items:
        level = next(e.value for e in item.expect if e.field == "level")
        text, doc = item.inputs["query"], item.inputs["document"]["id"]
        query = queries.setdefault(text, Query(text, {}, {}, {}))
        query.scores[doc] = rnd.random() if score_of is None else score_of[level]
        query.labels[doc] = LEVEL_TO_LABEL[level]
        query.levels[doc] = level
    return list(queries.values())


@pytest.mark.parametrize("constant", [0.0, 0.6, 1.0, None])
def test_a_constant_judge_gets_the_random_expectation_and_fails(constant: float | None) -> None:
    # Constant 1.0 is the judge that finds everything perfectly relevant.
    queries = relevance_queries(dict.fromkeys(range(4), constant))
    for query in queries:
        # Documents are numbered in gold order: a tie broken on the id would score 1.0.
        assert evaluate_ranking(query.scores, query.labels) == random_expectation(query.labels)
    summary = summarise(queries, n_draws=400)
    for key in METRIC_KEYS:
        assert summary.metrics[key].judge.value == pytest.approx(summary.metrics[key].random)
    assert set(not_better_than_random(summary, GATED)) == set(GATED)
    sentence = metric_sentence(summary.metrics["hard_negative_auc"])
    assert sentence.startswith("not better than a random ranking (hard-negative AUC 0.50 [")
    assert "random 0.50;" in sentence


def test_a_random_judge_is_not_better_than_random() -> None:
    summary = summarise(relevance_queries(None, seed=5), n_draws=400)
    assert set(not_better_than_random(summary, GATED)) == set(GATED)


def test_a_judge_that_orders_by_gold_level_beats_random_and_its_gates() -> None:
    summary = summarise(relevance_queries({3: 0.9, 2: 0.7, 1: 0.4, 0: 0.1}), n_draws=400)
    assert not_better_than_random(summary, GATED) == {}
    assert below_threshold(summary, {"ndcg@10": 0.65, "hard_negative_auc": 0.45, "mrr": 0.6}) == {}
    assert summary.metrics["hard_negative_auc"].judge.value == 1.0
    assert metric_sentence(summary.metrics["ndcg@10"]).startswith("better than a random ranking")


def test_queries_are_seeded_apart() -> None:
    seeds = {query.seed for query in relevance_queries({3: 1, 2: 1, 1: 1, 0: 1})}
    assert len(seeds) == 17
