"""Unit tests for judges.stats.estimates.intervals and reliability.agreement, against references."""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from judges.stats.estimates import intervals as stats
from judges.stats.estimates.intervals import Estimate, Rate
from judges.stats.reliability import agreement

Z975 = NormalDist().inv_cdf(0.975)  # stdlib, so the tests do not lean on scipy for z


# --------------------------------------------------------------------------- hand-written refs


def wilson_by_hand(k: int, n: int, z: float = Z975) -> tuple[float, float]:
    """Wilson score interval, written out from the textbook formula."""
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def average_ranks(values: list[float]) -> list[float]:
    """1-based ranks with ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        for m in range(i, j + 1):
            ranks[order[m]] = mean_rank
        i = j + 1
    return ranks


def pearson_by_hand(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def tau_b_by_hand(x: list[float], y: list[float]) -> float:
    concordant = discordant = tied_x = tied_y = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0:
                tied_x += 1
            if dy == 0:
                tied_y += 1
            if dx * dy > 0:
                concordant += 1
            elif dx * dy < 0:
                discordant += 1
    pairs = n * (n - 1) // 2
    return (concordant - discordant) / math.sqrt((pairs - tied_x) * (pairs - tied_y))


def weighted_kappa_by_hand(a: list[int], b: list[int], categories: list[int]) -> float:
    """Quadratic-weighted kappa: 1 - sum(w * observed) / sum(w * expected), plain loops."""
    k = len(categories)
    n = len(a)
    pos = {c: i for i, c in enumerate(categories)}
    observed = [[0.0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        observed[pos[x]][pos[y]] += 1
    row = [sum(observed[i]) for i in range(k)]
    col = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    num = den = 0.0
    for i in range(k):
        for j in range(k):
            w = (i - j) ** 2 / (k - 1) ** 2
            num += w * observed[i][j]
            den += w * row[i] * col[j] / n
    return 1 - num / den


def ordinal_alpha_by_hand(data: list[list[float | None]]) -> float:
    """Krippendorff's ordinal alpha from the coincidence matrix (Krippendorff 2011)."""
    units = []
    for u in range(len(data[0])):
        vals = [row[u] for row in data if row[u] is not None]
        if len(vals) >= 2:
            units.append(vals)
    domain = sorted({v for vals in units for v in vals})
    o = {(c, k): 0.0 for c in domain for k in domain}
    for vals in units:
        m = len(vals)
        for i, c in enumerate(vals):
            for j, k in enumerate(vals):
                if i != j:
                    o[(c, k)] += 1 / (m - 1)
    n_c = {c: sum(o[(c, k)] for k in domain) for c in domain}
    n = sum(n_c.values())

    def delta2(c: float, k: float) -> float:
        lo, hi = min(c, k), max(c, k)
        between = sum(n_c[g] for g in domain if lo <= g <= hi)
        return (between - (n_c[c] + n_c[k]) / 2) ** 2

    d_obs = sum(o[(c, k)] * delta2(c, k) for c in domain for k in domain)
    d_exp = sum(n_c[c] * n_c[k] * delta2(c, k) for c in domain for k in domain)
    return 1 - (n - 1) * d_obs / d_exp


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C:
# 4 observers x 12 units with missing values; published ordinal alpha = 0.815.
KRIPP_EXAMPLE: list[list[float | None]] = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def as_array(data: list[list[float | None]]) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)


# --------------------------------------------------------------------------- dataclasses


def test_rate_str_and_dict() -> None:
    r = stats.wilson(8, 10)
    assert str(r) == "0.80 [0.49, 0.94] n=10"
    d = r.as_dict()
    assert d == {"successes": 8, "n": 10, "rate": 0.8, "low": 0.4902, "high": 0.9433}
    json.dumps(d)


def test_estimate_str_and_dict_with_nan() -> None:
    e = Estimate(value=0.42, low=0.1, high=0.71, n=12)
    assert str(e) == "0.42 [0.10, 0.71] n=12"
    empty = stats.bootstrap_mean([])
    assert empty.n == 0 and math.isnan(empty.value)
    assert empty.as_dict() == {"value": None, "low": None, "high": None, "n": 0}
    assert str(empty) == "nan [nan, nan] n=0"
    assert json.loads(json.dumps(empty.as_dict()))["value"] is None


def test_results_are_frozen() -> None:
    r = stats.wilson(1, 2)
    with pytest.raises(AttributeError):
        r.n = 3  # type: ignore[misc]


# --------------------------------------------------------------------------- Wilson


def test_wilson_8_of_10_textbook() -> None:
    r = stats.wilson(8, 10)
    low, high = wilson_by_hand(8, 10)
    assert r.rate == 0.8
    assert r.low == pytest.approx(low, abs=1e-9)
    assert r.high == pytest.approx(high, abs=1e-9)
    assert (round(r.low, 3), round(r.high, 3)) == (0.490, 0.943)


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (1, 1), (37, 120), (3, 1000)])
def test_wilson_matches_formula(k: int, n: int) -> None:
    r = stats.wilson(k, n)
    low, high = wilson_by_hand(k, n)
    assert r.low == pytest.approx(max(low, 0.0), abs=1e-9)
    assert r.high == pytest.approx(min(high, 1.0), abs=1e-9)


def test_wilson_other_confidence() -> None:
    z90 = NormalDist().inv_cdf(0.95)
    low, high = wilson_by_hand(8, 10, z90)
    r = stats.wilson(8, 10, confidence=0.90)
    assert (r.low, r.high) == pytest.approx((low, high), abs=1e-9)


def test_wilson_empty_and_invalid() -> None:
    r = stats.wilson(0, 0)
    assert r.n == 0 and math.isnan(r.rate) and math.isnan(r.low) and math.isnan(r.high)
    with pytest.raises(ValueError):
        stats.wilson(3, 2)
    with pytest.raises(ValueError):
        stats.wilson(-1, 2)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_rate_and_is_in_unit_interval(kn: tuple[int, int]) -> None:
    k, n = kn
    r = stats.wilson(k, n)
    assert 0.0 <= r.low <= r.rate <= r.high <= 1.0
    assert isinstance(r, Rate) and r.n == n and r.successes == k


# --------------------------------------------------------------------------- agreement


def test_exact_and_adjacent_agreement_by_hand() -> None:
    a = [1, 2, 3, 4, 5, 3, 2]
    b = [1, 3, 3, 2, 5, 4, 5]
    exact = agreement.exact_agreement(a, b)
    adjacent = agreement.adjacent_agreement(a, b)
    assert (exact.successes, exact.n) == (3, 7)
    assert (adjacent.successes, adjacent.n) == (5, 7)
    assert agreement.adjacent_agreement(a, b, tolerance=2).successes == 6
    assert (exact.low, exact.high) == pytest.approx(wilson_by_hand(3, 7), abs=1e-9)


def test_agreement_empty_and_mismatch() -> None:
    assert agreement.exact_agreement([], []).n == 0
    assert math.isnan(agreement.adjacent_agreement([], []).rate)
    with pytest.raises(ValueError):
        agreement.exact_agreement([1, 2], [1])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), max_size=40),
    st.integers(0, 4),
)
def test_agreement_rates_in_unit_interval(pairs: list[tuple[int, int]], tol: int) -> None:
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    exact = agreement.exact_agreement(a, b)
    adjacent = agreement.adjacent_agreement(a, b, tolerance=tol)
    for r in (exact, adjacent):
        assert r.n == len(pairs)
        if pairs:
            assert 0.0 <= r.low <= r.rate <= r.high <= 1.0
    if pairs:
        assert adjacent.rate >= exact.rate


# --------------------------------------------------------------------------- McNemar


def mcnemar_by_hand(b: int, c: int) -> float:
    n = b + c
    tail = sum(Fraction(math.comb(n, i), 2**n) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.parametrize(("b", "c"), [(2, 8), (8, 2), (0, 6), (5, 5), (1, 0), (12, 30)])
def test_mcnemar_exact_by_hand(b: int, c: int) -> None:
    before = [True] * b + [False] * c + [True] * 4 + [False] * 3
    after = [False] * b + [True] * c + [True] * 4 + [False] * 3
    result = stats.mcnemar_exact(before, after)
    assert (result.b, result.c, result.n) == (b, c, b + c + 7)
    assert result.p_value == pytest.approx(mcnemar_by_hand(b, c), rel=1e-9)


def test_mcnemar_no_discordant_pairs() -> None:
    result = stats.mcnemar_exact([True, False], [True, False])
    assert (result.b, result.c, result.p_value) == (0, 0, 1.0)
    assert stats.mcnemar_exact([], []).n == 0


# --------------------------------------------------------------------------- design


def test_minimum_detectable_difference() -> None:
    z = Z975 + NormalDist().inv_cdf(0.8)
    assert stats.minimum_detectable_difference(1.0, 100) == pytest.approx(
        z * math.sqrt(2 / 100), rel=1e-9
    )
    assert stats.minimum_detectable_difference(0.8, 50) == pytest.approx(0.4482, abs=1e-4)
    assert math.isnan(stats.minimum_detectable_difference(1.0, 0))
    assert stats.minimum_detectable_difference(0.0, 10) == 0.0
    # Four times the items halves the detectable difference.
    assert stats.minimum_detectable_difference(1.0, 400) == pytest.approx(
        stats.minimum_detectable_difference(1.0, 100) / 2
    )


# --------------------------------------------------------------------------- bootstrap means


def test_bootstrap_mean_normal_sample_close_to_normal_theory() -> None:
    x = np.random.default_rng(7).normal(10.0, 2.0, size=400)
    e = stats.bootstrap_mean(x, n_resamples=4000, seed=1)
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert e.value == pytest.approx(float(x.mean()))
    assert e.low == pytest.approx(e.value - Z975 * se, abs=0.25 * se)
    assert e.high == pytest.approx(e.value + Z975 * se, abs=0.25 * se)
    assert e.n == 400


def test_bootstrap_mean_deterministic_per_seed() -> None:
    x = [1.3, 2.9, 2.2, 3.7, 5.1, 8.6, 1.05, 4.4]
    assert stats.bootstrap_mean(x, seed=3) == stats.bootstrap_mean(x, seed=3)
    # Continuous values, so different random streams cannot hit identical percentiles.
    assert stats.bootstrap_mean(x, n_resamples=999, seed=3) != stats.bootstrap_mean(
        x, n_resamples=999, seed=4
    )


def test_bootstrap_mean_single_value_has_no_interval() -> None:
    e = stats.bootstrap_mean([4.0])
    assert e.value == 4.0 and e.n == 1 and math.isnan(e.low) and math.isnan(e.high)


def test_bootstrap_mean_rejects_nan() -> None:
    with pytest.raises(ValueError):
        stats.bootstrap_mean([1.0, float("nan")])


@settings(max_examples=30, deadline=None)
@given(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.integers(2, 60),
)
def test_bootstrap_of_constant_is_the_constant(c: float, n: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning may escape
        e = stats.bootstrap_mean([c] * n, n_resamples=200)
        d = stats.bootstrap_mean_difference([c] * n, [c] * n, paired=True, n_resamples=200)
        m = stats.bootstrap_means_matrix(np.full((n, 2), c), n_resamples=200)
    assert e.value == e.low == e.high == c
    assert d.value == d.low == d.high == 0.0
    assert all(col.value == col.low == col.high == c for col in m)


def test_bootstrap_mean_difference_paired_and_unpaired() -> None:
    rng = np.random.default_rng(2)
    b = rng.normal(size=60)
    a = b + 0.5 + rng.normal(scale=0.1, size=60)
    paired = stats.bootstrap_mean_difference(a, b, paired=True, n_resamples=2000)
    unpaired = stats.bootstrap_mean_difference(a, b, paired=False, n_resamples=2000)
    assert paired.value == pytest.approx(float(np.mean(a - b)))
    assert unpaired.value == pytest.approx(float(a.mean() - b.mean()))
    assert paired.n == 60 and unpaired.n == 120
    assert paired.low < paired.value < paired.high
    # Pairing removes the shared item noise, so its interval must be far narrower.
    assert (paired.high - paired.low) < 0.5 * (unpaired.high - unpaired.low)
    shifted = stats.bootstrap_mean_difference(b + 2.0, b, paired=True)
    assert shifted.low == pytest.approx(2.0) and shifted.high == pytest.approx(2.0)
    with pytest.raises(ValueError):
        stats.bootstrap_mean_difference([1, 2], [1], paired=True)
    assert math.isnan(stats.bootstrap_mean_difference([], [1, 2], paired=False).value)


def test_bootstrap_means_matrix_matches_scipy_and_loop() -> None:
    values = np.random.default_rng(5).integers(1, 6, size=(120, 3)).astype(float)
    matrix = stats.bootstrap_means_matrix(values, n_resamples=4000, seed=0)
    loop = stats.bootstrap_means_loop(values, n_resamples=4000, seed=0)
    assert len(matrix) == len(loop) == 3
    for j, (m, lp) in enumerate(zip(matrix, loop, strict=True)):
        ref = scipy.stats.bootstrap(
            (values[:, j],),
            np.mean,
            method="percentile",
            n_resamples=4000,
            rng=np.random.default_rng(9),
        ).confidence_interval
        assert m.value == lp.value == pytest.approx(values[:, j].mean())
        assert m.n == lp.n == 120
        for est in (m, lp):
            assert est.low == pytest.approx(ref.low, abs=0.05)
            assert est.high == pytest.approx(ref.high, abs=0.05)


def test_bootstrap_means_matrix_shapes_and_determinism() -> None:
    values = np.arange(20, dtype=float).reshape(10, 2)
    assert stats.bootstrap_means_matrix(values, seed=1) == stats.bootstrap_means_matrix(
        values, seed=1
    )
    empty = stats.bootstrap_means_matrix(np.empty((0, 3)))
    assert len(empty) == 3 and all(e.n == 0 and math.isnan(e.value) for e in empty)
    assert len(stats.bootstrap_means_loop(np.empty((0, 3)))) == 3
    with pytest.raises(ValueError):
        stats.bootstrap_means_matrix(np.arange(4.0))


# --------------------------------------------------------------------------- correlations

RANKED_X = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0]
RANKED_Y = [2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0, 2.0, 8.0, 4.0]


def test_spearman_against_rank_then_pearson() -> None:
    expected = pearson_by_hand(average_ranks(RANKED_X), average_ranks(RANKED_Y))
    e = agreement.spearman(RANKED_X, RANKED_Y)
    assert e.value == pytest.approx(expected, abs=1e-12)
    assert e.n == len(RANKED_X)
    assert -1.0 <= e.low <= e.high <= 1.0


def test_spearman_interval_brackets_strong_correlation() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=80)
    e = agreement.spearman(x, x + 0.3 * rng.normal(size=80))
    assert 0.8 < e.low <= e.value <= e.high <= 1.0


def test_kendall_against_pair_counting() -> None:
    e = agreement.kendall_tau(RANKED_X, RANKED_Y)
    assert e.value == pytest.approx(tau_b_by_hand(RANKED_X, RANKED_Y), abs=1e-12)
    assert -1.0 <= e.low <= e.high <= 1.0


def test_vectorised_kendall_matches_scipy_on_resamples() -> None:
    # The bootstrap uses a quadratic-form shortcut; check it against scipy resample by resample.
    rng = np.random.default_rng(11)
    x = rng.integers(0, 5, size=25).astype(float)
    y = x + rng.integers(-2, 3, size=25)
    idx = rng.integers(0, 25, size=(30, 25))
    counts = np.stack([np.bincount(row, minlength=25) for row in idx]).astype(float)
    fast = agreement._kendall_tau_b_from_counts(x, y, counts)
    for r in range(30):
        assert fast[r] == pytest.approx(scipy.stats.kendalltau(x[idx[r]], y[idx[r]]).statistic)


def test_correlations_constant_input_is_nan_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (agreement.spearman, agreement.kendall_tau):
            e = fn([1, 1, 1, 1], [1, 2, 3, 4])
            assert math.isnan(e.value) and e.n == 4
            assert math.isnan(fn([], []).value)


# --------------------------------------------------------------------------- kappa


KAPPA_A = [0, 1, 2, 3, 4, 4, 3, 2, 1, 0, 2, 2, 3, 4, 1]
KAPPA_B = [0, 1, 3, 3, 4, 3, 3, 1, 1, 1, 2, 4, 2, 4, 0]


def test_quadratic_kappa_against_textbook_formula() -> None:
    e = agreement.quadratic_kappa(KAPPA_A, KAPPA_B)
    assert e.value == pytest.approx(weighted_kappa_by_hand(KAPPA_A, KAPPA_B, [0, 1, 2, 3, 4]))
    assert e.n == len(KAPPA_A)
    assert e.low <= e.value <= e.high


def test_quadratic_kappa_small_worked_example() -> None:
    # With two categories quadratic weights reduce to Cohen's unweighted kappa.
    # Agreement 7/10; marginals 5/10 and 6/10 give chance 0.5*0.6 + 0.5*0.4 = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    a = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 0, 0, 1, 1]
    assert agreement.quadratic_kappa(a, b).value == pytest.approx(0.4)


def test_quadratic_kappa_labels_and_degenerate() -> None:
    assert agreement.quadratic_kappa(KAPPA_A, KAPPA_B, labels=[0, 1, 2, 3, 4, 5]).value == (
        pytest.approx(weighted_kappa_by_hand(KAPPA_A, KAPPA_B, [0, 1, 2, 3, 4]))
    )
    with pytest.raises(ValueError, match="outside labels"):
        agreement.quadratic_kappa([1, 2, 7], [1, 2, 3], labels=[1, 2, 3])
    assert math.isnan(agreement.quadratic_kappa([2, 2, 2], [2, 2, 2]).value)
    assert math.isnan(agreement.quadratic_kappa([], []).value)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=40).filter(lambda v: len(set(v)) > 1))
def test_kappa_of_identical_ratings_is_one(ratings: list[int]) -> None:
    e = agreement.quadratic_kappa(ratings, ratings, n_resamples=200)
    assert e.value == pytest.approx(1.0)
    assert e.low == pytest.approx(1.0) and e.high == pytest.approx(1.0)


def test_resample_ranks_are_scipys_rankdata_of_each_resample() -> None:
    from judges.stats.estimates.resample import index_counts, resample_indices

    rng = np.random.default_rng(21)
    for case in range(100):
        n = int(rng.integers(1, 40))
        values = rng.integers(0, int(rng.integers(1, 7)), n).astype(float)
        if case % 4 == 0:
            values = rng.normal(size=n)
        idx = resample_indices(n, 60, case)
        ours = agreement._resample_ranks(values, idx, index_counts(idx, n))
        assert np.array_equal(ours, scipy.stats.rankdata(values[idx], axis=1)), case


# --------------------------------------------------------------------------- Krippendorff


def test_krippendorff_ordinal_published_example() -> None:
    e = agreement.krippendorff_alpha_ordinal(as_array(KRIPP_EXAMPLE))
    assert e.value == pytest.approx(ordinal_alpha_by_hand(KRIPP_EXAMPLE), abs=1e-9)
    assert round(e.value, 3) == 0.815
    assert e.n == 11  # unit 12 has a single rating and is not pairable
    assert e.low <= e.value <= e.high <= 1.0


def test_krippendorff_ordinal_second_example_against_plain_python() -> None:
    rng = np.random.default_rng(4)
    truth = rng.integers(1, 6, size=30)
    data: list[list[float | None]] = []
    for _ in range(3):
        noisy = np.clip(truth + rng.integers(-1, 2, size=30), 1, 5).astype(float)
        data.append([None if rng.random() < 0.2 else float(v) for v in noisy])
    e = agreement.krippendorff_alpha_ordinal(as_array(data), n_resamples=300)
    assert e.value == pytest.approx(ordinal_alpha_by_hand(data), abs=1e-9)


def test_every_bootstrap_resample_is_the_krippendorff_packages_alpha() -> None:
    """The bootstrap computes all resamples at once; each equals the package's alpha of that
    resample of units (nan where a resample uses one value only), on random cases with
    missing ratings, unused domain values and single-value resamples."""
    import krippendorff

    from judges.stats.estimates.resample import index_counts, resample_indices

    rng = np.random.default_rng(8)
    for case in range(60):
        units, raters = int(rng.integers(1, 25)), int(rng.integers(2, 5))
        domain = np.sort(rng.choice(np.arange(1, 9), size=int(rng.integers(2, 6)), replace=False))
        data = rng.choice(domain[: max(2, domain.size - 1)], size=(raters, units)).astype(float)
        data[rng.random(data.shape) < 0.25] = np.nan
        data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
        if data.shape[1] == 0:
            continue
        value_counts = (data.T[:, :, None] == domain[None, None, :]).sum(axis=1)
        idx = resample_indices(data.shape[1], 50, case)
        ours = agreement.ordinal_alpha_of_resamples(value_counts, index_counts(idx, data.shape[1]))
        for r, row in enumerate(idx):
            counts = value_counts[row]
            if np.count_nonzero(counts.sum(axis=0)) < 2:
                assert math.isnan(ours[r])
                continue
            with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
                warnings.simplefilter("ignore")
                theirs = krippendorff.alpha(
                    value_counts=counts, value_domain=domain, level_of_measurement="ordinal"
                )
            assert ours[r] == pytest.approx(theirs, rel=1e-12, abs=1e-12, nan_ok=True)


def test_krippendorff_degenerate_inputs() -> None:
    assert math.isnan(agreement.krippendorff_alpha_ordinal(np.full((3, 4), 2.0)).value)
    lonely = np.array([[1.0, np.nan], [np.nan, 2.0]])
    e = agreement.krippendorff_alpha_ordinal(lonely)
    assert e.n == 0 and math.isnan(e.value)
