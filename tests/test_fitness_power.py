"""Chance tests decide only where they can: a test even a perfect judge cannot pass decides
nothing, and a subgroup test decides only where a judge right 90% of the time passes it with
95% probability (judges.stats.fitness.power)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.stats

from judges.reports.sections.fitness import cannot_show, weak_spots
from judges.stats.fitness import judge, power
from judges.stats.fitness.chance import collect, detection_vs_controls
from judges.stats.fitness.permutation import (
    agreement_above_chance,
    repeats_agree_above_chance,
    spearman_above_chance,
    within_disagreement,
    within_pairs,
)
from judges.stats.fitness.power import (
    _repeats_power,
    agreement_power,
    decide_by_power,
    detection_power,
    repeats_power,
    spearman_power,
    within_budget,
)

# --------------------------------------------------------------- a perfect judge's test


def test_noise_items_that_all_deserve_one_answer_cannot_decide() -> None:
    # Two items that both deserve a 5, one draw in ten off by three points: not "at chance".
    test = repeats_agree_above_chance([[5, 5, 5, 5, 2], [5, 5, 5, 5, 5]], name="n")
    assert not test.testable and not test.fit and test.verdict == "cannot decide"
    assert "cannot decide" in test.detail
    assert collect([test]).fit and collect([test]).undecided


def test_the_scaffolds_perfect_noise_and_retest_cannot_decide() -> None:
    # The first init scaffold: 2 noise items x 3 repeats, 6 retest pairs (its noise floor is
    # still that size, a diagnostic beside its 195 items' retest). A perfect judge reaches
    # alpha 1.00 at p = 0.087 and kappa 1.00 at p = 0.054: tests it cannot pass decide nothing.
    noise = repeats_agree_above_chance([[3, 3, 3], [1, 1, 1]], name="noise: accuracy")
    assert noise.value == 1.0 and noise.p_value > 0.05
    assert not noise.testable and noise.verdict == "cannot decide"
    main = [3, 1, 1, 3, 3, 3]
    retest = agreement_above_chance(main, main, name="test-retest: accuracy")
    assert retest.value == 1.0 and retest.p_value > 0.05 and not retest.testable
    assert collect([noise, retest]).fit and cannot_show(collect([noise, retest]))


def test_a_test_a_perfect_judge_can_pass_still_decides_against_an_unfit_judge() -> None:
    rng = np.random.default_rng(11)
    usual = [1, 2, 3, 4, 5, 1, 2, 3]
    stable = repeats_agree_above_chance([[v] * 5 for v in usual])
    assert stable.testable and stable.fit
    at_random = repeats_agree_above_chance([list(rng.integers(1, 6, 5)) for _ in usual])
    assert at_random.testable and not at_random.fit and at_random.verdict == "not fit"
    human = [int(v) for v in rng.integers(1, 6, 30)]
    # One side varies and the other is constant: the varying side's perfect copy would pass.
    assert agreement_above_chance(human, [3] * 30).testable
    assert spearman_above_chance(human, [3.0] * 30).testable
    # Three pairs: even a perfect rank correlation has p = 1/6.
    assert not spearman_above_chance([1, 2, 3], [1, 2, 3]).testable


# --------------------------------------------------------------------------- power


@pytest.mark.parametrize(("defects", "controls"), [(7, 15), (8, 6), (6, 12), (12, 12), (5, 5)])
def test_detection_power_matches_a_simulation_through_scipy_fisher(
    defects: int, controls: int
) -> None:
    rng = np.random.default_rng(defects * 100 + controls)
    n = 3000
    flagged = rng.binomial(defects, 0.9, n)
    false_positives = rng.binomial(controls, 0.1, n)
    passed = sum(
        scipy.stats.fisher_exact(
            [[k1, defects - k1], [k2, controls - k2]], alternative="greater"
        ).pvalue
        < 0.05
        for k1, k2 in zip(flagged, false_positives, strict=True)
    )
    assert detection_power(defects, controls) == pytest.approx(passed / n, abs=0.02)


def test_power_grows_with_the_set_and_is_nil_where_no_judge_could_pass() -> None:
    assert detection_power(4, 2) == 0.0  # 1 / C(6, 4) = 0.067: even a perfect judge fails
    assert detection_power(5, 5) < detection_power(8, 8) < detection_power(16, 15)
    assert detection_power(46, 15) > 0.999
    assert repeats_power((0, 0), (5, 5), 4, quadratic=True) == 0.0  # one usual answer
    small = repeats_power((0, 3), (3, 3), 4, quadratic=True)
    large = repeats_power((0, 3, 1, 2, 0, 3, 1, 2, 0, 3), (5,) * 10, 4, quadratic=True)
    assert small < 0.5 < 0.95 < large
    few = agreement_power((0, 1, 0, 1, 1, 0), 2, quadratic=False, both_drawn=True)
    many = agreement_power((0, 1) * 30, 2, quadratic=False, both_drawn=True)
    assert few < 0.5 and many > 0.95
    assert spearman_power((1.0, 2.0, 3.0)) == 0.0
    assert spearman_power(tuple(float(v % 5) for v in range(40))) > 0.95


def test_agreement_power_matches_an_independent_simulation() -> None:
    # A judge right 90% of the time against fixed labels, tested with scipy's permutation
    # test of Pearson's r on 0/1 answers (for binary answers the same ordering as kappa).
    truth = np.array([0, 1] * 6)
    rng = np.random.default_rng(5)
    n_sims, passed = 300, 0
    for _ in range(n_sims):
        judge = np.where(rng.random(truth.size) < 0.9, truth, 1 - truth)
        if np.ptp(judge) == 0:
            continue
        result = scipy.stats.pearsonr(
            judge, truth, alternative="greater",
            method=scipy.stats.PermutationMethod(n_resamples=400, rng=rng),
        )  # fmt: skip
        passed += result.pvalue < 0.05
    ours = agreement_power(tuple(int(v) for v in truth), 2, quadratic=False, both_drawn=False)
    assert ours == pytest.approx(passed / n_sims, abs=0.08)


def test_a_weak_subgroup_test_is_a_diagnostic_and_decides_nothing() -> None:
    # 3 of 7 fabrications flagged against 1 of 6 controls: weak, but 7 vs 6 is too small for
    # a good judge to pass reliably, so it is shown and decides nothing.
    weak = detection_vs_controls(3, 7, 1, 6, name="planted detection: fabrication")
    shown = decide_by_power(weak, detection_power(7, 6))
    assert shown.diagnostic and shown.verdict == "diagnostic: weak" and not shown.testable
    pooled = detection_vs_controls(40, 46, 1, 15, name="planted detection")
    fitness = collect([pooled, shown])
    assert fitness.fit and not fitness.undecided
    assert weak_spots(fitness)[0].startswith("weak on planted detection: fabrication")
    assert "3/7" in weak_spots(fitness)[0]
    # The same subgroup at a size a good judge passes 95% of the time decides.
    decided = decide_by_power(detection_vs_controls(3, 16, 1, 15), detection_power(16, 15))
    assert decided.testable and not collect([pooled, decided]).fit


def test_subgroup_tests_decide_only_within_a_five_percent_false_alarm_budget() -> None:
    # product_identity's shape: 46 defects in five categories against 15 controls.
    pooled = detection_vs_controls(46, 46, 0, 15, name="planted detection")
    pooled = dataclasses.replace(pooled, power=detection_power(46, 15))
    sizes = {"cousin": 16, "sign_flip": 10, "fabrication": 7, "dropped_edge_case": 7}
    sizes["self_contradiction"] = 6
    subgroups = [
        decide_by_power(
            detection_vs_controls(n, n, 0, 15, name=f"planted detection: {c}"),
            detection_power(n, 15),
        )
        for c, n in sizes.items()
    ]
    assert all(t.testable for t in subgroups)  # each alone passes the 95% bar
    kept = within_budget([pooled, *subgroups])
    deciding = [t for t in kept if t.testable]
    assert sum(1 - t.power for t in deciding) <= 0.05
    assert pooled in kept and kept[0].testable  # the pooled test always decides
    weakest = next(t for t in kept if t.name.endswith("self_contradiction"))
    assert not weakest.testable and weakest.diagnostic  # 0.965: over the budget
    assert collect(kept).fit


# --------------------------------------------- the disagreement sum, counted per category


def _pairwise_power(
    usual: tuple[int, ...],
    sizes: tuple[int, ...],
    k: int,
    quadratic: bool,
    values: tuple[float, ...] | None,
) -> float:
    """repeats_power as first written: one weight look-up per ordered pair of answers."""
    if len(set(usual)) < 2:
        return 0.0  # every item deserves one answer: nothing to show
    rng = np.random.default_rng(0)
    w = power._weights(k, quadratic, values)
    size = np.asarray(sizes)
    truth = np.repeat(np.asarray(usual), size)
    answers = power._wrong(np.tile(truth, (power.N_SIMULATIONS, 1)), k, rng, power.GOOD)
    left, right, share = within_pairs(size)
    total = float(truth.size)
    passed = 0
    for one in answers:
        counts = np.bincount(one, minlength=k).astype(float)
        expected = float(counts @ w @ counts) / (total * (total - 1))
        if expected <= 1e-15:
            continue
        observed = float(w[one[left], one[right]] @ share) / total
        shuffled = one[power._shuffles(truth.size, 0)]
        draws = (w[shuffled[:, left], shuffled[:, right]] @ share) / total
        p = power._p_at_most(np.array([observed]), draws[None, :])[0]
        passed += bool(observed < expected and p < power.ALPHA)
    return passed / power.N_SIMULATIONS


def test_the_disagreement_counted_per_category_is_the_sum_over_pairs() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        sizes = rng.integers(2, 7, int(rng.integers(1, 12)))
        k = int(rng.integers(2, 6))
        values = np.sort(rng.normal(size=k) * 3)  # real-valued categories, quadratic
        w = (values[:, None] - values[None, :]) ** 2 if rng.random() < 0.5 else 1 - np.eye(k)
        answers = rng.integers(0, k, (int(rng.integers(1, 5)), int(sizes.sum())))
        left, right, share = within_pairs(sizes)
        by_pairs = w[answers[:, left], answers[:, right]] @ share
        np.testing.assert_allclose(within_disagreement(answers, sizes, w), by_pairs, rtol=1e-12)
        one = within_disagreement(answers[0], sizes, w)
        assert np.ndim(one) == 0 and one == pytest.approx(by_pairs[0], rel=1e-12)


def test_repeats_power_is_the_same_figure_as_the_pairwise_count() -> None:
    """The faster count draws nothing differently: the same power on random designs."""
    rng = np.random.default_rng(3)
    for _ in range(25):
        k = int(rng.integers(2, 6))
        usual = tuple(int(v) for v in rng.integers(0, k, int(rng.integers(2, 12))))
        sizes = tuple(int(v) for v in rng.integers(2, 7, len(usual)))
        # Categories 0..k-1, or values spaced unevenly (a total: 3, 6, 7, 9).
        spaced = tuple(float(v) for v in np.sort(rng.choice(10, k, replace=False)))
        for quadratic, values in ((True, None), (True, spaced), (False, None)):
            options = {"quadratic": quadratic, "values": values, "alpha": 0.05, "good": 0.9}
            ours = _repeats_power(usual, sizes, k, **options, seed=0)
            expected = _pairwise_power(usual, sizes, k, quadratic, values)
            assert ours == expected, (usual, sizes, k, values)
            # The power that decides is the harder of independent and item-stuck errors.
            sticky = _repeats_power(usual, sizes, k, sticky=True, **options, seed=0)
            found = repeats_power(usual, sizes, k, quadratic=quadratic, values=values)
            assert found == min(ours, sticky)


def test_errors_stuck_to_items_can_lower_the_power_of_a_noise_test() -> None:
    # Four noise items, three of them with one usual answer: a 90% judge whose errors fall
    # on hard items (one hard item can be the odd one out) passes less often than one whose
    # errors are independent, and the lower figure decides.
    options = {"quadratic": True, "values": None, "alpha": 0.05, "good": 0.9, "seed": 0}
    usual, sizes = (1, 1, 1, 3), (5,) * 4
    independent = _repeats_power(usual, sizes, 4, **options)
    stuck = _repeats_power(usual, sizes, 4, sticky=True, **options)
    assert stuck < independent
    assert repeats_power(usual, sizes, 4, quadratic=True) == stuck


def test_an_experts_labels_counted_as_a_draw_lower_the_power_of_sme_tests() -> None:
    # product_identity's 17 expert totals: against the labels taken as the truth a good judge
    # passes both SME tests 99% of the time; against a labeller right 90% of the time, as the
    # judge is, it passes under 95%, so at 17 labels the SME tests are diagnostics.
    totals = (9, 9, 9, 9, 9, 9, 9, 6, 6, 6, 7, 3, 6, 7, 7, 6, 6)
    human = tuple(float(v) for v in totals)
    values = tuple(sorted(set(human)))  # a total states no scale: the values labelled
    index = tuple(values.index(v) for v in human)
    kappa = {"quadratic": True, "values": values}
    truth_power = (
        spearman_power(human),
        agreement_power(index, 4, both_drawn=False, **kappa),
    )
    drawn_power = (
        spearman_power(human, both_drawn=True),
        agreement_power(index, 4, both_drawn=True, **kappa),
    )
    assert min(truth_power) >= 0.95 > max(drawn_power)
    # Four times the labels: both drawn, a good judge passes them and they decide again.
    assert spearman_power(human * 4, both_drawn=True) >= 0.95
    assert agreement_power(index * 4, 4, both_drawn=True, **kappa) >= 0.95


# ------------------------------------------------- a wrong answer: any value of the scale


def test_quadratic_agreement_power_on_uneven_values_matches_the_test_itself() -> None:
    # The real test (agreement_above_chance on the values) run on simulated judges: the
    # power must measure distances between values, not between category indices.
    values = (0.0, 3.0, 4.0, 9.0)
    truth = np.array([0, 1, 2, 3, 3, 2, 1, 0, 3, 3, 0, 2])
    rng = np.random.default_rng(9)
    n_sims, passed = 300, 0
    for _ in range(n_sims):
        judge = power._wrong(truth, 4, rng, power.GOOD)
        test = agreement_above_chance(
            [values[i] for i in judge], [values[i] for i in truth], n_resamples=50, seed=1
        )
        passed += test.fit_ignoring_power
    ours = agreement_power(
        tuple(int(v) for v in truth), 4, quadratic=True, both_drawn=False, values=values
    )
    assert ours == pytest.approx(passed / n_sims, abs=0.08)
    by_index = agreement_power(tuple(int(v) for v in truth), 4, quadratic=True, both_drawn=False)
    assert by_index != ours  # the spacing is not a detail


def test_a_noise_test_counts_wrong_answers_on_the_whole_scale_not_the_ones_seen() -> None:
    # Six noise items of a 1-5 facet (geval's coverage); this run never gave a 1. Its good
    # judge's wrong answer may be a 1, which quadratic weights count heavily: the power on
    # the reply model's scale is the lower, and the one that decides.
    units = [[4] * 5, [5, 5, 5, 5, 2], [2] * 5, [4, 4, 3, 4, 4], [3] * 5, [5] * 5]
    seen = judge._noise_power(units, True, None)
    scale = judge._noise_power(units, True, (1.0, 5.0))
    usual = (3, 4, 1, 3, 2, 4)
    assert scale == repeats_power(usual, (5,) * 6, 5, quadratic=True, values=(1, 2, 3, 4, 5))
    assert scale < seen


@pytest.mark.parametrize(
    "scale", [(0.0, 1e9), (5.0, 1.0), (0.5, 4.5), (float("nan"), 5.0), (1.0, float("inf"))]
)
def test_a_scale_that_is_no_rating_scale_keeps_the_values_seen(scale: tuple) -> None:
    # A count's range, a reversed or fractional one, NaN or infinity: never a billion
    # categories or an error, the values the run gave.
    units = [[4] * 5, [5, 5, 5, 5, 2], [2] * 5, [4, 4, 3, 4, 4], [3] * 5, [5] * 5]
    assert judge._noise_power(units, True, scale) == judge._noise_power(units, True, None)
