"""Ranking metrics over graded candidate labels, tie-aware.

Labels are graded 0-4: 4 essential, 3 relevant, 2 tool/method, 1 background, 0 hard negative.
A system's output is either a ranking (a sequence of candidate ids, best first) or scores
(candidate id -> score, higher is better). Scores may tie: every metric is then the expected
value over all orderings of the tied candidates (McSherry and Najork, "Computing Information
Retrieval Performance Measures Efficiently in the Presence of Tied Scores", ECIR 2008), so
the result never depends on document ids or on the order in which judgements arrived. A
failed score (None or NaN) ranks below every real score; failed candidates tie among
themselves. A constant-score system gets exactly the expected value of a random ranking.

Labelled candidates a ranking or a score mapping leaves out are not returned: they count in
the ideal ordering and in the number of relevant candidates, and for the AUC they tie below
every returned one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real

import numpy as np

__all__ = [
    "LEVEL_TO_LABEL",
    "METRIC_KEYS",
    "Output",
    "average_precision",
    "dcg",
    "essential_ndcg_at_k",
    "evaluate_ranking",
    "exponential_gain",
    "hard_negative_auc",
    "lower_bound_corrected_ndcg",
    "mean_metrics",
    "mrr",
    "ndcg_at_k",
    "popularity_ranking",
    "random_expectation",
    "recall_at_k",
    "recall_at_k_levels",
    "relevant_ndcg_at_k",
    "tie_groups",
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

# A ranking (ids, best first) or scores (id -> score; None or NaN = the judgement failed).
Output = Sequence[str] | Mapping[str, float | None]


# --------------------------------------------------------------------------- validation


def _validate_labels(labels: Mapping[str, int]) -> None:
    for cid, label in labels.items():
        if isinstance(label, bool) or not isinstance(label, Integral):
            raise ValueError(f"label of {cid!r} must be an integer, got {label!r}")
        if not MIN_LABEL <= label <= MAX_LABEL:
            raise ValueError(f"label of {cid!r} must be in 0..4, got {label}")


def _failed(score: float | None) -> bool:
    return score is None or math.isnan(score)


def tie_groups(scores: Mapping[str, float | None]) -> list[list[str]]:
    """Candidate ids grouped by equal score, best group first; failed scores form the last.

    Ids inside a group are sorted only to make the output stable: every metric treats a
    group as unordered.
    """
    by_score: dict[float, list[str]] = {}
    failed: list[str] = []
    for cid, score in scores.items():
        if score is not None and (isinstance(score, bool) or not isinstance(score, Real)):
            raise ValueError(f"score of {cid!r} must be a number or None, got {score!r}")
        if score is None or _failed(score):
            failed.append(cid)
        else:
            by_score.setdefault(float(score), []).append(cid)
    groups = [sorted(by_score[s]) for s in sorted(by_score, reverse=True)]
    return groups + ([sorted(failed)] if failed else [])


def _groups(output: Output, labels: Mapping[str, int]) -> list[list[int]]:
    """The labels of the returned candidates, one list per tie group, best group first."""
    if isinstance(output, str):
        # A bare string is a Sequence of characters; almost certainly a caller mistake.
        raise TypeError("ranking must be a sequence of candidate ids, not a string")
    _validate_labels(labels)
    if isinstance(output, Mapping):
        id_groups = tie_groups(output)
    else:
        seen: set[str] = set()
        for cid in output:
            if cid in seen:
                raise ValueError(f"duplicate id in ranking: {cid!r}")
            seen.add(cid)
        id_groups = [[cid] for cid in output]
    for group in id_groups:
        for cid in group:
            if cid not in labels:
                raise ValueError(f"ranked id has no label: {cid!r}")
    return [[labels[cid] for cid in group] for group in id_groups]


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _clip01(value: float) -> float:
    # Ratios of equal float sums can land a last bit outside [0, 1].
    return min(1.0, max(0.0, value))


def _spans(groups: list[list[int]]) -> list[tuple[int, list[int]]]:
    """(number of candidates ranked above the group, the group's labels) per group."""
    spans, before = [], 0
    for group in groups:
        spans.append((before, group))
        before += len(group)
    return spans


# --------------------------------------------------------------------------- nDCG family


def dcg(gains: Sequence[float], k: int | None = None) -> float:
    """Discounted cumulative gain: sum of gain_i / log2(i + 1) over ranks i = 1..k."""
    if k is not None:
        _check_k(k)
        gains = gains[:k]
    return float(sum(g / math.log2(i + 2) for i, g in enumerate(gains)))


def _expected_dcg(groups: list[list[int]], k: int, gain: Callable[[int], float]) -> float:
    """Each rank of a tie group holds, in expectation, the group's mean gain."""
    total = 0.0
    for before, group in _spans(groups):
        ranks = range(before + 1, min(before + len(group), k) + 1)
        if ranks:
            mean_gain = sum(gain(label) for label in group) / len(group)
            total += mean_gain * sum(1 / math.log2(rank + 1) for rank in ranks)
    return total


def _ndcg(output: Output, labels: Mapping[str, int], k: int, gain: Callable[[int], float]) -> float:
    groups = _groups(output, labels)
    _check_k(k)
    ideal = dcg(sorted((gain(v) for v in labels.values()), reverse=True), k)
    if ideal <= 0.0:
        return 0.0
    return _clip01(_expected_dcg(groups, k, gain) / ideal)


def exponential_gain(label: int) -> float:
    """2**label - 1: an essential paper (15) outweighs two relevant ones (7 each)."""
    return float(2**label - 1)


def ndcg_at_k(output: Output, labels: Mapping[str, int], k: int) -> float:
    """nDCG@k with gain 2**label - 1; the ideal uses every labelled candidate."""
    return _ndcg(output, labels, k, exponential_gain)


def essential_ndcg_at_k(output: Output, labels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k where only essential candidates (label 4) have gain 1."""
    return _ndcg(output, labels, k, lambda label: 1.0 if label >= 4 else 0.0)


def relevant_ndcg_at_k(output: Output, labels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k where candidates with label >= 3 have gain 1."""
    return _ndcg(output, labels, k, lambda label: 1.0 if label >= 3 else 0.0)


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


def recall_at_k(output: Output, labels: Mapping[str, int], k: int, min_label: int = 3) -> float:
    """Expected fraction of candidates with label >= min_label in the top k."""
    groups = _groups(output, labels)
    _check_k(k)
    total = sum(1 for v in labels.values() if v >= min_label)
    if total == 0:
        return 0.0
    found = 0.0
    for before, group in _spans(groups):
        inside = max(0, min(before + len(group), k) - before)
        found += inside * sum(1 for v in group if v >= min_label) / len(group)
    return _clip01(found / total)


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


def mrr(output: Output, labels: Mapping[str, int], min_label: int = 3) -> float:
    """Expected reciprocal rank of the first candidate with label >= min_label (0.0 if none).

    In the first tie group holding r relevant of n candidates, the first relevant one sits
    at the group's j-th rank with probability C(n - j, r - 1) / C(n, r).
    """
    for before, group in _spans(_groups(output, labels)):
        n, r = len(group), sum(1 for v in group if v >= min_label)
        if r:
            ways = math.comb(n, r)
            return sum(math.comb(n - j, r - 1) / ways / (before + j) for j in range(1, n - r + 2))
    return 0.0


def average_precision(output: Output, labels: Mapping[str, int], min_label: int = 1) -> float:
    """Expected average precision (MAP of one query); unreturned relevant candidates add 0.

    A relevant candidate at the j-th rank of a tie group of n holding r relevant has, in
    expectation, (j - 1)(r - 1)/(n - 1) other relevant ones of its group above it.
    """
    groups = _groups(output, labels)
    total = sum(1 for v in labels.values() if v >= min_label)
    if total == 0:
        return 0.0
    precision_sum, relevant_above = 0.0, 0
    for before, group in _spans(groups):
        n, r = len(group), sum(1 for v in group if v >= min_label)
        if r:
            share = (r - 1) / (n - 1) if n > 1 else 0.0
            precision_sum += (r / n) * sum(
                (relevant_above + 1 + (j - 1) * share) / (before + j) for j in range(1, n + 1)
            )
        relevant_above += r
    return _clip01(precision_sum / total)


def hard_negative_auc(output: Output, labels: Mapping[str, int]) -> float:
    """P(a random cited candidate (label >= 1) ranks above a random hard negative (label 0)).

    A tie counts one half, as in `sklearn.metrics.roc_auc_score`; unreturned candidates tie
    below every returned one. With no cited candidates or no hard negatives the AUC is
    undefined and the chance value 0.5 is returned, so averages over queries are not
    dragged towards either end.
    """
    groups = _groups(output, labels)
    positives = sum(1 for v in labels.values() if v >= 1)
    negatives = sum(1 for v in labels.values() if v == 0)
    if positives == 0 or negatives == 0:
        return 0.5
    returned = [(sum(v >= 1 for v in g), sum(v == 0 for v in g)) for g in groups]
    missing = (positives - sum(p for p, _ in returned), negatives - sum(n for _, n in returned))
    # Integers throughout: twice the wins, so ties (worth one half) stay exact.
    doubled, negatives_below = 0, negatives
    for group_positives, group_negatives in [*returned, missing]:
        negatives_below -= group_negatives
        doubled += group_positives * (2 * negatives_below + group_negatives)
    return doubled / (2 * positives * negatives)


# --------------------------------------------------------------------------- reports


def evaluate_ranking(output: Output, labels: Mapping[str, int]) -> dict[str, float]:
    """All headline metrics of one ranking or score mapping, keyed as in METRIC_KEYS."""
    _groups(output, labels)
    return {
        "ndcg@10": ndcg_at_k(output, labels, 10),
        "ndcg@20": ndcg_at_k(output, labels, 20),
        "recall@10": recall_at_k(output, labels, 10, min_label=3),
        "mrr": mrr(output, labels, min_label=3),
        "map": average_precision(output, labels),
        "hard_negative_auc": hard_negative_auc(output, labels),
        "essential_ndcg@10": essential_ndcg_at_k(output, labels, 10),
        "relevant_ndcg@10": relevant_ndcg_at_k(output, labels, 10),
    }


def random_expectation(labels: Mapping[str, int]) -> dict[str, float]:
    """The exact expected metrics of a uniformly random ranking of every candidate.

    A random ranking is one tie group holding everything: the constant-score system. Seeded
    draws: `random_rankings.random_baseline`.
    """
    return evaluate_ranking(dict.fromkeys(labels, 0.0), labels)


def popularity_ranking(candidates: Mapping[str, int]) -> list[str]:
    """Candidate ids by citation count, most cited first; ties broken by id."""
    return sorted(candidates, key=lambda cid: (-candidates[cid], cid))


# Expected relevance level (0-3) of a planted document -> graded label: a perfect match is
# essential reading, an irrelevant one from the same field is a hard negative.
LEVEL_TO_LABEL = {3: 4, 2: 3, 1: 1, 0: 0}


def mean_metrics(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Average each metric over queries, rounded for stable output."""
    keys = sorted({key for metrics in per_query for key in metrics})
    return {key: round(float(np.mean([m[key] for m in per_query if key in m])), 4) for key in keys}
