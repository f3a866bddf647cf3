"""Unit tests for judges.stats.ranking.metrics: hand-computed examples, order invariance."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from fractions import Fraction

import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from judges.stats.ranking import metrics as rk
from judges.stats.ranking.random_draws import random_baseline

# A small query: 2 essential, 1 relevant, 1 tool, 1 background, 2 hard negatives.
LABELS: dict[str, int] = {"e1": 4, "e2": 4, "r1": 3, "t1": 2, "b1": 1, "n1": 0, "n2": 0}
RUN = ["r1", "n1", "e1", "b1", "n2", "t1"]  # e2 never returned


def log2_discount(rank: int) -> float:
    return 1 / math.log2(rank + 1)


# --------------------------------------------------------------------------- explicit examples


def test_dcg_by_hand() -> None:
    assert rk.dcg([3, 2, 3, 0, 1, 2]) == pytest.approx(
        3 + 2 / math.log2(3) + 3 / 2 + 0 + 1 / math.log2(6) + 2 / math.log2(7)
    )
    assert rk.dcg([3, 2, 3, 0], k=2) == pytest.approx(3 + 2 / math.log2(3))
    assert rk.dcg([]) == 0.0


def test_ndcg_by_hand() -> None:
    # Gains 2**label - 1: e=15, r=7, t=3, b=1, n=0.
    actual = 7 * log2_discount(1) + 15 * log2_discount(3) + 1 * log2_discount(4)
    ideal = 15 * log2_discount(1) + 15 * log2_discount(2) + 7 * log2_discount(3)
    assert rk.ndcg_at_k(RUN, LABELS, 3) == pytest.approx((7 + 15 * log2_discount(3)) / ideal)
    ideal5 = ideal + 3 * log2_discount(4) + 1 * log2_discount(5)
    assert rk.ndcg_at_k(RUN, LABELS, 5) == pytest.approx(actual / ideal5)


def test_binary_ndcg_variants_by_hand() -> None:
    # Essential: only e1 (rank 3) of two essentials is returned; ideal puts both on top.
    assert rk.essential_ndcg_at_k(RUN, LABELS, 10) == pytest.approx(
        log2_discount(3) / (log2_discount(1) + log2_discount(2))
    )
    # Relevant (>= 3): r1 rank 1, e1 rank 3; ideal has three at ranks 1-3.
    assert rk.relevant_ndcg_at_k(RUN, LABELS, 10) == pytest.approx(
        (1 + log2_discount(3)) / (1 + log2_discount(2) + log2_discount(3))
    )


def test_ndcg_zero_when_no_gain() -> None:
    labels = {"a": 0, "b": 0}
    assert rk.ndcg_at_k(["a", "b"], labels, 10) == 0.0
    assert rk.essential_ndcg_at_k(["a"], {"a": 3}, 10) == 0.0


def test_recall_mrr_ap_by_hand() -> None:
    # label >= 3: e1, e2, r1; top 3 holds r1 and e1.
    assert rk.recall_at_k(RUN, LABELS, 3) == pytest.approx(2 / 3)
    assert rk.recall_at_k(RUN, LABELS, 1) == pytest.approx(1 / 3)
    assert rk.recall_at_k(RUN, LABELS, 3, min_label=5) == 0.0
    assert rk.mrr(RUN, LABELS) == 1.0
    assert rk.mrr(RUN, LABELS, min_label=4) == pytest.approx(1 / 3)
    assert rk.mrr(["n1", "n2"], LABELS) == 0.0
    # AP with label >= 1 (5 relevant): hits at ranks 1, 3, 4, 6 -> 1/1, 2/3, 3/4, 4/6.
    assert rk.average_precision(RUN, LABELS) == pytest.approx((1 + 2 / 3 + 3 / 4 + 4 / 6) / 5)
    assert rk.average_precision(["n1"], {"n1": 0}) == 0.0


def test_hard_negative_auc_by_hand() -> None:
    # Cited: r1(1), e1(3), b1(4), t1(6), e2(missing). Negatives: n1(2), n2(5).
    # r1 beats both (2); e1 beats n2 (1); b1 beats n2 (1); t1 beats none; e2 loses both.
    assert rk.hard_negative_auc(RUN, LABELS) == pytest.approx(4 / 10)
    # Missing cited vs missing negative is a tie: {a: ranked 1st}, {b, n: missing}.
    labels = {"a": 1, "b": 2, "n": 0}
    assert rk.hard_negative_auc(["a"], labels) == pytest.approx((1 + 0.5) / 2)
    assert rk.hard_negative_auc([], labels) == 0.5
    # One class missing: undefined, reported as chance.
    assert rk.hard_negative_auc(["a"], {"a": 1}) == 0.5


def auc_by_mannwhitney(ranking: Sequence[str], labels: Mapping[str, int]) -> float:
    """Reference AUC: Mann-Whitney U on scores (higher = ranked earlier, 0 = missing)."""
    score = {cid: len(ranking) - i for i, cid in enumerate(ranking)}
    pos = [score.get(c, 0) for c, v in sorted(labels.items()) if v >= 1]
    neg = [score.get(c, 0) for c, v in sorted(labels.items()) if v == 0]
    u = scipy.stats.mannwhitneyu(pos, neg, alternative="two-sided").statistic
    return float(u) / (len(pos) * len(neg))


def test_auc_matches_mannwhitney_on_example() -> None:
    assert rk.hard_negative_auc(RUN, LABELS) == pytest.approx(auc_by_mannwhitney(RUN, LABELS))


def test_asta_lower_bound_corrected_ndcg_examples() -> None:
    assert rk.lower_bound_corrected_ndcg([3, 3, 0, 0]) == 1.0
    assert round(rk.lower_bound_corrected_ndcg([3, 0, 3, 0]), 3) == 0.813
    assert rk.lower_bound_corrected_ndcg([0, 0, 3, 3]) == 0.0
    assert rk.lower_bound_corrected_ndcg([2]) == 0.0
    assert rk.lower_bound_corrected_ndcg([1, 1, 1]) == 0.0
    assert rk.lower_bound_corrected_ndcg([]) == 0.0


def test_asta_lower_bound_corrected_ndcg_by_hand() -> None:
    def d(g: list[float]) -> float:
        return sum(x / math.log(i + 1) for i, x in enumerate(g, start=1))

    g = [1.0, 3.0, 0.0, 2.0]
    expected = (d(g) - d([0, 1, 2, 3])) / (d([3, 2, 1, 0]) - d([0, 1, 2, 3]))
    assert rk.lower_bound_corrected_ndcg(g) == pytest.approx(expected)


def test_asta_recall_levels() -> None:
    levels = [3, 0, 2, 1, 3, 2]
    assert rk.recall_at_k_levels(levels, total_relevant=5, k=3) == pytest.approx(2 / 5)
    assert rk.recall_at_k_levels(levels, total_relevant=5, k=10) == pytest.approx(4 / 5)
    assert rk.recall_at_k_levels(levels, total_relevant=5, k=10, min_level=3) == pytest.approx(
        2 / 5
    )
    assert rk.recall_at_k_levels(levels, total_relevant=0, k=3) == 0.0
    with pytest.raises(ValueError):
        rk.recall_at_k_levels(levels, total_relevant=1, k=10)


def test_evaluate_ranking_keys_and_values() -> None:
    result = rk.evaluate_ranking(RUN, LABELS)
    assert list(result) == [
        "ndcg@10",
        "ndcg@20",
        "recall@10",
        "mrr",
        "map",
        "hard_negative_auc",
        "essential_ndcg@10",
        "relevant_ndcg@10",
    ]
    assert result["recall@10"] == pytest.approx(2 / 3)
    assert result["mrr"] == 1.0
    assert result["hard_negative_auc"] == pytest.approx(0.4)
    assert result["ndcg@10"] == rk.ndcg_at_k(RUN, LABELS, 10)


def test_validation_names_the_offending_id() -> None:
    with pytest.raises(ValueError, match="'r1'"):
        rk.evaluate_ranking(["r1", "e1", "r1"], LABELS)
    with pytest.raises(ValueError, match="'ghost'"):
        rk.ndcg_at_k(["e1", "ghost"], LABELS, 10)
    with pytest.raises(ValueError, match="'ghost'"):
        rk.hard_negative_auc(["ghost"], LABELS)
    with pytest.raises(ValueError, match="'x'"):
        rk.mrr(["x"], {"x": 7})
    with pytest.raises(ValueError):
        rk.ndcg_at_k(RUN, LABELS, 0)


def test_popularity_ranking_ties_by_id() -> None:
    counts = {"c": 5, "a": 5, "b": 9, "d": 0}
    assert rk.popularity_ranking(counts) == ["b", "a", "c", "d"]
    assert rk.popularity_ranking(dict(reversed(list(counts.items())))) == ["b", "a", "c", "d"]


def test_random_baseline_deterministic_and_order_free() -> None:
    first = random_baseline(list(LABELS), LABELS, n_draws=50, seed=1)
    again = random_baseline(list(reversed(list(LABELS))), LABELS, n_draws=50, seed=1)
    assert first == again
    assert set(first) == set(rk.METRIC_KEYS)
    assert all(0.0 <= v <= 1.0 for v in first.values())
    with pytest.raises(ValueError, match="'e1'"):
        random_baseline(["e1", "e1"], LABELS)


# --------------------------------------------------------------------------- AUC is chance


def test_auc_over_all_permutations_is_exactly_half() -> None:
    labels = {"p1": 4, "p2": 1, "p3": 2, "n1": 0, "n2": 0, "n3": 0}
    total = Fraction(0)
    count = 0
    for perm in itertools.permutations(labels):
        total += Fraction(rk.hard_negative_auc(list(perm), labels)).limit_denominator(1000)
        count += 1
    assert count == 720
    assert total / count == Fraction(1, 2)


def test_auc_over_all_partial_rankings_is_exactly_half() -> None:
    # Rankings that return only 3 of 6 candidates: missing ones tie at the bottom.
    labels = {"p1": 4, "p2": 1, "n1": 0, "n2": 0, "n3": 0, "p3": 3}
    values = [
        Fraction(rk.hard_negative_auc(list(p), labels)).limit_denominator(1000)
        for p in itertools.permutations(labels, 3)
    ]
    assert sum(values) / len(values) == Fraction(1, 2)


def test_auc_mean_over_random_permutations_is_half() -> None:
    labels = {f"c{i}": 1 + i % 4 for i in range(10)} | {f"n{i}": 0 for i in range(10)}
    mean = random_baseline(list(labels), labels, n_draws=2000, seed=0)["hard_negative_auc"]
    assert abs(mean - 0.5) < 0.03


# --------------------------------------------------------------------------- properties

ids = st.text(alphabet="abcdefghij", min_size=1, max_size=3)
label_maps = st.dictionaries(ids, st.integers(0, 4), min_size=1, max_size=25)


@st.composite
def labelled_rankings(draw: st.DrawFn) -> tuple[list[str], dict[str, int]]:
    labels = draw(label_maps)
    order = draw(st.permutations(sorted(labels)))
    keep = draw(st.integers(0, len(order)))
    return list(order[:keep]), labels


def perfect_ranking(labels: Mapping[str, int]) -> list[str]:
    return sorted(labels, key=lambda c: (-labels[c], c))


@settings(max_examples=50, deadline=None)
@given(labelled_rankings(), st.integers(1, 30))
def test_every_metric_in_unit_interval(case: tuple[list[str], dict[str, int]], k: int) -> None:
    ranking, labels = case
    values = [
        *rk.evaluate_ranking(ranking, labels).values(),
        rk.ndcg_at_k(ranking, labels, k),
        rk.recall_at_k(ranking, labels, k),
        rk.essential_ndcg_at_k(ranking, labels, k),
        rk.relevant_ndcg_at_k(ranking, labels, k),
        rk.average_precision(ranking, labels, min_label=3),
        rk.lower_bound_corrected_ndcg([labels[c] for c in ranking]),
        rk.recall_at_k_levels(
            [labels[c] for c in ranking], sum(v >= 2 for v in labels.values()), k
        ),
    ]
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in values)


@settings(max_examples=50, deadline=None)
@given(label_maps, st.integers(1, 30))
def test_perfect_ranking_scores_one(labels: dict[str, int], k: int) -> None:
    best = perfect_ranking(labels)
    values = list(labels.values())
    if any(v > 0 for v in values):
        assert rk.ndcg_at_k(best, labels, k) == pytest.approx(1.0)
    if 4 in values:
        assert rk.essential_ndcg_at_k(best, labels, k) == pytest.approx(1.0)
    n_relevant = sum(v >= 3 for v in values)
    if n_relevant:
        assert rk.relevant_ndcg_at_k(best, labels, k) == pytest.approx(1.0)
        assert rk.mrr(best, labels) == pytest.approx(1.0)
        if k >= n_relevant:
            assert rk.recall_at_k(best, labels, k) == pytest.approx(1.0)
    if any(v >= 1 for v in values):
        assert rk.average_precision(best, labels) == pytest.approx(1.0)
        if 0 in values:
            assert rk.hard_negative_auc(best, labels) == pytest.approx(1.0)
    assert rk.lower_bound_corrected_ndcg([labels[c] for c in best]) in (0.0, 1.0)


@settings(max_examples=50, deadline=None)
@given(labelled_rankings(), st.randoms(use_true_random=False))
def test_results_ignore_label_insertion_order(
    case: tuple[list[str], dict[str, int]], rnd: random.Random
) -> None:
    # Judgements can arrive in any order (e.g. a warm cache); the score must not move.
    ranking, labels = case
    items = list(labels.items())
    rnd.shuffle(items)
    shuffled = dict(items)
    assert rk.evaluate_ranking(ranking, shuffled) == rk.evaluate_ranking(ranking, labels)
    assert random_baseline(ranking, shuffled, n_draws=5) == random_baseline(
        ranking, labels, n_draws=5
    )


@settings(max_examples=50, deadline=None)
@given(labelled_rankings())
def test_auc_counting_matches_mannwhitney(case: tuple[list[str], dict[str, int]]) -> None:
    ranking, labels = case
    values = set(labels.values())
    if 0 in values and values - {0}:
        assert rk.hard_negative_auc(ranking, labels) == pytest.approx(
            auc_by_mannwhitney(ranking, labels), abs=1e-12
        )
