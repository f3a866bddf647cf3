"""The vectorised ranking metrics against the scalar ones, trec_eval and sklearn, row by row.

Random cases with ties, failed scores (None and NaN), infinite and signed-zero scores and
candidates left out; then the bootstrap and the random figures of the reading list against
a plain loop over the scalar functions (the code they replaced), figure for figure.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import pytrec_eval
from sklearn.metrics import roc_auc_score

from judges.stats.ranking import metrics as rk
from judges.stats.ranking.metrics_matrix import evaluate_rows
from judges.stats.ranking.random_draws import random_baseline, shuffled_labels
from judges.stats.ranking.reading_list import SHOWN, bootstrap_over_candidates, random_figures

POOL: list[float | None] = [0.0, -0.0, 0.25, 0.5, 0.5, 1.0, None, math.nan, math.inf, -math.inf]


def _matrix(
    scores: list[dict[str, float | None]], labels: dict[str, int]
) -> tuple[np.ndarray, ...]:
    ids = list(scores[0])
    grades = np.array([[labels[c] for c in ids] for _ in scores])
    values = np.array([[math.nan if s[c] is None else s[c] for c in ids] for s in scores])
    return grades, values


def test_every_row_equals_the_scalar_metrics() -> None:
    rnd = random.Random(2008)
    checked = 0
    for case in range(400):
        labels = {f"d{i:02d}": rnd.randint(0, 4) for i in range(rnd.randint(1, 30))}
        ids = sorted(labels)
        # Every third case returns only some candidates: the others are unreturned.
        returned = sorted(rnd.sample(ids, rnd.randint(1, len(ids)))) if case % 3 == 0 else ids
        pool = rnd.sample(POOL, rnd.randint(1, len(POOL)))  # few values: many ties
        rows = [{c: rnd.choice(pool) for c in returned} for _ in range(6)]
        grades, values = _matrix(rows, labels)
        got = evaluate_rows(grades, values, every=np.array(list(labels.values())))
        for r, scores in enumerate(rows):
            expected = rk.evaluate_ranking(scores, labels)
            for key in rk.METRIC_KEYS:
                assert got[key][r] == pytest.approx(expected[key], abs=1e-12), (key, scores)
            checked += 1
    assert checked == 2400


def test_rows_without_scores_are_strict_rankings() -> None:
    rnd = random.Random(5)
    for _ in range(200):
        labels = {f"d{i:02d}": rnd.randint(0, 4) for i in range(rnd.randint(1, 25))}
        order = rnd.sample(sorted(labels), rnd.randint(1, len(labels)))
        got = evaluate_rows(np.array([[labels[c] for c in order]]), every=list(labels.values()))
        expected = rk.evaluate_ranking(order, labels)
        for key in rk.METRIC_KEYS:
            assert got[key][0] == pytest.approx(expected[key], abs=1e-12), (key, order)


def test_untied_rows_match_trec_eval_and_tied_auc_matches_sklearn() -> None:
    rnd = random.Random(13)
    for _ in range(100):
        n = rnd.randint(2, 30)
        labels = {f"d{i:02d}": rnd.randint(0, 4) for i in range(n)}
        labels["d00"], labels["d01"] = 4, 0  # every gain and threshold is defined
        ids = sorted(labels)
        untied = dict(zip(ids, map(float, rnd.sample(range(10_000), n)), strict=True))
        tied = {c: rnd.choice([0.0, 0.5, 0.5, 1.0]) for c in ids}
        grades, values = _matrix([untied, tied], labels)
        got = evaluate_rows(grades, values)
        evaluator = pytrec_eval.RelevanceEvaluator(
            {"q": {c: 2**v - 1 for c, v in labels.items()}}, {"ndcg_cut_10,20"}
        )
        trec = evaluator.evaluate({"q": untied})["q"]
        assert got["ndcg@10"][0] == pytest.approx(trec["ndcg_cut_10"], abs=1e-4)
        assert got["ndcg@20"][0] == pytest.approx(trec["ndcg_cut_20"], abs=1e-4)
        truth = [int(labels[c] >= 1) for c in ids]
        for row, scores in enumerate((untied, tied)):
            auc = roc_auc_score(truth, [scores[c] for c in ids])
            assert got["hard_negative_auc"][row] == pytest.approx(auc, abs=1e-12)


def test_bad_input_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"labels must be in 0\.\.4"):
        evaluate_rows(np.array([[5, 1]]))
    with pytest.raises(ValueError, match="labels must be integers"):
        evaluate_rows(np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="scores shape"):
        evaluate_rows(np.array([[1, 2]]), np.array([[0.1]]))
    with pytest.raises(ValueError, match="rows x candidates"):
        evaluate_rows(np.array([1, 2]))


# --------------------------------------------------------------------------- the loops replaced


def _interval(samples: list[float]) -> tuple[float, float]:
    low, high = np.percentile(np.asarray(samples), [2.5, 97.5])
    return float(low), float(high)


def _bootstrap_loop(
    scores: dict[str, float | None], labels: dict[str, int], n_resamples: int, seed: int
) -> dict[str, tuple[float, float]]:
    """The reading list's bootstrap as it was written first: one scalar evaluation a resample."""
    ids = sorted(labels)
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {key: [] for key in SHOWN}
    for _ in range(n_resamples):
        drawn = [ids[j] for j in rng.integers(0, len(ids), len(ids))]
        copies = {f"{cid}#{n}": cid for n, cid in enumerate(drawn)}
        metrics = rk.evaluate_ranking(
            {copy: scores[cid] for copy, cid in copies.items()},
            {copy: labels[cid] for copy, cid in copies.items()},
        )
        for key in SHOWN:
            samples[key].append(metrics[key])
    return {key: _interval(values) for key, values in samples.items()}


def test_the_bootstrap_draws_and_scores_what_the_scalar_loop_did() -> None:
    rnd = random.Random(40)
    for seed in range(6):
        labels = {f"c{i:02d}": rnd.randint(0, 4) for i in range(rnd.randint(2, 41))}
        scores = {c: rnd.choice([0.1, 0.4, 0.4, 0.9, None, 0.55]) for c in labels}
        fast = bootstrap_over_candidates(scores, labels, n_resamples=60, seed=seed)
        slow = _bootstrap_loop(scores, labels, 60, seed)
        for key in SHOWN:
            assert (fast[key].low, fast[key].high) == pytest.approx(slow[key], abs=1e-12), key
            assert fast[key].value == pytest.approx(rk.evaluate_ranking(scores, labels)[key])


def test_random_draws_are_the_permutations_a_loop_draws() -> None:
    labels = {f"c{i:02d}": (i * 7) % 5 for i in range(23)}
    pool = sorted(labels)
    rng = np.random.default_rng(4)
    loop = [rk.evaluate_ranking([pool[i] for i in rng.permutation(len(pool))], labels)]
    loop += [rk.evaluate_ranking([pool[i] for i in rng.permutation(len(pool))], labels)]
    rows = shuffled_labels(np.array([labels[c] for c in pool]), 2, np.random.default_rng(4))
    matrix = evaluate_rows(rows)
    for key in rk.METRIC_KEYS:
        assert matrix[key] == pytest.approx([m[key] for m in loop], abs=1e-12)
    figures = random_figures(labels, n_draws=2, seed=4)
    assert figures["map"].value == pytest.approx((loop[0]["map"] + loop[1]["map"]) / 2)
    mean = random_baseline(pool, labels, n_draws=2, seed=4)
    assert mean["mrr"] == pytest.approx((loop[0]["mrr"] + loop[1]["mrr"]) / 2, abs=1e-12)
