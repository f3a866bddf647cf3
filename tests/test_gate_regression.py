"""Regression gates against the accepted baseline, floors, and gates that cannot be evaluated.

The acceptance tests run on recorded data in the repository (reports/product_identity/*/
results.jsonl): 0.3 -> 0.3.1 must fail the detection regression gate; the retest run of
0.3.1 (an independent re-recording of the same prompt) must pass 0.3.1's gates.
"""

from __future__ import annotations

import itertools
import math
import random
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from judges.core.results import Expectation, JudgementRow, read_jsonl
from judges.sets.planted import Gates
from judges.sets.sme import SmeLabel
from judges.stats.estimates.floors import Gate, evaluate, not_evaluated
from judges.stats.estimates.intervals import Estimate, wilson
from judges.stats.estimates.paired_tests import binomial_midp, smallest_midp
from judges.stats.estimates.resample import resample_indices
from judges.stats.regression.comparison import bounded_score
from judges.stats.regression.family import holm, version_regressions
from judges.stats.regression.gates import (
    PairedCounts,
    Regression,
    baseline_regressions,
    control_regression,
    detection_regression,
    mcnemar_one_sided,
    score_regression,
    score_regressions,
    sme_regression,
)
from judges.stats.reliability.agreement import quadratic_kappa_change

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "reports" / "product_identity"


def _row(item: str, *, met: bool, control: bool = False, status: str = "ok") -> JudgementRow:
    return JudgementRow(
        judge="j",
        prompt_version="1",
        prompt_hash="h",
        model="local:m",
        item_id=item,
        category="control" if control else "cousin",
        control=control,
        status=status,
        verdict={"score": 1} if status == "ok" else None,
        expect=[],
        met=met if status == "ok" else None,
    )


def _run(defects: list[bool], controls: list[bool] = (), status: str = "ok") -> list[JudgementRow]:
    rows = [_row(f"D-{i:02d}", met=m, status=status) for i, m in enumerate(defects)]
    rows += [_row(f"C-{i:02d}", met=m, control=True, status=status) for i, m in enumerate(controls)]
    return rows


def _main(version: str, run: str = "main") -> list[JudgementRow]:
    return [row for row in read_jsonl(RESULTS / version / "results.jsonl") if row.run == run]


def _tables() -> dict[tuple[str, str], Gates]:
    import tomllib

    raw = tomllib.loads((ROOT / "planted_sets/product_identity/gates.toml").read_text())
    return {(m, v): Gates.model_validate(t) for m, vs in raw.items() for v, t in vs.items()}


# --------------------------------------------------------------------------- the exact test


@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60))
def test_one_sided_mcnemar_matches_scipy_binomtest(pairs: list[tuple[bool, bool]]) -> None:
    before = [a for a, _ in pairs]
    after = [b for _, b in pairs]
    test = mcnemar_one_sided(before, after)
    worse = sum(a and not b for a, b in pairs)
    better = sum(b and not a for a, b in pairs)
    assert (test.worse, test.better, test.n) == (worse, better, len(pairs))
    if worse + better == 0:
        assert test.p_value == 1.0
    else:
        # The mid-p is the exact p less half the probability of the observed count.
        reference = scipy.stats.binomtest(worse, worse + better, 0.5, alternative="greater")
        at = scipy.stats.binom.pmf(worse, worse + better, 0.5)
        assert test.p_value == pytest.approx(reference.pvalue - at / 2, rel=1e-9)
        d = worse + better
        by_hand = sum(math.comb(d, k) for k in range(worse + 1, d + 1)) + math.comb(d, worse) / 2
        assert test.p_value == pytest.approx(by_hand / 2**d, rel=1e-9)


def test_one_sided_mcnemar_refuses_unpaired_input() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar_one_sided([True], [True, False])


# --------------------------------------------------------------------------- acceptance tests


def test_acceptance_0_3_to_0_3_1_fails_the_detection_regression_gate() -> None:
    gate = detection_regression(_main("0.3"), _main("0.3.1"), "prompt 0.3 main run")
    assert gate.passed is False
    assert (gate.result.worse, gate.result.better, gate.result.n) == (22, 4, 46)
    # One-sided mid-p: P(X > 22) + P(X = 22) / 2, X ~ Bin(26, 1/2).
    assert gate.result.p_value == pytest.approx(
        scipy.stats.binom.sf(22, 26, 0.5) + scipy.stats.binom.pmf(22, 26, 0.5) / 2
    )
    assert round(gate.result.p_value, 4) == 0.0002
    assert gate.power is not None and gate.power.n == 46
    assert "22 caught->missed vs 4 missed->caught" in gate.describe()


def test_acceptance_0_3_1_against_itself_passes() -> None:
    rows = _main("0.3.1")
    gates = baseline_regressions(rows, rows, "prompt 0.3.1 main run")
    assert [g.passed for g in gates] == [True, True]


def _retest_results() -> list[Gate | object]:
    table = _tables()[("local:smollm2-135m", "0.3.1")]
    retest = _main("0.3.1", run="retest")
    return [*evaluate(retest, table), *baseline_regressions(_main("0.3.1"), retest, "0.3.1")]


def test_acceptance_retest_run_passes_the_gates_of_its_prompt() -> None:
    results = _retest_results()
    # A statistic without a threshold is informational (no gate), not a failure.
    failing = [r for r in results if r.passed is False or not_evaluated(r)]
    assert not failing, [result.describe() for result in failing]


def test_retest_run_figures_as_recorded() -> None:
    """Main run and retest of 0.3.1 are two draws of one judge: they differ item by item
    (26 of 46 defects changed verdict), but in both directions alike."""
    gate = detection_regression(_main("0.3.1"), _main("0.3.1", run="retest"), "0.3.1 main")
    assert (gate.result.worse, gate.result.better) == (14, 12)
    assert gate.result.p_value == pytest.approx(
        scipy.stats.binom.sf(14, 26, 0.5) + scipy.stats.binom.pmf(14, 26, 0.5) / 2
    )
    assert gate.passed is True
    # 26 of 46 items flip between two draws: this set cannot see a 15-point drop.
    assert gate.power is not None and gate.power.drop > 0.15
    assert "observed discordance 26/46" in gate.describe()


# --------------------------------------------------------------------------- adversarial judges


GOOD = [True] * 36 + [False] * 4  # a judge that catches 36 of 40 planted defects
HELD = [True] * 9 + [False]  # and holds 9 of 10 controls


def test_judge_that_agrees_with_everything_fails_detection_regression() -> None:
    baseline = _run(GOOD, HELD)
    lenient = _run([False] * 40, [True] * 10)  # finds nothing wrong anywhere
    detection, control = baseline_regressions(baseline, lenient, "baseline")
    assert detection.passed is False and detection.result.worse == 36
    assert control.passed is True  # it holds every control: that is not a regression


def test_judge_that_flags_everything_fails_control_regression() -> None:
    baseline = _run(GOOD, HELD)
    harsh = _run([True] * 40, [False] * 10)
    detection, control = baseline_regressions(baseline, harsh, "baseline")
    assert detection.passed is True
    assert control.passed is False and control.result.worse == 9


def test_random_judge_fails_detection_regression() -> None:
    rng = random.Random(7)
    failures = 0
    for _ in range(50):
        coin = _run([rng.random() < 0.5 for _ in GOOD], [rng.random() < 0.5 for _ in HELD])
        failures += detection_regression(_run(GOOD, HELD), coin, "baseline").passed is False
    assert failures >= 48  # a coin against 36/40 is worse beyond chance nearly every time


def test_same_judge_different_luck_passes() -> None:
    # The four misses moved to other items: no evidence of change.
    other = [False] * 4 + [True] * 36
    gate = detection_regression(_run(GOOD), _run(other), "baseline")
    assert gate.passed is True and (gate.result.worse, gate.result.better) == (4, 4)


# --------------------------------------------------------------------------- not evaluated


def test_all_error_run_is_not_evaluated_never_passed() -> None:
    baseline = _run(GOOD, HELD)
    failed = _run(GOOD, HELD, status="transport")
    gates = baseline_regressions(baseline, failed, "baseline")
    assert [g.passed for g in gates] == [None, None]
    assert all(not_evaluated(g) for g in gates)
    assert "40 failed judgement" in gates[0].describe()
    table = Gates(min_detection={"cousin": 0.5}, max_error_rate=0.0, max_control_false_positive=0.5)
    floors = {g.name: g for g in evaluate(failed, table)}
    assert floors["detection[cousin]"].passed is False  # a failed judgement caught nothing
    assert floors["error_rate"].passed is False
    assert not_evaluated(floors["control_false_positive"])  # no control was answered


def test_floor_gate_without_data_is_not_evaluated() -> None:
    gate = Gate("noise_floor.min_exact_match.x", wilson(0, 0), 0.5, True)
    assert gate.passed is None and not_evaluated(gate)
    informational = Gate("detection[x]", wilson(0, 0), None, True)
    assert not not_evaluated(informational)


def test_items_only_on_one_side_are_named_not_paired() -> None:
    gate = control_regression(_run([], [True, True]), _run([], [True]), "baseline")
    assert gate.result.n == 1 and gate.excluded == {"not in this run": 1}


# --------------------------------------------------------------------------- scores


def test_score_regression_fails_a_clear_drop_whatever_the_noise_floor() -> None:
    rng = np.random.default_rng(3)
    before = rng.integers(2, 4, size=40).astype(float)
    after = before - 1.0 + rng.choice([0.0, 0.5], size=40)
    gate = score_regression("score", "b", before, after, higher_is_better=True, noise_sd=0.2)
    assert gate.passed is False and gate.p_value is not None and gate.p_value < 0.05
    # The noise floor is no second threshold: it only widens the power statement.
    noisy = score_regression("score", "b", before, after, higher_is_better=True, noise_sd=2.0)
    assert noisy.passed is False
    assert noisy.power is not None and gate.power is not None
    assert noisy.power.drop > gate.power.drop and "noise floor sd 2.00" in noisy.describe()
    improvement = score_regression("score", "b", before, after, higher_is_better=False)
    assert improvement.passed is True


def test_score_regression_p_value_matches_scipy_permutation_test() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(3, 13))
        before = rng.integers(1, 6, size=n).astype(float)
        after = np.clip(before + rng.integers(-2, 2, size=n), 1, 5)
        gate = score_regression("s", "b", before, after, higher_is_better=True)
        diffs = after - before
        if not diffs.any():
            assert gate.p_value == 1.0
            continue
        exact = scipy.stats.permutation_test(
            (diffs,), np.sum, permutation_type="samples", alternative="less",
            n_resamples=np.inf,
        )  # fmt: skip
        # mid-p = P(T <= t) - P(T = t) / 2; the tie mass from enumerating the signs by hand.
        sums = [float(np.dot(signs, diffs)) for signs in itertools.product((-1, 1), repeat=n)]
        tie = sum(abs(x - diffs.sum()) < 1e-9 for x in sums) / len(sums)
        assert gate.p_value == pytest.approx(exact.pvalue - tie / 2, abs=1e-9)


def test_score_regression_interval_matches_scipy_bootstrap() -> None:
    rng = np.random.default_rng(11)
    before = rng.normal(2, 1, size=30)
    after = before + rng.normal(-0.2, 0.5, size=30)
    gate = score_regression("score", "b", before, after, higher_is_better=True)
    assert isinstance(gate.result, Estimate)
    reference = scipy.stats.bootstrap(
        (after - before,), np.mean, confidence_level=0.9, method="percentile",
        n_resamples=10_000, random_state=0,
    )  # fmt: skip
    assert gate.result.low == pytest.approx(reference.confidence_interval.low, abs=0.03)
    assert gate.result.high == pytest.approx(reference.confidence_interval.high, abs=0.03)


def test_score_regression_with_one_pair_is_not_evaluated() -> None:
    gate = score_regression("score", "b", [1.0], [0.0], higher_is_better=True, noise_sd=0.1)
    assert gate.passed is None and not_evaluated(gate)


def test_constant_judge_scores_are_a_regression_when_lower() -> None:
    before = [3.0, 2.0, 3.0, 1.0, 2.0, 3.0, 2.0, 3.0]
    gate = score_regression("score", "b", before, [0.0] * 8, higher_is_better=True, noise_sd=0.5)
    assert gate.passed is False


def _scored(item: str, score: float, *, control: bool) -> JudgementRow:
    row = _row(item, met=True, control=control)
    # A defect targets the score: its expectation bounds it from above.
    expect = [] if control else [Expectation(field="score", op="<=", value=1)]
    return row.model_copy(update={"verdict": {"score": score}, "expect": expect})


def test_defect_scores_count_only_on_the_dimensions_their_expectations_name() -> None:
    baseline = _scored_run(BASE_CONTROLS, BASE_DEFECTS)
    baseline = [r.model_copy(update={"verdict": {**r.verdict, "other": 1.0}}) for r in baseline]
    # A good judge keeps the untouched dimension high on defects: no regression there.
    after = [r.model_copy(update={"verdict": {**r.verdict, "other": 3.0}}) for r in baseline]
    gates = {g.name: g for g in score_regressions(baseline, after, "b", ["score", "other"], {})}
    assert "regression.score[other, defects]" not in gates
    assert gates["regression.score[other, controls]"].passed is True
    assert gates["regression.score[score, defects]"].passed is True


def _scored_run(controls: list[float], defects: list[float]) -> list[JudgementRow]:
    rows = [_scored(f"C-{i:02d}", s, control=True) for i, s in enumerate(controls)]
    return rows + [_scored(f"D-{i:02d}", s, control=False) for i, s in enumerate(defects)]


BASE_CONTROLS = [3.0, 3.0, 2.0, 3.0, 2.0, 3.0, 3.0, 2.0, 3.0, 3.0, 2.0, 3.0]
BASE_DEFECTS = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_constant_high_judge_fails_the_defect_score_regression() -> None:
    baseline = _scored_run(BASE_CONTROLS, BASE_DEFECTS)
    constant = _scored_run([3.0] * 12, [3.0] * 12)  # every answer gets full marks
    gates = {g.name: g for g in score_regressions(baseline, constant, "b", ["score"], {})}
    assert gates["regression.score[score, defects]"].passed is False
    assert gates["regression.score[score, controls]"].passed is True


def test_constant_low_judge_fails_the_control_score_regression() -> None:
    baseline = _scored_run(BASE_CONTROLS, BASE_DEFECTS)
    harsh = _scored_run([0.0] * 12, [0.0] * 12)
    gates = {g.name: g for g in score_regressions(baseline, harsh, "b", ["score"], {"score": 0.4})}
    assert gates["regression.score[score, controls]"].passed is False
    assert "noise floor sd 0.40" in gates["regression.score[score, controls]"].describe()


def test_random_scores_within_a_wide_noise_floor_pass() -> None:
    rng = random.Random(5)
    baseline = _scored_run(BASE_CONTROLS, BASE_DEFECTS)
    shaken = _scored_run(
        [min(3.0, max(0.0, s + rng.choice([-1, 0, 1]))) for s in BASE_CONTROLS], BASE_DEFECTS
    )
    # A noise floor of sd 1.5 per item: a shift of a point or so is within judge noise.
    gates = score_regressions(baseline, shaken, "b", ["score"], {"score": 1.5})
    assert all(g.passed for g in gates), [g.describe() for g in gates]


def test_the_same_scores_never_regress() -> None:
    rows = _scored_run(BASE_CONTROLS, BASE_DEFECTS)
    assert all(g.passed for g in score_regressions(rows, rows, "b", ["score"], {"score": 0.0}))


def test_acceptance_0_3_to_0_3_1_defect_scores_rise_on_the_dimension_they_target() -> None:
    """Defects are compared only on the dimensions their expectations name: 0.3.1 marks the
    planted factual errors down less than 0.3, beyond chance, so the score gate fails it, as
    the detection gate does; core_total and causal_reasoning, which no defect targets, are
    not gated on defects at all (a judge that keeps them high is right to)."""
    from judges.stats.reliability.noise import noise_floor

    dims = ["factual_accuracy", "completeness", "causal_reasoning", "core_total"]
    floor = noise_floor(_main("0.3.1", run="noise"), dims, n_items=61)
    sd = {d: n.pooled_sd for d, n in floor.dimensions.items()}
    gates = {g.name: g for g in score_regressions(_main("0.3"), _main("0.3.1"), "0.3", dims, sd)}
    accuracy = gates["regression.score[factual_accuracy, defects]"]
    # Defects marked down less: +0.82 once each score that meets `<= 1` counts as 1 (a 0 is
    # no better than the 1 the expectation asks for); +1.15 on the raw scores.
    assert accuracy.result.value == pytest.approx(0.82, abs=0.01)
    assert accuracy.result.low > 0 and accuracy.p_value < 0.05
    assert accuracy.passed is False
    assert accuracy.power is not None and accuracy.power.n == 39  # defects bounding it
    assert accuracy.power.drop < 0.82
    assert "regression.score[core_total, defects]" not in gates
    assert "regression.score[causal_reasoning, defects]" not in gates
    assert "regression.score[core_total, controls]" in gates  # controls: every dimension


def test_a_defect_that_meets_its_bound_is_no_worse_than_a_lower_baseline_score() -> None:
    """geval: a baseline that scored every planted defect 1, a run that scores some 2. Each
    meets `<= 2`, so none is worse; a 3 (over the bound) still is."""
    bound = [Expectation(field="fluency", op="<=", value=2)]
    control = [Expectation(field="fluency", op=">=", value=3)]

    def run(scores: list[int], controls: list[int]) -> list[JudgementRow]:
        rows = [_bounded(f"D{i}", False, v, bound) for i, v in enumerate(scores)]
        return rows + [_bounded(f"C{i}", True, v, control) for i, v in enumerate(controls)]

    baseline = run([1] * 10, [5] * 6)
    within = run([2, 1, 2, 2, 1, 2, 2, 2, 1, 2], [4, 3, 5, 4, 4, 3])
    gates = {g.name: g for g in score_regressions(baseline, within, "b", ["fluency"], {})}
    assert gates["regression.score[fluency, defects]"].passed is True
    assert gates["regression.score[fluency, defects]"].result.value == 0.0
    assert gates["regression.score[fluency, controls]"].result.value == 0.0
    over = run([3, 3, 4, 3, 3, 2, 3, 3, 4, 3], [5] * 6)
    worse = {g.name: g for g in score_regressions(baseline, over, "b", ["fluency"], {})}
    assert worse["regression.score[fluency, defects]"].passed is False
    # Strict bounds keep their scores: under `< 2`, a 1 must not read as the failing 2.
    strict = [Expectation(field="fluency", op="<", value=2)]
    assert bounded_score(1.0, _bounded("D", False, 1, strict), "fluency") == 1.0
    assert bounded_score(1.0, _bounded("D", False, 1, bound), "fluency") == 2.0
    # An exact target (a relevance level) counts by its distance, either way off alike.
    exact = [Expectation(field="fluency", op="==", value=2)]
    assert bounded_score(3.0, _bounded("D", False, 3, exact), "fluency") == 1.0
    assert bounded_score(1.0, _bounded("D", False, 1, exact), "fluency") == 1.0
    assert bounded_score(1.0, _bounded("C", True, 1, exact), "fluency") == -1.0


def _bounded(item: str, control: bool, value: int, expect: list[Expectation]) -> JudgementRow:
    return JudgementRow(
        judge="j", prompt_version="1", prompt_hash="h", model="local:m", item_id=item,
        category="control" if control else "fluency", control=control, status="ok",
        verdict={"fluency": value}, expect=expect,
        met=all(e.holds({"fluency": value}) for e in expect),
    )  # fmt: skip


# --------------------------------------------------------------------------- agreement (SME)


def _sklearn_kappa(a: np.ndarray, b: np.ndarray) -> float:
    from sklearn.metrics import cohen_kappa_score

    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Every category given: sklearn weighs by category index, equal to the value here.
        return float(cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="quadratic"))


@pytest.mark.parametrize("seed", range(12))
def test_kappa_change_matches_sklearn_on_the_same_resamples(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 30))
    human = rng.integers(0, 4, size=n)
    before = np.clip(human + rng.integers(-1, 2, size=n), 0, 3)
    after = rng.integers(0, 4, size=n)
    change = quadratic_kappa_change(human, before, after, n_resamples=400, seed=seed)
    point = _sklearn_kappa(after, human) - _sklearn_kappa(before, human)
    assert change.value == pytest.approx(point, abs=1e-9)
    # The interval, by brute force over the very same resampled items.
    samples = []
    for idx in resample_indices(n, 400, seed):
        diff = _sklearn_kappa(after[idx], human[idx]) - _sklearn_kappa(before[idx], human[idx])
        if not math.isnan(diff):
            samples.append(diff)
    low, high = np.percentile(samples, [2.5, 97.5])
    assert change.low == pytest.approx(low, abs=1e-9)
    assert change.high == pytest.approx(high, abs=1e-9)


def _labels(human: list[int]) -> list[SmeLabel]:
    return [
        SmeLabel(item_id=f"D-{i:02d}", labeller="sme", method="blind", core_total=h)
        for i, h in enumerate(human)
    ]


def _totals_run(scores: list[int]) -> list[JudgementRow]:
    rows = _run([True] * len(scores))
    return [
        r.model_copy(update={"verdict": {"core_total": s}})
        for r, s in zip(rows, scores, strict=True)
    ]


HUMAN = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] * 3
CLOSE = [
    min(9, max(0, h + d)) for h, d in zip(HUMAN, [0, 1, -1, 0, 0, 1, 0, -1, 0, 0] * 3, strict=True)
]


def test_sme_regression_passes_the_same_judge_and_fails_adversarial_ones() -> None:
    labels, baseline = _labels(HUMAN), _totals_run(CLOSE)
    same = sme_regression(baseline, _totals_run(CLOSE), labels, "core_total", "b")
    assert same.passed is True and same.result.value == 0
    rng = random.Random(5)
    judges = {
        "constant": [5] * len(HUMAN),
        "agrees with everything (top score)": [9] * len(HUMAN),
        "random": [rng.randrange(10) for _ in HUMAN],
        "reversed": [9 - h for h in HUMAN],
    }
    for name, scores in judges.items():
        gate = sme_regression(baseline, _totals_run(scores), labels, "core_total", "b")
        assert gate.passed is not True, (name, gate.describe())
    gate = sme_regression(baseline, _totals_run(judges["random"]), labels, "core_total", "b")
    assert gate.passed is False and "kappa change -" in gate.describe()


def test_sme_regression_without_pairs_or_integers_is_not_evaluated() -> None:
    labels = _labels(HUMAN)
    failed = _run([True] * len(HUMAN), status="transport")
    gate = sme_regression(_totals_run(CLOSE), failed, labels, "core_total", "b")
    assert gate.passed is None and not_evaluated(gate)
    assert gate.excluded == {"not answered in this run": len(HUMAN)}
    halves = [r.model_copy(update={"verdict": {"core_total": 2.5}}) for r in _totals_run(CLOSE)]
    gate = sme_regression(_totals_run(CLOSE), halves, labels, "core_total", "b")
    assert gate.passed is None and "integer" in gate.describe()


def test_reports_gate_sme_agreement_against_the_accepted_baseline(tmp_path: Path) -> None:
    """With 0.3 accepted as the baseline, 0.3.1's report carries the SME kappa regression."""
    import json
    import shutil

    from judges.reports.write import rebuild_reports

    planted, reports = tmp_path / "planted_sets", tmp_path / "reports"
    shutil.copytree(ROOT / "planted_sets", planted)
    shutil.copytree(RESULTS, reports / "product_identity")
    gates = planted / "product_identity" / "gates.toml"
    gates.write_text(gates.read_text().replace('baseline = "0.3.1"', 'baseline = "0.3"'))

    rebuild_reports(reports, planted, judge="product_identity")

    report = json.loads((reports / "product_identity" / "0.3.1" / "report.json").read_text())
    (model,) = report["models"]
    found = {gate["name"]: gate for gate in model["regressions"]}
    sme = found["regression.sme[kappa core_total]"]
    assert sme["baseline"] == "prompt 0.3 main run" and sme["result"]["n"] == 17
    assert sme["passed"] in (True, False)  # evaluated: 17 labelled items judged under both
    assert found["regression.detection"]["passed"] is False  # 22 caught->missed vs 4


# --------------------------------------------------------------------------- Holm


def _holm_adjusted(p: list[float]) -> list[float]:
    """Holm's adjusted p-values, the textbook way: max over j <= k of (m - j + 1) p_(j)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted


@pytest.mark.parametrize("seed", range(20))
def test_holm_matches_the_adjusted_p_values(seed: int) -> None:
    rng = np.random.default_rng(900 + seed)
    m = int(rng.integers(1, 14))
    p = [float(v) for v in rng.uniform(0, 0.08, m) ** rng.uniform(0.5, 2.0)]
    gates = [
        Regression(f"g{i}", "b", None, value >= 0.05, "why", {}, p_value=value)
        for i, value in enumerate(p)
    ]
    adjusted = holm(gates, 0.05)
    assert [g.passed for g in adjusted] == [a >= 0.05 for a in _holm_adjusted(p)]
    assert all("Holm over the version's" in g.why for g in adjusted)


def test_holm_leaves_unevaluated_gates_alone_and_fails_a_real_regression() -> None:
    unevaluated = Regression("none", "b", None, None, "no pairs", {})
    strong = Regression("strong", "b", None, False, "why", {}, p_value=0.0002)
    weak = Regression("weak", "b", None, False, "why", {}, p_value=0.03)
    calm = Regression("calm", "b", None, True, "why", {}, p_value=0.4)
    out = holm([unevaluated, strong, weak, calm], 0.05)
    assert out[0] is unevaluated
    # strong: 0.0002 < 0.05/3 fails; weak: 0.03 >= 0.05/2 passes once corrected.
    assert [g.passed for g in out[1:]] == [False, True, True]


def _tarone_closed_test(p: list[float], min_p: list[float | None], alpha: float) -> set[int]:
    """Closed testing written from the definition: a gate fails where every intersection of
    gates containing it is rejected by Tarone's test (Bonferroni at alpha / K over the gates
    that could reach it, K the smallest such that at most K could)."""
    m = len(p)

    def rejected(subset: tuple[int, ...]) -> bool:
        for k in range(1, len(subset) + 1):
            able = [j for j in subset if min_p[j] is None or min_p[j] < alpha / k]  # type: ignore[operator]
            if len(able) <= k:
                return any(p[j] < alpha / k for j in able)
        return False  # unreachable: K = len(subset) always qualifies

    subsets = [s for r in range(1, m + 1) for s in itertools.combinations(range(m), r)]
    return {i for i in range(m) if all(rejected(s) for s in subsets if i in s)}


@pytest.mark.parametrize("seed", range(30))
def test_holm_with_tarones_rule_rejects_only_what_the_closed_test_rejects(seed: int) -> None:
    """Discrete gates on few changed items: each with its smallest possible mid-p (2^-(k+1)
    on k changed items) or none (a continuous test), and a p at or above it. The step-down
    fails a subset of the closed test's rejections, the bound on the family's error rate;
    with every bound unknown it is Holm's exactly (test_holm_matches_the_adjusted_p_values)."""
    rng = np.random.default_rng(1700 + seed)
    m = int(rng.integers(1, 9))
    changed = rng.integers(0, 9, m)
    min_p = [None if rng.random() < 0.25 else smallest_midp(int(k)) for k in changed]
    p = [float(max(bound or 0.0, rng.uniform(0, 0.06) ** rng.uniform(0.5, 2.0))) for bound in min_p]
    gates = [
        Regression(f"g{i}", "b", None, True, "why", {}, p_value=v, min_p=b)
        for i, (v, b) in enumerate(zip(p, min_p, strict=True))
    ]
    failed = {i for i, g in enumerate(holm(gates, 0.05)) if g.passed is False}
    assert failed <= _tarone_closed_test(p, min_p, 0.05), (p, min_p)
    plain = [g.passed for g in holm([replace(g, min_p=None) for g in gates], 0.05)]
    assert failed >= {i for i, ok in enumerate(plain) if ok is False}  # never below Holm's


def test_gates_that_cannot_reach_the_level_do_not_spend_it() -> None:
    """A judge wrong on the same items every time, 5 more planted defects missed: McNemar
    5 vs 0 gives mid-p 0.0156, the least 5 changed items can give. Of the ten gates, seven
    changed on two items or none and cannot give a p below 0.125; Holm over ten would
    want 0.005, Tarone's rule counts the three that could fail and fails it below 0.0167."""

    def gate(name: str, p: float, changed: int | None) -> Regression:
        bound = None if changed is None else smallest_midp(changed)
        return Regression(name, "b", None, True, "why", {}, p_value=p, min_p=bound)

    gates = [
        gate("regression.detection", 0.015625, 5),
        gate("regression.score[factual_accuracy, defects]", 0.015625, 5),
        gate("regression.sme[kappa]", 0.0656, None),
        gate("regression.control_false_positive", 0.125, 2),
        *(gate(f"regression.score[d{i}, controls]", 0.125, 2) for i in range(4)),
        gate("regression.score[completeness, defects]", 1.0, 0),
        gate("regression.retest_agreement", 1.0, 0),
    ]
    family = holm(gates, 0.05)
    assert [g.passed for g in family[:3]] == [False, False, True]
    assert all(g.passed for g in family[3:])
    assert "3 of the 10 left able to give a p that low (Tarone): fails below 0.01667" in (
        family[0].why
    )
    assert [g.passed for g in holm([replace(g, min_p=None) for g in gates])] == [True] * 10


@pytest.mark.parametrize("changed", [0, 1, 2, 5, 12])
def test_the_smallest_midp_is_what_the_tests_give_when_every_change_goes_the_bad_way(
    changed: int,
) -> None:
    worst = mcnemar_one_sided([True] * changed, [False] * changed)
    assert worst.p_value == pytest.approx(smallest_midp(changed))
    diffs = np.arange(1, changed + 1, dtype=float)
    baseline, values = [0.0] * changed + [1.0, 1.0], [*(-diffs), 1.0, 1.0]
    gate = score_regression("s", "b", baseline, values, higher_is_better=True)
    assert gate.p_value == pytest.approx(smallest_midp(changed))
    assert gate.min_p == pytest.approx(smallest_midp(changed))


def test_holm_family_error_rate_with_tarones_rule_stays_within_alpha() -> None:
    """Twelve McNemar gates under no change, each on 0-9 discordant items (most gates of a
    small set): the family fails at most alpha of 4,000 seeded unchanged versions (152,
    3.8%), and more than plain Holm's 75 (1.9%), which spends alpha on gates that cannot
    fail."""
    rng = np.random.default_rng(45)
    failed = failed_by_holm = 0
    for _ in range(4000):
        gates = []
        for i in range(12):
            discordant = int(rng.integers(0, 10))
            worse = int(rng.binomial(discordant, 0.5))
            counts = PairedCounts(worse, discordant - worse, 40, binomial_midp(worse, discordant))
            bound = smallest_midp(discordant)
            gates.append(
                Regression(f"g{i}", "b", counts, True, "w", {}, p_value=counts.p_value, min_p=bound)
            )
        failed += any(g.passed is False for g in holm(gates, 0.05))
        plain = holm([replace(g, min_p=None) for g in gates], 0.05)
        failed_by_holm += any(g.passed is False for g in plain)
    interval = scipy.stats.binomtest(failed, 4000).proportion_ci(0.95)
    assert interval.low <= 0.05, (failed, interval)
    assert failed > failed_by_holm, (failed, failed_by_holm)


# --------------------------------------------------------------------------- both baseline draws


def _draws(rng: np.random.Generator, n: int, good: float = 0.9) -> list[bool]:
    return list(rng.random(n) < good)


def test_against_a_lucky_main_draw_honest_rerecords_fail_at_most_alpha() -> None:
    """The main draw caught every defect (lucky); the retest and each re-record are fresh
    draws of the same 90% judge. Whatever the main draw, the gate fails only where the run is
    worse than the retest too, so at most about alpha of honest re-records fail; against
    the lucky draw alone far more do. 400 seeded re-records, 46 defects."""
    rng = np.random.default_rng(33)
    lucky = _run([True] * 46)
    alone = both = 0
    for _ in range(400):
        retest = [r.model_copy(update={"run": "retest"}) for r in _run(_draws(rng, 46))]
        honest = _run(_draws(rng, 46))
        alone += detection_regression(lucky, honest, "b").passed is False
        gate = version_regressions(lucky, honest, "b", [], {}, retest=retest)[0]
        both += gate.passed is False
    assert alone / 400 > 0.15  # the one-draw reference: the false alarm this fixes
    interval = scipy.stats.binomtest(both, 400).proportion_ci(0.95)
    assert interval.low <= 0.05, (both, interval)


def test_both_draws_state_the_drop_each_test_sees_with_90_percent_power() -> None:
    rng = np.random.default_rng(5)
    base, again, new = (_run(_draws(rng, 46)) for _ in range(3))
    retest = [r.model_copy(update={"run": "retest"}) for r in again]
    alone = version_regressions(base, new, "b", [], {})[0]
    both = version_regressions(base, new, "b", [], {}, retest=retest)[0]
    assert both.power is not None and alone.power is not None
    assert both.power.power == alone.power.power == 0.8
    assert both.power.drop > alone.power.drop  # the price of needing both tests to fail
    assert "both must fail" in both.power.basis


def test_a_retest_that_misses_items_leaves_the_main_draw_to_decide() -> None:
    lucky = _run([True] * 46)
    partial = [r.model_copy(update={"run": "retest"}) for r in _run([True] * 40)]
    honest = _run([not 10 <= i < 15 for i in range(46)])
    alone = version_regressions(lucky, honest, "b", [], {})
    with_partial = version_regressions(lucky, honest, "b", [], {}, retest=partial)
    assert [g.why for g in with_partial] == [g.why for g in alone]


def test_a_lucky_baseline_does_not_fail_an_honest_rerecord_given_its_retest() -> None:
    """The baseline caught all 46 defects (lucky), its retest 41; an honest re-record catches
    41, missing other items: against the main run alone McNemar fails it (5 vs 0), against
    the retest it is no worse (5 vs 5), so it passes; a re-record that misses 15 (worse
    than both draws) still fails."""
    lucky = _run([True] * 46)
    retest = [r.model_copy(update={"run": "retest"}) for r in _run([i >= 5 for i in range(46)])]
    honest = _run([not 10 <= i < 15 for i in range(46)])
    alone = version_regressions(lucky, honest, "b", [], {})
    assert next(g for g in alone if g.name == "regression.detection").passed is False
    both = version_regressions(lucky, honest, "b", [], {}, retest=retest)
    detection = next(g for g in both if g.name == "regression.detection")
    assert detection.passed is True and "worse than both baseline draws" in detection.why
    # 5 pairs changed against the main draw, 10 against the retest: the larger p can go no
    # lower than the least 5 changed pairs give.
    assert detection.min_p == pytest.approx(smallest_midp(5))
    worse = _run([not 10 <= i < 25 for i in range(46)])
    gates = version_regressions(lucky, worse, "b", [], {}, retest=retest)
    assert next(g for g in gates if g.name == "regression.detection").passed is False


def test_a_baseline_right_on_no_paired_item_decides_nothing() -> None:
    """No run can be worse than a baseline that caught nothing (pairwise 1.0 on the embedded
    judge: 0/16): the gate is shown as deciding nothing, never as a pass."""
    missed_all = _run([False] * 16)
    for rows in (_run([False] * 16), _run([True] * 16)):
        gate = detection_regression(missed_all, rows, "prompt 1.0 main run")
        assert gate.passed is None and not gate.decides and not not_evaluated(gate)
        assert "right on none of the 16 paired items" in gate.describe()
        assert gate.describe().endswith("(decides nothing)")
        assert gate.as_dict()["decides"] is False
    # One caught item in the baseline, lost by the run: a gate that can fail again.
    one = detection_regression(_run([True] + [False] * 15), _run([False] * 16), "b")
    assert one.decides and one.passed is True  # 1 caught->missed: p = 0.5
    # Holm leaves it out of the family, as any gate without a p-value.
    family = holm([gate, one])
    assert family[0] == gate and family[1].passed is True
