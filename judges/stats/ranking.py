"""Ranking metrics over graded candidate labels.

Labels are graded 0-4: 4 essential, 3 relevant, 2 tool/method, 1 background, 0 hard negative.
A ranking is the ordered sequence of candidate ids a system returns; labels maps candidate id
to its grade. Every metric reads the order from the ranking sequence only and treats the labels
mapping as an unordered set: ideal orderings are built by sorting values, and counts are
order-free, so the result cannot depend on the order in which judgements were recorded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral

import numpy as np

__all__ = [
    "LEVEL_TO_LABEL",
    "METRIC_KEYS",
    "average_precision",
    "dcg",
    "essential_ndcg_at_k",
    "evaluate_ranking",
    "hard_negative_auc",
    "lower_bound_corrected_ndcg",
    "mean_metrics",
    "mrr",
    "ndcg_at_k",
    "popularity_ranking",
    "random_baseline",
    "rank_by_score",
    "recall_at_k",
    "recall_at_k_levels",
    "relevant_ndcg_at_k",
]

MIN_LABEL, MAX_LABEL = 0, 4

METRIC_KEYS: tuple[str, ...] = (
    "ndcg@10",
    "ndcg@20",
    "recall@10",
    "mrr",
    "map",
    "hard_negative_auc",
    "essential_ndcg@10",
    "relevant_ndcg@10",
)


# --------------------------------------------------------------------------- validation


def _validate(ranking: Sequence[str], labels: Mapping[str, int]) -> None:
    """Reject rankings that would make a metric silently wrong, naming the offending id."""
    if isinstance(ranking, str):
        # A bare string is a Sequence of characters; almost certainly a caller mistake.
        raise TypeError("ranking must be a sequence of candidate ids, not a string")
    for cid, label in labels.items():
        if isinstance(label, bool) or not isinstance(label, Integral):
            raise ValueError(f"label of {cid!r} must be an integer, got {label!r}")
        if not MIN_LABEL <= label <= MAX_LABEL:
            raise ValueError(f"label of {cid!r} must be in 0..4, got {label}")
    seen: set[str] = set()
    for cid in ranking:
        if cid in seen:
            raise ValueError(f"duplicate id in ranking: {cid!r}")
        if cid not in labels:
            raise ValueError(f"ranked id has no label: {cid!r}")
        seen.add(cid)


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _clip01(value: float) -> float:
    # Ratios of equal float sums can land a last bit outside [0, 1].
    return min(1.0, max(0.0, value))


# --------------------------------------------------------------------------- nDCG family


def dcg(gains: Sequence[float], k: int | None = None) -> float:
    """Discounted cumulative gain: sum of gain_i / log2(i + 1) over ranks i = 1..k."""
    if k is not None:
        _check_k(k)
        gains = gains[:k]
    return float(sum(g / math.log2(i + 2) for i, g in enumerate(gains)))


def _ndcg(
    ranking: Sequence[str], labels: Mapping[str, int], k: int, gain: Callable[[int], float]
) -> float:
    _validate(ranking, labels)
    _check_k(k)
    ideal = dcg(sorted((gain(v) for v in labels.values()), reverse=True), k)
    if ideal <= 0.0:
        return 0.0
    return _clip01(dcg([gain(labels[c]) for c in ranking], k) / ideal)


def _exponential_gain(label: int) -> float:
    return float(2**label - 1)


def ndcg_at_k(ranking: Sequence[str], labels: Mapping[str, int], k: int) -> float:
    """nDCG@k with gain 2**label - 1; the ideal uses every labelled candidate."""
    return _ndcg(ranking, labels, k, _exponential_gain)


def essential_ndcg_at_k(ranking: Sequence[str], labels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k where only essential candidates (label 4) have gain 1."""
    return _ndcg(ranking, labels, k, lambda label: 1.0 if label >= 4 else 0.0)


def relevant_ndcg_at_k(ranking: Sequence[str], labels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k where candidates with label >= 3 have gain 1."""
    return _ndcg(ranking, labels, k, lambda label: 1.0 if label >= 3 else 0.0)


def lower_bound_corrected_ndcg(gains: Sequence[float]) -> float:
    """asta-bench style nDCG of a returned list, rescaled between its worst and best order.

    DCG uses g_i / ln(i + 1) for i = 1..len; the score is
    (DCG(g) - DCG(ascending g)) / (DCG(descending g) - DCG(ascending g)), 0.0 when every
    order scores the same (one result, or all gains equal).
    """

    def natural_dcg(values: Sequence[float]) -> float:
        return sum(g / math.log(i + 2) for i, g in enumerate(values))

    values = [float(g) for g in gains]
    worst = natural_dcg(sorted(values))
    best = natural_dcg(sorted(values, reverse=True))
    span = best - worst
    # Relative guard: equal gains can leave float residue instead of an exact zero span.
    if span <= 1e-12 * max(1.0, abs(best)):
        return 0.0
    return _clip01((natural_dcg(values) - worst) / span)


# --------------------------------------------------------------------------- set metrics


def recall_at_k(
    ranking: Sequence[str], labels: Mapping[str, int], k: int, min_label: int = 3
) -> float:
    """Fraction of candidates with label >= min_label that appear in the top k."""
    _validate(ranking, labels)
    _check_k(k)
    total = sum(1 for v in labels.values() if v >= min_label)
    if total == 0:
        return 0.0
    found = sum(1 for c in ranking[:k] if labels[c] >= min_label)
    return found / total


def recall_at_k_levels(
    levels: Sequence[int], total_relevant: int, k: int, min_level: int = 2
) -> float:
    """asta-bench style recall: share of total_relevant found among the first k levels."""
    _check_k(k)
    if total_relevant < 0:
        raise ValueError(f"total_relevant must be >= 0, got {total_relevant}")
    if total_relevant == 0:
        return 0.0
    found = sum(1 for level in levels[:k] if level >= min_level)
    if found > total_relevant:
        # More hits than relevant items means the caller's total is wrong; do not hide it.
        raise ValueError(f"found {found} relevant items but total_relevant is {total_relevant}")
    return found / total_relevant


def mrr(ranking: Sequence[str], labels: Mapping[str, int], min_label: int = 3) -> float:
    """Reciprocal rank of the first candidate with label >= min_label (0.0 if none)."""
    _validate(ranking, labels)
    for rank, cid in enumerate(ranking, start=1):
        if labels[cid] >= min_label:
            return 1.0 / rank
    return 0.0


def average_precision(
    ranking: Sequence[str], labels: Mapping[str, int], min_label: int = 1
) -> float:
    """Average precision (MAP of one query); unranked relevant candidates contribute 0."""
    _validate(ranking, labels)
    total = sum(1 for v in labels.values() if v >= min_label)
    if total == 0:
        return 0.0
    hits = 0
    precision_sum = 0.0
    for rank, cid in enumerate(ranking, start=1):
        if labels[cid] >= min_label:
            hits += 1
            precision_sum += hits / rank
    return _clip01(precision_sum / total)


def hard_negative_auc(ranking: Sequence[str], labels: Mapping[str, int]) -> float:
    """P(a random cited candidate (label >= 1) ranks above a random hard negative (label 0)).

    Unranked candidates sit below every ranked one and tie among themselves (a tie counts
    0.5). With no cited candidates or no hard negatives the AUC is undefined and the chance
    value 0.5 is returned, so averages over queries are not dragged towards either end.
    """
    _validate(ranking, labels)
    positives = sum(1 for v in labels.values() if v >= 1)
    negatives = sum(1 for v in labels.values() if v == 0)
    if positives == 0 or negatives == 0:
        return 0.5
    ranked_negatives = sum(1 for c in ranking if labels[c] == 0)
    ranked_positives = len(ranking) - ranked_negatives
    missing_negatives = negatives - ranked_negatives
    missing_positives = positives - ranked_positives
    # Count pairs directly with integers, so the result is exact and order-free.
    wins = 0
    negatives_above = 0
    for cid in ranking:
        if labels[cid] == 0:
            negatives_above += 1
        else:
            wins += (ranked_negatives - negatives_above) + missing_negatives
    doubled = 2 * wins + missing_positives * missing_negatives
    return doubled / (2 * positives * negatives)


# --------------------------------------------------------------------------- reports


def evaluate_ranking(ranking: Sequence[str], labels: Mapping[str, int]) -> dict[str, float]:
    """All headline metrics of one ranking, keyed as in METRIC_KEYS."""
    _validate(ranking, labels)
    return {
        "ndcg@10": ndcg_at_k(ranking, labels, 10),
        "ndcg@20": ndcg_at_k(ranking, labels, 20),
        "recall@10": recall_at_k(ranking, labels, 10, min_label=3),
        "mrr": mrr(ranking, labels, min_label=3),
        "map": average_precision(ranking, labels),
        "hard_negative_auc": hard_negative_auc(ranking, labels),
        "essential_ndcg@10": essential_ndcg_at_k(ranking, labels, 10),
        "relevant_ndcg@10": relevant_ndcg_at_k(ranking, labels, 10),
    }


def random_baseline(
    candidates: Sequence[str],
    labels: Mapping[str, int],
    *,
    n_draws: int = 200,
    seed: int = 0,
) -> dict[str, float]:
    """Mean of evaluate_ranking over n_draws seeded random orderings of the candidates."""
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    # Sort first so the same candidate set gives the same baseline whatever order it came in.
    pool = sorted(candidates)
    _validate(pool, labels)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(METRIC_KEYS, 0.0)
    for _ in range(n_draws):
        order = [pool[i] for i in rng.permutation(len(pool))]
        for key, value in evaluate_ranking(order, labels).items():
            totals[key] += value
    return {key: total / n_draws for key, total in totals.items()}


def popularity_ranking(candidates: Mapping[str, int]) -> list[str]:
    """Candidate ids by citation count, most cited first; ties broken by id."""
    return sorted(candidates, key=lambda cid: (-candidates[cid], cid))


# Expected relevance level (0-3) of a planted document -> graded label: a perfect match is
# essential reading, an irrelevant one from the same field is a hard negative.
LEVEL_TO_LABEL = {3: 4, 2: 3, 1: 1, 0: 0}


def rank_by_score(scores: Mapping[str, float | None]) -> list[str]:
    """Best score first; a document the judge failed on ranks last but is never dropped.

    Ties break on the id, so the ranking depends on the scores alone, never on the order
    in which judgements were made or cached (asta-bench's warm-cache hole).
    """
    return sorted(scores, key=lambda doc: (-(scores[doc] if scores[doc] is not None else -1), doc))


def mean_metrics(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Average each metric over queries, rounded for stable output."""
    keys = sorted({key for metrics in per_query for key in metrics})
    return {key: round(float(np.mean([m[key] for m in per_query if key in m])), 4) for key in keys}
