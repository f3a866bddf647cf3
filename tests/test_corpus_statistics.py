"""The corpus statistics against independent implementations, on random cases with fixed
seeds: t intervals against scipy, Holm against statsmodels and a step-down written here,
P(first) and the item bootstrap against naive loops, PPI++ against direct `ppi_py` calls."""

from __future__ import annotations

import gc
import math

import numpy as np
import ppi_py
import pytest
import scipy.stats
from statsmodels.stats.multitest import multipletests

from judges.corpus.estimates import (
    holm,
    mean_interval,
    paired_differences,
    probability_first,
    resampled_means,
)
from judges.corpus.ppi import PPIEstimate, ppi_estimate, ppi_estimates


def _t_interval(x: np.ndarray, confidence: float) -> tuple[float, float, float, float]:
    mean = float(np.mean(x))
    se = float(scipy.stats.sem(x))
    low, high = scipy.stats.t.interval(confidence, x.size - 1, loc=mean, scale=se)
    return mean, se, float(low), float(high)


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_mean_interval_is_scipys_t_interval_over_the_finite_values(confidence: float) -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(2, 60))
        x = rng.normal(rng.normal(0, 3), rng.uniform(0.1, 4), n)
        with_gaps = x.copy()
        gaps = rng.random(n) < 0.2
        with_gaps[gaps] = np.nan  # an error row or an item not judged
        kept = x[~gaps]
        found = mean_interval(with_gaps, confidence)
        assert found.n == kept.size
        if kept.size < 2:
            continue
        mean, se, low, high = _t_interval(kept, confidence)
        assert found.mean == pytest.approx(mean, rel=1e-12, abs=1e-12)
        assert found.standard_error == pytest.approx(se, rel=1e-12)
        assert found.low == pytest.approx(low, rel=1e-10, abs=1e-12)
        assert found.high == pytest.approx(high, rel=1e-10, abs=1e-12)


def test_mean_interval_below_two_values_has_no_interval() -> None:
    one = mean_interval(np.array([np.nan, 0.25, np.nan]))
    assert (one.n, one.mean) == (1, 0.25)
    assert math.isnan(one.standard_error) and math.isnan(one.low) and math.isnan(one.high)
    none = mean_interval(np.array([np.nan, np.nan]))
    assert none.n == 0 and math.isnan(none.mean)


def _holm_by_hand(p: list[float]) -> list[float]:
    """Holm's step-down: the k-th smallest of m defined p-values times (m - k), capped at 1
    and made monotone; an undefined p neither counts in m nor gets a value."""
    defined = sorted((value, index) for index, value in enumerate(p) if not math.isnan(value))
    m = len(defined)
    adjusted = [math.nan] * len(p)
    running = 0.0
    for k, (value, index) in enumerate(defined):
        running = max(running, min(1.0, (m - k) * value))
        adjusted[index] = running
    return adjusted


def _holm_by_statsmodels(p: list[float]) -> list[float]:
    defined = [i for i, value in enumerate(p) if not math.isnan(value)]
    adjusted = [math.nan] * len(p)
    if defined:
        corrected = multipletests([p[i] for i in defined], method="holm")[1]
        for i, value in zip(defined, corrected, strict=True):
            adjusted[i] = float(value)
    return adjusted


def test_holm_equals_statsmodels_and_a_hand_written_step_down_and_nan_stays_nan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # multipletests runs gc.collect() on each Holm call, 0.3 s apiece in a test worker's
    # heap; what it returns does not depend on it.
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    rng = np.random.default_rng(5)
    for _ in range(300):
        m = int(rng.integers(1, 15))
        p = rng.uniform(0, 1, m) ** rng.uniform(0.5, 4)  # many small ones, some near 1
        p[rng.random(m) < 0.2] = np.nan
        if m > 2:
            p[1] = p[0]  # a tie
        values = [float(v) for v in p]
        found = holm(values)
        assert [math.isnan(v) for v in found] == [math.isnan(v) for v in values]
        np.testing.assert_allclose(found, _holm_by_statsmodels(values), rtol=1e-12, atol=0)
        np.testing.assert_allclose(found, _holm_by_hand(values), rtol=1e-12, atol=0)
    assert holm([math.nan, math.nan]) == pytest.approx([math.nan, math.nan], nan_ok=True)
    assert holm([]) == []


def _first_by_hand(means: np.ndarray, higher_is_better: bool) -> np.ndarray:
    share = np.zeros(means.shape[1])
    for row in means:
        signed = [v if higher_is_better else -v for v in row]
        best = max(v for v in signed if not math.isnan(v))
        leaders = [k for k, v in enumerate(signed) if v == best]
        for k in leaders:
            share[k] += 1 / len(leaders)
    return share / len(means)


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_probability_first_shares_ties_and_sums_to_one(higher_is_better: bool) -> None:
    rng = np.random.default_rng(3)
    means = rng.integers(0, 3, (400, 4)).astype(float)  # few values: many ties for first
    means[rng.random(means.shape) < 0.1] = np.nan
    means[np.all(np.isnan(means), axis=1), 0] = 1.0  # a resample leaves someone a mean
    found = probability_first(means, higher_is_better)
    assert found.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(found, _first_by_hand(means, higher_is_better), atol=1e-12)


def test_probability_first_on_a_case_worked_by_hand() -> None:
    means = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [3.0, 0.0, np.nan]])
    # row 1: a and b share; row 2: b and c share; row 3: a alone (c has no mean there)
    np.testing.assert_allclose(probability_first(means), [1.5 / 3, 1 / 3, 0.5 / 3])
    # lower is better: c, then a, then b lead alone
    np.testing.assert_allclose(probability_first(means, False), [1 / 3, 1 / 3, 1 / 3])


def test_a_resample_where_no_system_has_a_mean_does_not_count() -> None:
    # An item bootstrap can draw only items no system was judged on (a small corpus, or a
    # judge that judged a few of its items): that resample has no leader to share out, and
    # must not turn every system's P(first) into NaN.
    means = np.array([[np.nan, np.nan], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(probability_first(means), [2 / 3, 1 / 3])


def _resampled_by_hand(scores: np.ndarray, n: int, seed: int) -> np.ndarray:
    """One resample of item columns at a time, drawn in the same order from the same rng:
    each system's plain mean over the drawn items it was judged on."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, scores.shape[0]))
    for r in range(n):
        drawn = rng.integers(0, scores.shape[1], scores.shape[1])
        for s, row in enumerate(scores):
            values = row[drawn]
            values = values[~np.isnan(values)]
            out[r, s] = values.mean() if values.size else np.nan
    return out


@pytest.mark.parametrize("block", [250, 7, 1000])
def test_resampled_means_equal_a_naive_loop_over_the_same_draws(block: int) -> None:
    rng = np.random.default_rng(17)
    scores = rng.normal(0, 1, (3, 6))
    scores[1, [0, 2, 3, 5]] = np.nan  # judged on two items: some resamples draw neither
    scores[2, 4] = np.nan
    found = resampled_means(scores, 300, seed=9, block=block)
    expected = _resampled_by_hand(scores, 300, seed=9)
    assert np.isnan(expected[:, 1]).any()  # the case above does happen
    np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-14, equal_nan=True)


def test_resampled_means_keep_each_item_of_a_resample_together() -> None:
    # Two systems, one a constant shift of the other: on any resample of shared items the
    # shift is exact; a bootstrap of rows (judgements) would not keep it.
    rng = np.random.default_rng(2)
    base = rng.normal(0, 1, 40)
    means = resampled_means(np.stack([base, base + 0.3]), 500, seed=1)
    np.testing.assert_allclose(means[:, 1] - means[:, 0], 0.3, atol=1e-12)
    assert means[:, 0].std() > 0.05  # and the resamples do differ


def test_paired_differences_put_the_better_first_and_use_the_paired_interval() -> None:
    rng = np.random.default_rng(8)
    scores = rng.normal(0, 1, (3, 30)) + np.array([[0.0], [0.8], [0.1]])
    scores[0, 3] = np.nan  # the pair (0, j) is over the 29 items both were judged on
    pairs = paired_differences(("a", "b", "c"), scores)
    assert [(p.better, p.worse) for p in pairs] == [("b", "a"), ("c", "a"), ("b", "c")]
    raw = []
    for p in pairs:
        i, j = "abc".index(p.better), "abc".index(p.worse)
        both = ~np.isnan(scores[i]) & ~np.isnan(scores[j])
        mean, _, low, high = _t_interval(scores[i][both] - scores[j][both], 0.95)
        assert p.difference.n == int(both.sum())
        assert (p.difference.mean, p.difference.low, p.difference.high) == pytest.approx(
            (mean, low, high), rel=1e-10
        )
        raw.append(float(scipy.stats.ttest_rel(scores[i][both], scores[j][both]).pvalue))
        assert p.p_value == pytest.approx(raw[-1], rel=1e-10)
    assert [p.p_holm for p in pairs] == pytest.approx(_holm_by_hand(raw), rel=1e-12)
    # Lower is better: the same pairs, the order of each reversed.
    lower = paired_differences(("a", "b", "c"), scores, higher_is_better=False)
    assert [(p.worse, p.better) for p in lower] == [("b", "a"), ("c", "a"), ("b", "c")]


@pytest.mark.parametrize("seed", range(6))
def test_paired_differences_are_mean_interval_and_ttest_1samp_per_pair_to_the_bit(
    seed: int,
) -> None:
    """All pairs at once give, figure for figure and bit for bit, what a call of
    `mean_interval` and `scipy.stats.ttest_1samp` per pair gives: gaps, a pair with one
    shared item, none, a constant difference (zero and not), ties, integer scores."""
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(0, 1, (7, 25)) * (4 if seed % 2 else 1000)) / 4
    scores[rng.random(scores.shape) < 0.2] = np.nan
    scores[1] = scores[0]  # no spread, mean zero
    scores[2] = scores[0] + 0.5  # no spread, not zero
    scores[3, 1:] = np.nan  # one item
    scores[4] = np.nan  # none
    for higher in (True, False):
        for pair in paired_differences(tuple("abcdefg"), scores, higher_is_better=higher):
            i, j = "abcdefg".index(pair.better), "abcdefg".index(pair.worse)
            d = (scores[i] - scores[j]) * (1 if higher else -1)
            d = d[~np.isnan(d)]
            expected = mean_interval(d)
            same = (pair.difference.mean, pair.difference.standard_error, pair.difference.low,
                    pair.difference.high, pair.difference.n)  # fmt: skip
            assert np.array_equal(same, (expected.mean, expected.standard_error, expected.low,
                                         expected.high, expected.n), equal_nan=True)  # fmt: skip
            if d.size < 2:
                assert math.isnan(pair.p_value)
            elif np.all(d == d[0]):
                assert pair.p_value == (1.0 if d[0] == 0 else 0.0)
            else:
                assert pair.p_value == float(scipy.stats.ttest_1samp(d, 0.0).pvalue)


def _resampled_means_by_blocks(scores: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The item bootstrap as first written: counts drawn block by block, weights by a
    dense product with the judged cells."""
    rng = np.random.default_rng(seed)
    n_items = scores.shape[1]
    judged = ~np.isnan(scores)
    filled = np.where(judged, scores, 0.0)
    out = np.empty((n_resamples, scores.shape[0]))
    for start in range(0, n_resamples, 250):
        stop = min(start + 250, n_resamples)
        counts = np.stack(
            [np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
             for _ in range(stop - start)]
        ).astype(float)  # fmt: skip
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:stop] = (counts @ filled.T) / (counts @ judged.T.astype(float))
    return out


@pytest.mark.parametrize("missing", [0.0, 0.01, 0.5, 1.0])
def test_resampled_means_are_the_block_by_block_bootstrap_to_the_bit(missing: float) -> None:
    """Drawn once per seed and weighted from the unjudged cells when they are few, the
    resamples are still exactly the ones drawn block by block (few gaps, many, none, all)."""
    rng = np.random.default_rng(11)
    scores = rng.normal(0, 1, (9, 300))
    scores[rng.random(scores.shape) < missing] = np.nan
    scores[4] = np.nan  # a system with no score at all
    for seed in (0, 5):
        expected = _resampled_means_by_blocks(scores, 600, seed)
        assert np.array_equal(resampled_means(scores, 600, seed), expected, equal_nan=True)
        again = resampled_means(scores, 600, seed)  # from the drawn counts, not drawn again
        assert np.array_equal(again, expected, equal_nan=True)


def _labelled(rng: np.random.Generator, n: int, labelled: int) -> tuple[np.ndarray, np.ndarray]:
    """A judge's scores on n items (a few error rows) and gold labels on `labelled` of them,
    the judge biased and noisy against the gold."""
    truth = rng.normal(0.6, 0.2, n)
    judged = truth + 0.1 + rng.normal(0, 0.1, n)
    judged[rng.random(n) < 0.05] = np.nan
    labels = np.full(n, np.nan)
    chosen = rng.choice(n, labelled, replace=False)
    labels[chosen] = truth[chosen] + rng.normal(0, 0.05, labelled)
    return labels, judged


def _ppi_direct(labels: np.ndarray, judged: np.ndarray) -> tuple[float, float, float]:
    both = ~np.isnan(labels) & ~np.isnan(judged)
    rest = np.isnan(labels) & ~np.isnan(judged)
    y, yhat, unlabelled = labels[both], judged[both], judged[rest]
    point = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled)).item())
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05)
    return point, float(np.asarray(low).item()), float(np.asarray(high).item())


def test_ppi_estimates_equal_direct_ppi_py_calls_on_random_data() -> None:
    rng = np.random.default_rng(23)
    for _ in range(20):
        n, labelled = int(rng.integers(40, 300)), int(rng.integers(5, 30))
        labels, judged = _labelled(rng, n, labelled)
        found = ppi_estimate("s", labels, judged)
        assert found is not None
        both = ~np.isnan(labels) & ~np.isnan(judged)
        assert found.labels == int(both.sum())
        assert found.unlabelled == int((np.isnan(labels) & ~np.isnan(judged)).sum())
        point, low, high = _ppi_direct(labels, judged)
        assert (found.ppi, found.ppi_low, found.ppi_high) == pytest.approx(
            (point, low, high), rel=1e-12
        )
        assert found.ppi_low < found.ppi < found.ppi_high
        assert found.classical == pytest.approx(float(np.mean(labels[both])), rel=1e-12)


def test_the_labels_only_interval_is_a_normal_interval_like_the_ppi_one() -> None:
    # docs/corpus.md: both intervals are normal-approximation ones, so their width ratio
    # compares like with like (a t interval beside a normal PPI++ one would flatter PPI++).
    rng = np.random.default_rng(29)
    for labelled in (3, 4, 8, 30):
        labels, judged = _labelled(rng, 120, labelled)
        judged[np.isnan(judged)] = 0.5  # every label has its judgement: none left out
        found = ppi_estimate("s", labels, judged)
        assert found is not None
        y = labels[~np.isnan(labels) & ~np.isnan(judged)]
        se = float(np.std(y)) / math.sqrt(y.size)
        low, high = scipy.stats.norm.interval(0.95, loc=float(np.mean(y)), scale=se)
        assert (found.classical_low, found.classical_high) == pytest.approx(
            (low, high), rel=1e-9
        ), f"{y.size} labels"


def test_ppi_per_system_and_per_pair_keep_every_target_with_labels() -> None:
    rng = np.random.default_rng(31)
    judged = rng.uniform(0, 1, (3, 80))
    labels = np.clip(judged + rng.normal(0, 0.1, judged.shape), 0, 1)
    labels[:, 15:] = np.nan  # a and b labelled on the same 15 items: their pair too
    labels[1, :3] = np.nan  # b on 12 of them
    labels[2, 2:] = np.nan  # c on two: shown, undefined
    judged[0, 5] = np.nan  # an error row on a labelled item: that label has no pair
    per_system, per_pair = ppi_estimates(("a", "b", "c"), labels, judged)
    assert [e.target for e in per_system] == ["a", "b", "c"]
    assert math.isnan(per_system[2].ppi) and not per_system[2].defined
    # b and c share no label: no estimate (None), so the pair is not listed
    assert [e.target for e in per_pair] == ["a - b", "a - c"]
    assert per_pair[1].labels == 2 and not per_pair[1].defined
    ab: PPIEstimate = per_pair[0]
    both_labelled = ~np.isnan(labels[0] - labels[1]) & ~np.isnan(judged[0] - judged[1])
    assert ab.labels == int(both_labelled.sum())
    assert ab.labels == 11  # items 3..14, less item 5
    point, low, high = _ppi_direct(labels[0] - labels[1], judged[0] - judged[1])
    assert (ab.ppi, ab.ppi_low, ab.ppi_high) == pytest.approx((point, low, high), rel=1e-12)
    assert [e.labels for e in per_system] == [14, 12, 2]
    unlabelled_only = labels.copy()
    unlabelled_only[:] = np.nan
    assert ppi_estimates(("a", "b", "c"), unlabelled_only, judged) == ([], [])
