"""Metrics of many seeded random rankings at once, as arrays (one value per draw).

The metrics of `ranking.evaluate_ranking` on strict orderings, computed for a whole matrix
of permutations by `ranking_matrix.evaluate_rows`: a report draws thousands per query.
Tests check every value against `evaluate_ranking`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from judges.stats.ranking.metrics import evaluate_ranking
from judges.stats.ranking.metrics_matrix import evaluate_rows

__all__ = ["draw_metrics", "permutations", "random_baseline", "shuffled_labels"]


def permutations(n: int, n_draws: int, seed: int) -> np.ndarray:
    """n_draws seeded random orderings of range(n), one per row."""
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    return np.argsort(np.random.default_rng(seed).random((n_draws, n)), axis=1)


def _pool(candidates: Sequence[str], labels: Mapping[str, int]) -> tuple[list[str], np.ndarray]:
    """The candidates sorted (the same set gives the same draws, whatever its order), checked,
    with their labels."""
    pool = sorted(candidates)
    evaluate_ranking(pool, labels)  # validates ids and labels, naming the offending one
    return pool, np.array([labels[c] for c in pool], dtype=np.int64)


def draw_metrics(
    candidates: Sequence[str], labels: Mapping[str, int], *, n_draws: int, seed: int
) -> dict[str, np.ndarray]:
    """Each metric of METRIC_KEYS over n_draws seeded random orderings of the candidates."""
    pool, pool_labels = _pool(candidates, labels)
    if not pool:
        raise ValueError("no candidates to rank")
    ordered = pool_labels[permutations(len(pool), n_draws, seed)]
    return evaluate_rows(ordered, every=np.array(list(labels.values()), dtype=np.int64))


def shuffled_labels(labels: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """n_draws rows of `labels` in random order, one `rng.permutation` per row (the stream a
    loop over draws would use, so figures do not move with the vectorisation)."""
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    return labels[np.stack([rng.permutation(len(labels)) for _ in range(n_draws)])]


def random_baseline(
    candidates: Sequence[str],
    labels: Mapping[str, int],
    *,
    n_draws: int = 200,
    seed: int = 0,
) -> dict[str, float]:
    """Mean of each metric over n_draws seeded random orderings of the candidates.

    `ranking.random_expectation` gives the exact value. Seed each query on its own (e.g.
    from the query text) so that queries do not share one permutation.
    """
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    pool, pool_labels = _pool(candidates, labels)
    if not pool:
        return evaluate_ranking([], labels)  # the one ordering of nothing
    rows = shuffled_labels(pool_labels, n_draws, np.random.default_rng(seed))
    every = np.array(list(labels.values()), dtype=np.int64)
    return {key: float(values.mean()) for key, values in evaluate_rows(rows, every=every).items()}
