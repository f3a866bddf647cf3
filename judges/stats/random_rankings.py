"""Metrics of many seeded random rankings at once, as arrays (one value per draw).

The same metrics as `ranking.evaluate_ranking` on a strict ordering, computed for a whole
matrix of permutations with numpy: a report draws thousands per query, and the scalar
functions take seconds for that. Tests check every value against `evaluate_ranking`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from judges.stats.ranking import METRIC_KEYS, dcg, evaluate_ranking, exponential_gain


def permutations(n: int, n_draws: int, seed: int) -> np.ndarray:
    """n_draws seeded random orderings of range(n), one per row."""
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    return np.argsort(np.random.default_rng(seed).random((n_draws, n)), axis=1)


def _ndcg(ordered: np.ndarray, every: np.ndarray, k: int) -> np.ndarray:
    """nDCG@k of gain rows; the ideal uses every labelled candidate's gain."""
    ideal = dcg(sorted(every.tolist(), reverse=True), k)
    top = ordered[:, :k]
    discounts = 1.0 / np.log2(np.arange(2, top.shape[1] + 2))
    return np.clip(top @ discounts / ideal, 0, 1) if ideal > 0 else np.zeros(len(ordered))


def _first_hit(relevant: np.ndarray) -> np.ndarray:
    ranks = np.argmax(relevant, axis=1) + 1.0
    return np.where(relevant.any(axis=1), 1.0 / ranks, 0.0)


def _average_precision(relevant: np.ndarray, total: int) -> np.ndarray:
    if total == 0:
        return np.zeros(len(relevant))
    precision = np.cumsum(relevant, axis=1) / np.arange(1, relevant.shape[1] + 1)
    return np.clip((precision * relevant).sum(axis=1) / total, 0, 1)


def _auc(labels: np.ndarray, every: np.ndarray) -> np.ndarray:
    """As `hard_negative_auc`: unreturned candidates tie below every returned one."""
    positives, negatives = int((every >= 1).sum()), int((every == 0).sum())
    if positives == 0 or negatives == 0:
        return np.full(len(labels), 0.5)
    pos, neg = labels >= 1, labels == 0
    negatives_below = negatives - np.cumsum(neg, axis=1)  # includes the unreturned ones
    wins = (pos * negatives_below).sum(axis=1)
    missing_pos = positives - int(pos[0].sum())
    missing_neg = negatives - int(neg[0].sum())
    return (wins + missing_pos * missing_neg / 2) / (positives * negatives)


def draw_metrics(
    candidates: Sequence[str], labels: Mapping[str, int], *, n_draws: int, seed: int
) -> dict[str, np.ndarray]:
    """Each metric of METRIC_KEYS over n_draws seeded random orderings of the candidates."""
    pool = sorted(candidates)  # the same set gives the same draws, whatever its order
    if not pool:
        raise ValueError("no candidates to rank")
    evaluate_ranking(pool, labels)  # validates ids and labels, naming the offending one
    every = np.array(sorted(labels.values()))
    ordered = np.array([labels[c] for c in pool], dtype=int)[permutations(len(pool), n_draws, seed)]
    gains = np.vectorize(exponential_gain, otypes=[float])
    relevant = ordered >= 3
    total_relevant = int((every >= 3).sum())
    recall = relevant[:, :10].sum(axis=1) / total_relevant if total_relevant else 0.0
    draws = {
        "ndcg@10": _ndcg(gains(ordered), gains(every), 10),
        "ndcg@20": _ndcg(gains(ordered), gains(every), 20),
        "recall@10": np.broadcast_to(recall, (n_draws,)).astype(float),
        "mrr": _first_hit(relevant),
        "map": _average_precision(ordered >= 1, int((every >= 1).sum())),
        "hard_negative_auc": _auc(ordered, every),
        "essential_ndcg@10": _ndcg((ordered >= 4).astype(float), (every >= 4).astype(float), 10),
        "relevant_ndcg@10": _ndcg(relevant.astype(float), (every >= 3).astype(float), 10),
    }
    return {key: draws[key] for key in METRIC_KEYS}
