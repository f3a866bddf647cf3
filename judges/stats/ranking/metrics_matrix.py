"""Tie-aware ranking metrics of many rankings at once: one ranking per row, numpy throughout.

The same values as `judges.stats.ranking.metrics.evaluate_ranking`, for a whole matrix of rankings:
a bootstrap over candidates or a random baseline evaluates thousands of rankings, and the
scalar functions, one dict per ranking, take seconds for that. Tests check every row
against the scalar functions on random cases with ties and failed scores.

A row holds the labels (0-4) of the candidates it returns and, optionally, their scores
(higher is better; NaN = the judgement failed: it ranks below every real score and failed
candidates tie among themselves). Without scores a row is a strict ranking, best first.
Tied candidates count as every order of the tie, in expectation (McSherry and Najork,
ECIR 2008). `every` holds the labels of every labelled candidate: candidates a row leaves
out count in the ideal ordering and in the totals, and for the AUC they tie below every
returned one, exactly as in the scalar functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judges.stats.ranking.metrics import MAX_LABEL, METRIC_KEYS, MIN_LABEL

__all__ = ["evaluate_rows"]

_EXPONENTIAL_GAIN = np.array([2.0**label - 1 for label in range(MAX_LABEL + 1)])


@dataclass(frozen=True)
class _Ties:
    """Rows sorted best first, with the tie group of every position."""

    labels: np.ndarray  # (rows, n) labels, best first
    group: np.ndarray  # (rows, n) tie group of each position, numbered across all rows
    first: np.ndarray  # (rows, n) position of the first candidate of that group
    size: np.ndarray  # (rows, n) size of that group

    def total(self, values: np.ndarray) -> np.ndarray:
        """The sum of `values` over each position's tie group."""
        sums = np.bincount(self.group.ravel(), weights=values.ravel(), minlength=self.group.size)
        return sums[self.group]

    def mean(self, values: np.ndarray) -> np.ndarray:
        """The mean of `values` over each position's tie group: its expected value there."""
        return self.total(values) / self.size

    def before_group(self, values: np.ndarray) -> np.ndarray:
        """The sum of `values` over the positions above each position's tie group."""
        above = np.cumsum(values, axis=1) - values
        return np.take_along_axis(above, self.first, axis=1)


def _ties(labels: np.ndarray, scores: np.ndarray | None) -> _Ties:
    rows, n = labels.shape
    new_group = np.ones((rows, n), dtype=bool)
    if scores is not None:
        failed = np.isnan(scores)
        key = np.where(failed, 0.0, -scores)  # -0.0 == 0.0: one group, as in a dict
        order = np.lexsort((key, failed), axis=1)  # failed last, then by score, best first
        key = np.take_along_axis(key, order, axis=1)
        failed = np.take_along_axis(failed, order, axis=1)
        labels = np.take_along_axis(labels, order, axis=1)
        new_group[:, 1:] = (key[:, 1:] != key[:, :-1]) | (failed[:, 1:] != failed[:, :-1])
    group = np.cumsum(new_group, axis=1) - 1 + (np.arange(rows) * n)[:, None]
    size = np.bincount(group.ravel(), minlength=group.size)[group]
    first = np.maximum.accumulate(np.where(new_group, np.arange(n), 0), axis=1)
    return _Ties(labels, group, first, size)


def _discounts(length: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, length + 2))


def _ndcg(ties: _Ties, every: np.ndarray, gain: np.ndarray, k: int) -> np.ndarray:
    """Each position of a tie group holds, in expectation, the group's mean gain."""
    expected = ties.mean(gain[ties.labels])[:, :k]
    ideal_gains = -np.sort(-gain[every], axis=1)[:, :k]
    ideal = ideal_gains @ _discounts(ideal_gains.shape[1])
    dcg = expected @ _discounts(expected.shape[1])
    ratio = np.divide(dcg, ideal, out=np.zeros_like(dcg), where=ideal > 0)
    return np.clip(ratio, 0.0, 1.0)


def _recall(ties: _Ties, every: np.ndarray, k: int, min_label: int) -> np.ndarray:
    found = ties.mean((ties.labels >= min_label).astype(float))[:, :k].sum(axis=1)
    total = (every >= min_label).sum(axis=1)
    return np.clip(np.divide(found, total, out=np.zeros_like(found), where=total > 0), 0, 1)


def _mrr(ties: _Ties, min_label: int) -> np.ndarray:
    """Expected reciprocal rank of the first relevant candidate.

    It sits in the first tie group holding any: of n candidates with r relevant, starting
    below `before` others. P(the group's first j - 1 are all irrelevant) is a running
    product, and then the j-th is relevant with probability r / (n - j + 1).
    """
    relevant = ties.labels >= min_label
    found = relevant.any(axis=1)
    at = np.argmax(relevant, axis=1)[:, None]
    before = np.take_along_axis(ties.first, at, axis=1)[:, 0].astype(float)
    n = np.take_along_axis(ties.size, at, axis=1)[:, 0].astype(float)
    r = np.take_along_axis(ties.total(relevant.astype(float)), at, axis=1)[:, 0]
    r = np.where(found, r, 1.0)  # rows without a relevant candidate give 0 below
    width = int(n.max())
    t = np.arange(width - 1, dtype=float)[None, :]
    n_, r_ = n[:, None], r[:, None]
    step = np.where(n_ - t > 0, np.maximum(n_ - r_ - t, 0.0) / np.maximum(n_ - t, 1.0), 0.0)
    all_irrelevant = np.hstack([np.ones((len(n), 1)), np.cumprod(step, axis=1)])
    j = np.arange(1, width + 1, dtype=float)[None, :]
    chance = np.where(j <= n_, all_irrelevant * r_ / np.maximum(n_ - j + 1, 1.0), 0.0)
    expected = (chance / (before[:, None] + j)).sum(axis=1)
    return np.where(found, expected, 0.0)


def _average_precision(ties: _Ties, every: np.ndarray, min_label: int) -> np.ndarray:
    """The j-th of a tie group of n holding r relevant has, in expectation, (j - 1)(r - 1) /
    (n - 1) other relevant ones of its group above it; it is relevant with chance r / n."""
    relevant = (ties.labels >= min_label).astype(float)
    r, n = ties.total(relevant), ties.size.astype(float)
    share = np.divide(r - 1, n - 1, out=np.zeros_like(r), where=n > 1)
    position = np.arange(ties.labels.shape[1])[None, :]
    j = position - ties.first + 1
    above = ties.before_group(relevant)
    precision = (r / n) * (above + 1 + (j - 1) * share) / (position + 1)
    total = (every >= min_label).sum(axis=1)
    summed = precision.sum(axis=1)
    return np.clip(np.divide(summed, total, out=np.zeros_like(summed), where=total > 0), 0, 1)


def _auc(ties: _Ties, every: np.ndarray) -> np.ndarray:
    """P(a cited candidate above a hard negative), a tie one half; integers until the end."""
    positives, negatives = (every >= 1).sum(axis=1), (every == 0).sum(axis=1)
    cited = ties.labels >= 1
    excluded = (ties.labels == 0).astype(np.int64)
    group_negatives = ties.total(excluded).astype(np.int64)
    below = negatives[:, None] - ties.before_group(excluded) - group_negatives
    doubled = (cited * (2 * below + group_negatives)).sum(axis=1)
    # Unreturned candidates tie below every returned one: no negative is below them.
    missing = (positives - cited.sum(axis=1)) * (negatives - excluded.sum(axis=1))
    defined = (positives > 0) & (negatives > 0)
    pairs = np.where(defined, 2 * positives * negatives, 1)
    return np.where(defined, (doubled + missing) / pairs, 0.5)


def _as_labels(values: np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be integers, got dtype {array.dtype}")
    if array.size and (array.min() < MIN_LABEL or array.max() > MAX_LABEL):
        raise ValueError(f"{name} must be in {MIN_LABEL}..{MAX_LABEL}")
    return array.astype(np.int64)


def evaluate_rows(
    labels: np.ndarray, scores: np.ndarray | None = None, every: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Each metric of METRIC_KEYS for every row: an array with one value per ranking.

    `labels` (rows x n): the returned candidates' labels; `scores` (rows x n, NaN = failed)
    orders them, tie-aware; without it each row is already best first. `every`: the labels
    of every labelled candidate, one row per ranking or one shared by all; by default each
    row's own labels (every candidate returned, e.g. a bootstrap resample).
    """
    labels = _as_labels(labels, "labels")
    if labels.ndim != 2 or labels.shape[1] == 0:
        raise ValueError(f"labels must be a rows x candidates matrix, got shape {labels.shape}")
    if scores is not None:
        scores = np.asarray(scores, dtype=float)
        if scores.shape != labels.shape:
            raise ValueError(f"scores shape {scores.shape} differs from labels {labels.shape}")
    every = labels if every is None else _as_labels(every, "every")
    if every.ndim == 1:
        every = np.broadcast_to(every, (len(labels), len(every)))
    if every.shape[0] != len(labels):
        raise ValueError(f"every has {every.shape[0]} rows, labels {len(labels)}")
    ties = _ties(labels, scores)
    binary = {4: np.array([0.0, 0, 0, 0, 1]), 3: np.array([0.0, 0, 0, 1, 1])}
    metrics = {
        "ndcg@10": _ndcg(ties, every, _EXPONENTIAL_GAIN, 10),
        "ndcg@20": _ndcg(ties, every, _EXPONENTIAL_GAIN, 20),
        "recall@10": _recall(ties, every, 10, min_label=3),
        "mrr": _mrr(ties, min_label=3),
        "map": _average_precision(ties, every, min_label=1),
        "hard_negative_auc": _auc(ties, every),
        "essential_ndcg@10": _ndcg(ties, every, binary[4], 10),
        "relevant_ndcg@10": _ndcg(ties, every, binary[3], 10),
    }
    return {key: metrics[key] for key in METRIC_KEYS}
