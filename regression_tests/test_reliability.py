"""Noise floor, test-retest, judge panel and SME calibration, gated per judge model.

Item tests record (with --record) or replay their run's cassette; set tests replay a
whole run and gate its statistics against the thresholds in the set's gates.toml.
"""

from judges.core.checks import assert_accounted
from judges.stats import label_stability, reliability


def test_noise_item(noise_case, judge_runner, judges_session):
    planted = judges_session.planted_sets[noise_case.judge]
    repeats = judges_session.run_plan(planted, "noise").repeats
    assert_accounted(judge_runner.judge(noise_case, run="noise"), repeats)


def test_retest_item(retest_case, judge_runner):
    assert_accounted(judge_runner.judge(retest_case, run="retest"), 1)


def test_panel_item(panel_case, judge_runner):
    assert_accounted(judge_runner.judge(panel_case, run="panel"), 1)


def _thresholds(judge_runner, set_case, section):
    gates = judge_runner.gates(set_case)
    return getattr(gates, section) if gates is not None else {}


def _stability_gates(judge_runner, set_case, result):
    """The label-stability thresholds of this run kind (keys start with the run)."""
    thresholds = _thresholds(judge_runner, set_case, "label_stability")
    mine = {k: v for k, v in thresholds.items() if k.startswith(f"{result.run}.")}
    return label_stability.evaluate_stability([result], mine)


def test_noise_floor(noise_set, judge_runner, judges_session):
    spec = judges_session.catalog[noise_set.judge]
    rows = judge_runner.replay_set(noise_set, run="noise")
    n_items = len(judges_session.planted_sets[noise_set.judge].items)
    result = reliability.noise_floor(
        rows, spec.config.dimensions, flag=spec.config.flag, n_items=n_items
    )
    gates = reliability.evaluate_reliability(
        "noise_floor", result, _thresholds(judge_runner, noise_set, "noise_floor")
    )
    labels = label_stability.noise_stability(rows, spec.config.labels)
    gates += _stability_gates(judge_runner, noise_set, labels)
    judge_runner.check_gates(noise_set, "noise_floor", gates)


def test_test_retest(retest_set, judge_runner, judges_session):
    spec = judges_session.catalog[retest_set.judge]
    main = judge_runner.replay_set(retest_set, run="main")
    retest = judge_runner.replay_set(retest_set, run="retest")
    result = reliability.test_retest(main, retest, spec.config.dimensions, flag=spec.config.flag)
    gates = reliability.evaluate_reliability(
        "test_retest", result, _thresholds(judge_runner, retest_set, "test_retest")
    )
    labels = label_stability.retest_stability(main, retest, spec.config.labels)
    gates += _stability_gates(judge_runner, retest_set, labels)
    judge_runner.check_gates(retest_set, "test_retest", gates)


def test_panel(panel_set, judge_runner, judges_session):
    spec = judges_session.catalog[panel_set.judge]
    plan = judges_session.run_plan(judges_session.planted_sets[panel_set.judge], "panel")
    primary = judge_runner.replay_set(panel_set, run="main")
    cross = judge_runner.replay_set(panel_set, run="panel")
    sampling = spec.config.sampling
    result = reliability.panel_agreement(
        primary,
        cross,
        spec.config.dimensions,
        primary_label=f"{panel_set.model} T={sampling.temperature}",
        cross_label=plan.label,
        flag=spec.config.flag,
    )
    gates = reliability.evaluate_reliability(
        "panel", result, _thresholds(judge_runner, panel_set, "panel")
    )
    judge_runner.check_gates(panel_set, "panel", gates)


def test_sme_calibration(sme_set, judge_runner, judges_session):
    planted = judges_session.planted_sets[sme_set.judge]
    spec = judges_session.catalog[sme_set.judge]
    labels = reliability.load_sme_labels(
        judges_session.settings.planted_sets / "sme" / planted.config.sme_labels
    )
    rows = judge_runner.replay_set(sme_set, run="main")
    result = reliability.sme_calibration(rows, labels, "core_total", flag=spec.config.flag)
    gates = reliability.evaluate_reliability(
        "sme", result, _thresholds(judge_runner, sme_set, "sme")
    )
    gates += judge_runner.sme_regression_gates(sme_set, rows, labels, "core_total")
    judge_runner.check_gates(sme_set, "sme", gates)
