"""Tie-aware ranking metrics against trec_eval, sklearn and brute force over tie orderings."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from judges.stats.ranking import metrics as rk
from judges.stats.ranking.random_draws import draw_metrics, permutations, random_baseline

Scores = dict[str, float | None]


def brute_force(scores: Mapping[str, float | None], labels: Mapping[str, int]) -> dict[str, float]:
    """Mean of every metric over every ordering of the tied candidates, enumerated."""
    groups = rk.tie_groups(scores)
    totals = dict.fromkeys(rk.METRIC_KEYS, 0.0)
    count = 0
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        ranking = [cid for order in orders for cid in order]
        for key, value in rk.evaluate_ranking(ranking, labels).items():
            totals[key] += value
        count += 1
    return {key: total / count for key, total in totals.items()}


def random_case(rnd: random.Random, n: int, score_pool: list[float | None]) -> tuple[Scores, dict]:
    labels = {f"d{i:02d}": rnd.randint(0, 4) for i in range(n)}
    return {cid: rnd.choice(score_pool) for cid in labels}, labels


# --------------------------------------------------------------------------- brute force


def test_tied_scores_equal_the_mean_over_every_tie_ordering() -> None:
    rnd = random.Random(20081)
    pool: list[float | None] = [0.0, 0.5, 0.5, 1.0, None, math.nan]
    for _ in range(200):
        scores, labels = random_case(rnd, rnd.randint(1, 7), pool)
        expected = brute_force(scores, labels)
        actual = rk.evaluate_ranking(scores, labels)
        assert actual == pytest.approx(expected, abs=1e-12), (scores, labels)


def test_failed_scores_rank_below_every_real_score() -> None:
    labels = {"a": 4, "b": 0, "c": 0}
    for failed in (None, math.nan):
        scores = {"a": failed, "b": 0.1, "c": -5.0}
        assert rk.mrr(scores, labels) == pytest.approx(1 / 3)
        assert rk.hard_negative_auc(scores, labels) == 0.0
    # Two failed documents tie at the bottom: each order is equally likely.
    assert rk.mrr({"a": None, "b": None, "c": 1.0}, labels) == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_scores_must_be_numbers() -> None:
    with pytest.raises(ValueError, match="'a'"):
        rk.evaluate_ranking({"a": True, "b": 0.0}, {"a": 1, "b": 0})
    with pytest.raises(ValueError, match="'a'"):
        rk.evaluate_ranking({"a": "0.5", "b": 0.0}, {"a": 1, "b": 0})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="'ghost'"):
        rk.evaluate_ranking({"ghost": 1.0}, {"a": 1})


# --------------------------------------------------------------------------- trec_eval, sklearn


def _trec(qrels: dict[str, int], run: dict[str, float], measures: set[str]) -> dict[str, float]:
    evaluator = pytrec_eval.RelevanceEvaluator({"q": qrels}, measures)
    return evaluator.evaluate({"q": run})["q"]


def test_untied_cases_match_trec_eval() -> None:
    rnd = random.Random(7)
    for case in range(300):
        n = rnd.randint(2, 30)
        labels = {f"d{i:02d}": rnd.randint(0, 4) for i in range(n)}
        labels["d00"], labels["d01"] = 4, 0  # every gain and relevance threshold is defined
        returned = rnd.sample(sorted(labels), rnd.randint(1, n)) if case % 3 == 0 else labels
        values = rnd.sample(range(10_000), len(returned))
        scores = {cid: float(v) for cid, v in zip(returned, values, strict=True)}
        run = {cid: float(v) for cid, v in scores.items()}
        graded = _trec({c: 2**v - 1 for c, v in labels.items()}, run, {"ndcg_cut_10,20"})
        relevant = _trec(
            {c: int(v >= 3) for c, v in labels.items()},
            run,
            {"recall_10", "recip_rank", "ndcg_cut_10"},
        )
        essential = _trec({c: int(v >= 4) for c, v in labels.items()}, run, {"ndcg_cut_10"})
        cited = _trec(dict(labels), run, {"map"})
        ours = rk.evaluate_ranking(scores, labels)
        theirs = {
            "ndcg@10": graded["ndcg_cut_10"],
            "ndcg@20": graded["ndcg_cut_20"],
            "recall@10": relevant["recall_10"],
            "mrr": relevant["recip_rank"],
            "map": cited["map"],
            "essential_ndcg@10": essential["ndcg_cut_10"],
            "relevant_ndcg@10": relevant["ndcg_cut_10"],
        }
        for key, value in theirs.items():
            # trec_eval prints through float and keeps 4 decimals in some measures.
            assert ours[key] == pytest.approx(value, abs=1e-4), (key, scores, labels)


def test_tied_auc_matches_sklearn() -> None:
    rnd = random.Random(11)
    checked = 0
    for _ in range(300):
        scores, labels = random_case(rnd, rnd.randint(2, 40), [0.0, 0.25, 0.5, 0.5, 1.0, None])
        truth = [int(labels[c] >= 1) for c in sorted(labels)]
        if len(set(truth)) < 2:
            assert rk.hard_negative_auc(scores, labels) == 0.5
            continue
        # A failed score ranks below every real one.
        flat = [-1.0 if scores[c] is None else scores[c] for c in sorted(labels)]
        assert rk.hard_negative_auc(scores, labels) == pytest.approx(roc_auc_score(truth, flat))
        checked += 1
    assert checked > 250


# --------------------------------------------------------------------------- properties

small_labels = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=2), st.integers(0, 4), min_size=1, max_size=6
)
score_values = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.none(), st.just(math.nan))


@st.composite
def scored(draw: st.DrawFn) -> tuple[Scores, dict[str, int]]:
    labels = draw(small_labels)
    scores = {cid: draw(score_values) for cid in sorted(labels)}
    return scores, labels


@settings(max_examples=80, deadline=None)
@given(scored(), st.randoms(use_true_random=False))
def test_renaming_or_reordering_ids_never_changes_a_metric(
    case: tuple[Scores, dict[str, int]], rnd: random.Random
) -> None:
    scores, labels = case
    ids = sorted(labels)
    # The planted set numbers documents in gold order: reversing the names inverts it.
    new_names = [f"doc-{i:02d}" for i in range(len(ids))]
    rnd.shuffle(new_names)
    rename = dict(zip(ids, new_names, strict=True))
    order = list(ids)
    rnd.shuffle(order)
    renamed_scores = {rename[c]: scores[c] for c in order}
    renamed_labels = {rename[c]: labels[c] for c in reversed(order)}
    assert rk.evaluate_ranking(renamed_scores, renamed_labels) == pytest.approx(
        rk.evaluate_ranking(scores, labels), abs=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(small_labels, st.sampled_from([0.0, 0.7, -3.0, None]))
def test_a_constant_score_gets_exactly_the_random_expectation(
    labels: dict[str, int], constant: float | None
) -> None:
    constant_scores = dict.fromkeys(labels, constant)
    every_order = [rk.evaluate_ranking(list(p), labels) for p in itertools.permutations(labels)]
    mean = {key: sum(m[key] for m in every_order) / len(every_order) for key in rk.METRIC_KEYS}
    assert rk.evaluate_ranking(constant_scores, labels) == pytest.approx(mean, abs=1e-12)
    assert rk.random_expectation(labels) == pytest.approx(mean, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(scored(), st.data())
def test_better_ordered_scores_never_score_lower(
    case: tuple[Scores, dict[str, int]], data: st.DataObject
) -> None:
    scores, labels = case
    real = {c: s for c, s in scores.items() if s is not None and not math.isnan(s)}
    pairs = [(a, b) for a in labels for b in labels if labels[a] > labels[b]]
    # Better ordered: swap the scores of a misordered pair, or lift a best-labelled document
    # above everything (it then passes only documents labelled no higher).
    misordered = [(a, b) for a, b in pairs if a in real and b in real and real[a] < real[b]]
    best = [c for c in labels if labels[c] == max(labels.values())]
    better = dict(scores)
    if misordered and data.draw(st.booleans()):
        a, b = data.draw(st.sampled_from(misordered))
        better[a], better[b] = scores[b], scores[a]
    else:
        better[data.draw(st.sampled_from(best))] = 10.0
    before, after = rk.evaluate_ranking(scores, labels), rk.evaluate_ranking(better, labels)
    for key in rk.METRIC_KEYS:
        assert after[key] >= before[key] - 1e-12, (key, scores, better)


def test_seeded_draws_agree_with_the_exact_random_expectation() -> None:
    labels = {f"c{i}": i % 5 for i in range(12)}
    draws = random_baseline(sorted(labels), labels, n_draws=4000, seed=3)
    exact = rk.random_expectation(labels)
    for key in rk.METRIC_KEYS:
        assert draws[key] == pytest.approx(exact[key], abs=0.02), key


def test_vectorised_draws_equal_the_scalar_metrics_draw_by_draw() -> None:
    rnd = random.Random(3)
    for _ in range(40):
        labels = {f"d{i:02d}": rnd.randint(0, 4) for i in range(rnd.randint(1, 25))}
        # Sometimes only some candidates are returned: the others count as unreturned.
        candidates = sorted(rnd.sample(sorted(labels), rnd.randint(1, len(labels))))
        seed = rnd.randrange(1000)
        draws = draw_metrics(candidates, labels, n_draws=30, seed=seed)
        for row, order in enumerate(permutations(len(candidates), 30, seed)):
            expected = rk.evaluate_ranking([candidates[i] for i in order], labels)
            for key in rk.METRIC_KEYS:
                assert draws[key][row] == pytest.approx(expected[key], abs=1e-12), key
    with pytest.raises(ValueError, match="'ghost'"):
        draw_metrics(["ghost"], {"a": 1}, n_draws=2, seed=0)
