"""Chance tests (judges.stats.fitness.chance, .fitness_permutation) against independent references.

Every statistic is checked on random cases against another implementation: Fisher's and the
binomial tails summed by hand with math.comb, Newcombe's interval from the textbook Wilson
formula, kappa and AUC against scikit-learn, and every permutation p-value against scipy's
exact permutation_test (all re-pairings enumerated) on samples small enough to enumerate.
Then the adversarial judges: constant, random and reversed are never FIT, a good one is.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from statistics import NormalDist

import krippendorff
import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from judges.reports.sections.fitness import cannot_show, fitness_reasons, reason_text
from judges.stats.fitness.chance import (
    ChanceTest,
    Fitness,
    accuracy_vs_chance,
    collect,
    detection_vs_controls,
    newcombe_difference,
    scores_lower_on_defects,
)
from judges.stats.fitness.mann_whitney import mann_whitney_p
from judges.stats.fitness.permutation import (
    agreement_above_chance,
    ranking_above_random,
    repeats_agree_above_chance,
    spearman_above_chance,
)
from judges.stats.ranking.metrics import evaluate_ranking, random_expectation
from judges.stats.ranking.random_draws import draw_metrics

Z975 = NormalDist().inv_cdf(0.975)
CASES = range(12)


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    p, z = k / n, Z975
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def fisher_greater_by_hand(a: int, n1: int, c: int, n2: int) -> float:
    """P(X >= a), X hypergeometric: n1 draws from n1 + n2 with a + c flagged, exactly."""
    flagged, total = a + c, n1 + n2
    tail = sum(
        Fraction(math.comb(n1, x) * math.comb(n2, flagged - x))
        for x in range(a, min(n1, flagged) + 1)
    )
    return float(tail / math.comb(total, flagged))


def binomial_tail_by_hand(k: int, n: int, p: Fraction) -> float:
    """P(X >= k), X ~ Binomial(n, p), exactly."""
    return float(sum(math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(k, n + 1)))


# --------------------------------------------------------------------------- proportions


@pytest.mark.parametrize("case", CASES)
def test_detection_vs_controls_matches_hand_fisher_and_newcombe(case: int) -> None:
    rng = np.random.default_rng(case)
    n1, n2 = int(rng.integers(3, 30)), int(rng.integers(3, 30))
    a, c = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
    test = detection_vs_controls(a, n1, c, n2)
    assert test.p_value == pytest.approx(fisher_greater_by_hand(a, n1, c, n2), rel=1e-9)
    # The other side: controls flagged more often than defects, same table read backwards.
    assert test.p_worse == pytest.approx(fisher_greater_by_hand(c, n2, a, n1), rel=1e-9)
    l1, u1 = wilson_by_hand(a, n1)
    l2, u2 = wilson_by_hand(c, n2)
    p1, p2 = a / n1, c / n2
    low = p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = p1 - p2 + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    assert (test.value, test.low, test.high) == pytest.approx((p1 - p2, low, high), abs=1e-9)
    assert test.n == n1 + n2 and test.k == a
    assert test.testable == (1 / math.comb(n1 + n2, n1) < 0.05)


def test_detection_at_chance_is_not_fit_and_perfect_is_fit() -> None:
    # A coin flip: the same rate on defects and controls, however high (the 13/15).
    assert not detection_vs_controls(26, 30, 13, 15).fit
    assert detection_vs_controls(10, 10, 0, 10).fit
    reversed_judge = detection_vs_controls(0, 10, 10, 10)
    assert reversed_judge.worse_than_chance and reversed_judge.verdict == "worse than chance"
    # Two defects and one control: even a perfect judge has p = 1/3, so it decides nothing.
    tiny = detection_vs_controls(2, 2, 0, 1)
    assert not tiny.testable and tiny.verdict == "cannot decide"
    assert not detection_vs_controls(3, 3, 0, 0).testable


def test_newcombe_difference_is_nan_without_one_side() -> None:
    assert all(math.isnan(v) for v in newcombe_difference(1, 2, 0, 0))


@pytest.mark.parametrize("case", CASES)
def test_accuracy_vs_chance_matches_hand_binomial(case: int) -> None:
    rng = np.random.default_rng(100 + case)
    n = int(rng.integers(1, 60))
    k = int(rng.integers(0, n + 1))
    chance = Fraction(int(rng.integers(1, 4)), 4)
    test = accuracy_vs_chance(k, n, float(chance))
    assert test.p_value == pytest.approx(binomial_tail_by_hand(k, n, chance), rel=1e-9)
    assert test.p_worse == pytest.approx(
        binomial_tail_by_hand(n - k, n, 1 - chance), rel=1e-9
    )  # fewer than k successes is more than n - k failures
    assert (test.low, test.high) == pytest.approx(wilson_by_hand(k, n), abs=1e-9)
    assert test.fit == (test.testable and k / n > chance and test.p_value < 0.05)


def test_accuracy_verdicts_for_a_pairwise_judge() -> None:
    assert accuracy_vs_chance(70, 100).verdict == "fit"
    assert accuracy_vs_chance(50, 100).verdict == "not fit"
    assert accuracy_vs_chance(30, 100).verdict == "worse than chance"
    assert accuracy_vs_chance(4, 4).verdict == "cannot decide"  # 0.5**4 = 0.0625
    assert accuracy_vs_chance(5, 5).verdict == "fit"  # 0.5**5 = 0.03125
    assert accuracy_vs_chance(0, 0).verdict == "cannot decide"
    with pytest.raises(ValueError, match="chance"):
        accuracy_vs_chance(1, 2, chance=1.0)


# --------------------------------------------------------------------------- permutations


def exact_pairing_p(x: np.ndarray, y: np.ndarray, statistic) -> float:
    """Share of all n! re-pairings whose statistic is at least the observed one, enumerated."""
    observed = statistic(x, y)
    draws = [statistic(x, y[list(order)]) for order in itertools.permutations(range(len(y)))]
    return sum(d >= observed - 1e-12 for d in draws) / len(draws)


@pytest.mark.parametrize("case", range(6))
def test_quadratic_kappa_matches_sklearn_and_exact_permutation(case: int) -> None:
    rng = np.random.default_rng(200 + case)
    n = 5  # 120 re-pairings: sklearn's kappa on each stays well under a second
    a = rng.integers(1, 5, n)
    b = np.clip(a + rng.integers(-2, 3, n), 1, 4) if case % 2 else rng.integers(1, 5, n)
    if len(set(a)) < 2 or len(set(b)) < 2:
        pytest.skip("a constant rater is tested separately")
    test = agreement_above_chance(a, b, n_permutations=5000)
    assert test.value == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"), abs=1e-9)
    exact = exact_pairing_p(a, b, lambda x, y: cohen_kappa_score(x, y, weights="quadratic"))
    assert test.p_value == pytest.approx(exact, abs=0.03)
    assert test.low <= test.value <= test.high


@pytest.mark.parametrize("case", range(4))
def test_nominal_kappa_matches_sklearn_and_exact_permutation(case: int) -> None:
    rng = np.random.default_rng(300 + case)
    labels = np.array(["Perfectly", "Somewhat", "Not"])
    a = labels[rng.integers(0, 3, 5)]
    b = np.where(rng.random(5) < 0.6, a, labels[rng.integers(0, 3, 5)])
    if len(set(a)) < 2 or len(set(b)) < 2:
        pytest.skip("a constant rater is tested separately")
    test = agreement_above_chance(list(a), list(b), weights="nominal", n_permutations=5000)
    assert test.statistic == "kappa"
    assert test.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    exact = exact_pairing_p(a, b, lambda x, y: cohen_kappa_score(x, y))
    assert test.p_value == pytest.approx(exact, abs=0.03)


@pytest.mark.parametrize("case", range(6))
def test_spearman_matches_scipy_and_exact_permutation(case: int) -> None:
    rng = np.random.default_rng(400 + case)
    x = rng.integers(0, 5, 6).astype(float)
    y = x + rng.normal(0, 1 + case, 6)
    if np.ptp(x) == 0:
        pytest.skip("a constant rater is tested separately")
    test = spearman_above_chance(x, y, n_permutations=5000)
    assert test.value == pytest.approx(scipy.stats.spearmanr(x, y).statistic, abs=1e-9)
    exact = exact_pairing_p(x, y, lambda u, v: scipy.stats.spearmanr(u, v).statistic)
    assert test.p_value == pytest.approx(exact, abs=0.03)


def test_a_constant_or_random_rater_is_not_fit() -> None:
    rng = np.random.default_rng(7)
    human = rng.integers(1, 6, 40)
    constant = agreement_above_chance(human, [3] * 40)
    assert math.isnan(constant.value) and constant.p_value == 1.0
    assert constant.testable and not constant.fit and constant.verdict == "not fit"
    assert not spearman_above_chance(human, [3.0] * 40).fit
    at_random = rng.integers(1, 6, 40)
    assert not agreement_above_chance(human, at_random).fit
    assert not spearman_above_chance(human, at_random).fit
    reverse = 6 - human
    assert agreement_above_chance(human, reverse).worse_than_chance
    assert spearman_above_chance(human, reverse).worse_than_chance
    assert agreement_above_chance(human, np.clip(human + rng.integers(-1, 2, 40), 1, 5)).fit
    assert not agreement_above_chance([1], [1]).testable


def test_permutation_results_are_seeded() -> None:
    a, b = [1, 2, 3, 4, 2, 3, 1, 4], [1, 3, 3, 4, 2, 2, 1, 3]
    assert agreement_above_chance(a, b, seed=3) == agreement_above_chance(a, b, seed=3)
    assert spearman_above_chance(a, b, seed=3) == spearman_above_chance(a, b, seed=3)


@pytest.mark.parametrize("case", range(6))
def test_repeats_alpha_matches_krippendorff_and_exact_permutation(case: int) -> None:
    rng = np.random.default_rng(700 + case)
    weights, level = ("quadratic", "interval") if case % 2 else ("nominal", "nominal")
    units = [[int(v) for v in rng.integers(1, 4, 1)[0] + rng.integers(0, 2, 3)] for _ in range(3)]
    pool = [v for unit in units for v in unit]
    if len(set(pool)) < 2:
        pytest.skip("one value throughout is tested separately")
    test = repeats_agree_above_chance(units, weights=weights, n_permutations=5000)
    data = np.array(units, dtype=float).T  # krippendorff: raters x units
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert test.value == pytest.approx(reference, abs=1e-9)
    # Exact: every distinct assignment of the 9 answers to the cells, all equally likely.
    draws = [
        krippendorff.alpha(
            reliability_data=np.array(order, dtype=float).reshape(3, 3).T,
            level_of_measurement=level,
        )
        for order in set(itertools.permutations(pool))
    ]
    exact = sum(d >= reference - 1e-9 for d in draws) / len(draws)
    assert test.p_value == pytest.approx(exact, abs=0.03)


def test_repeats_of_a_random_or_constant_judge_are_not_fit() -> None:
    rng = np.random.default_rng(8)
    assert not repeats_agree_above_chance([list(rng.integers(1, 6, 5)) for _ in range(8)]).fit
    constant = repeats_agree_above_chance([[3] * 5] * 4)
    assert math.isnan(constant.value) and not constant.fit
    stable = [[v] * 5 for v in (1, 2, 3, 4, 5, 1, 2, 3)]
    assert repeats_agree_above_chance(stable).fit
    assert repeats_agree_above_chance([["yes"] * 3, ["no"] * 3, ["yes"] * 3, ["no"] * 3],
                                      weights="nominal").fit  # fmt: skip
    assert not repeats_agree_above_chance([[1, 2]]).testable


def _queries(rng: np.random.Generator, n_queries: int) -> list[dict[str, int]]:
    return [
        {f"q{q}d{d}": int(rng.integers(0, 5)) for d in range(int(rng.integers(6, 12)))}
        for q in range(n_queries)
    ]


@pytest.mark.parametrize("judge", ["perfect", "constant", "random", "reversed"])
def test_ranking_above_random_with_the_draws_of_random_rankings(judge: str) -> None:
    rng = np.random.default_rng(500)
    queries = _queries(rng, 6)
    values, draws = [], []
    for labels in queries:
        scores = {
            "perfect": {d: float(v) for d, v in labels.items()},
            "constant": dict.fromkeys(labels, 1.0),
            "random": {d: float(rng.random()) for d in labels},
            "reversed": {d: -float(v) for d, v in labels.items()},
        }[judge]
        values.append(evaluate_ranking(scores, labels)["ndcg@10"])
        draws.append(draw_metrics(list(labels), labels, n_draws=2000, seed=len(draws))["ndcg@10"])
    random_value = float(np.mean([random_expectation(q)["ndcg@10"] for q in queries]))
    test = ranking_above_random(values, np.mean(draws, axis=0), random_value)
    # The p-value is the share of random rankings at least as good, the observed one counted.
    means = np.mean(draws, axis=0)
    at_least = int(np.sum(means >= np.mean(values) - 1e-12))
    assert test.p_value == pytest.approx((1 + at_least) / 2001)
    assert test.n == 6 and test.testable
    assert test.fit == (judge == "perfect")
    assert test.worse_than_chance == (judge == "reversed")


def test_ranking_of_one_tiny_query_is_untestable() -> None:
    labels = {"a": 4, "b": 0}
    draws = draw_metrics(list(labels), labels, n_draws=2000, seed=0)["ndcg@10"]
    test = ranking_above_random([1.0], draws, random_expectation(labels)["ndcg@10"])
    assert not test.testable


# --------------------------------------------------------------------------- score judges


@pytest.mark.parametrize("case", CASES)
def test_scores_lower_on_defects_matches_sklearn_auc_and_permutation(case: int) -> None:
    rng = np.random.default_rng(600 + case)
    defects = rng.integers(1, 6, int(rng.integers(2, 6))).astype(float)
    controls = (rng.integers(1, 6, int(rng.integers(2, 6))) + case % 3).astype(float)
    test = scores_lower_on_defects(defects, controls)
    truth = [1] * controls.size + [0] * defects.size
    assert test.value == pytest.approx(roc_auc_score(truth, [*controls, *defects]), abs=1e-9)
    if np.ptp(np.concatenate([defects, controls])) == 0:
        assert test.p_value == 1.0
        return
    pooled, nc = np.concatenate([controls, defects]), controls.size
    observed = scipy.stats.mannwhitneyu(controls, defects).statistic
    draws = [
        scipy.stats.mannwhitneyu(pooled[list(c)], np.delete(pooled, list(c))).statistic
        for c in itertools.combinations(range(pooled.size), nc)
    ]
    exact = sum(d >= observed - 1e-9 for d in draws) / len(draws)
    assert test.p_value == pytest.approx(exact, abs=1e-9)  # at most C(10, 5) splits: exact
    assert test.low <= test.value <= test.high


def test_both_mann_whitney_sides_are_scipys_permutation_p_values() -> None:
    """One null distribution serves both sides, and its draws and rule are scipy's: the same
    p-values as `mannwhitneyu(method=PermutationMethod(...))`, exact splits and seeded draws
    alike, with ties, on random cases."""
    rng = np.random.default_rng(12)
    for case in range(150):
        x = rng.integers(1, int(rng.integers(3, 7)), int(rng.integers(2, 16))).astype(float)
        y = rng.integers(1, 6, int(rng.integers(2, 16))).astype(float)
        if case % 5 == 0:
            x = rng.normal(size=x.size)
        if np.ptp(np.concatenate([x, y])) == 0:
            continue
        resamples = int(rng.choice([50, 999, 9999]))
        method = scipy.stats.PermutationMethod(n_resamples=resamples, rng=case)
        theirs = tuple(
            float(scipy.stats.mannwhitneyu(x, y, alternative=side, method=method).pvalue)
            for side in ("greater", "less")
        )
        assert mann_whitney_p(x, y, resamples, case) == theirs, (case, resamples)


def test_score_judges_at_chance_are_not_fit() -> None:
    constant = scores_lower_on_defects([5.0] * 8, [5.0] * 6)
    assert constant.value == 0.5 and constant.p_value == 1.0 and not constant.fit
    assert scores_lower_on_defects([1, 1, 2, 2, 1, 2], [4, 5, 5, 4, 5, 4]).fit
    assert scores_lower_on_defects([4, 5, 5, 4, 5, 4], [1, 1, 2, 2, 1, 2]).worse_than_chance
    assert not scores_lower_on_defects([1, 2], [5]).testable  # 1 / C(3, 2) = 1/3
    assert not scores_lower_on_defects([], [5]).testable


# --------------------------------------------------------------------------- aggregate


def test_fitness_needs_one_decisive_test_and_every_decisive_test_fit() -> None:
    fit = detection_vs_controls(10, 10, 0, 10, name="detection")
    unfit = detection_vs_controls(5, 10, 5, 10, name="detection: cousin")
    tiny = detection_vs_controls(1, 1, 0, 1, name="detection: sign_flip")
    assert collect([fit, tiny]).fit and not collect([fit, tiny]).undecided
    # Nothing could decide: nothing failed, and the set says what it cannot yet show.
    undecided = collect([tiny])
    assert undecided.verdict == "FIT" and undecided.undecided and not fitness_reasons(undecided)
    assert "cannot yet show" in cannot_show(undecided)[0]
    assert "detection: sign_flip" in cannot_show(undecided)[0]
    both = collect([unfit, fit])
    assert both.verdict == "NOT FIT" and both.failing == [unfit]
    assert fitness_reasons(both) == [reason_text(unfit)]
    assert [t.name for t in both.tests] == ["detection", "detection: cousin"]
    assert Fitness(()).verdict == "NOT FIT"  # no test at all is no evidence
    assert "no chance test applies" in fitness_reasons(Fitness(()))[0]


def test_sentence_and_json_carry_n_interval_and_p() -> None:
    test = detection_vs_controls(3, 10, 2, 10, name="planted detection: cousin")
    line = reason_text(test)
    assert line.startswith("planted detection: cousin: AT CHANCE (detection - control FP 0.10 [")
    assert "n=20" in line and "p(better) = " in line and "defects flagged 3/10" in line
    assert "controls flagged 2/10" in line
    data = test.as_dict()
    assert data["verdict"] == "not fit" and data["n"] == 20 and data["k"] == 3
    assert set(data) >= {"value", "low", "high", "chance", "p_value", "p_worse", "testable"}
    assert isinstance(test, ChanceTest)
    assert agreement_above_chance([1, 1], [1, 2]).as_dict()["value"] is None
