"""Noise floor, test-retest, judge panel and SME calibration, gated per judge model.

Item tests record (with --record) or replay their run's cassette; set tests replay a
whole run and gate its statistics against the thresholds in the set's gates.toml. All but
the SME calibration (on product_identity's `core_total`) are the generic suite's
(`judges.pytest_plugin.suite`), as in any project.
"""

from judges.pytest_plugin.suite import (  # noqa: F401
    gate_thresholds,
    test_noise_floor,
    test_noise_item,
    test_panel,
    test_panel_item,
    test_retest_item,
    test_test_retest,
)
from judges.stats.reliability import gates as reliability


def test_sme_calibration(sme_set, judge_runner, judges_session):
    planted = judges_session.planted_sets[sme_set.judge]
    spec = judges_session.catalog[sme_set.judge]
    labels = reliability.load_sme_labels(
        judges_session.settings.planted_sets / "sme" / planted.config.sme_labels
    )
    rows = judge_runner.replay_set(sme_set, run="main")
    result = reliability.sme_calibration(rows, labels, "core_total", flag=spec.config.flag)
    gates = reliability.evaluate_reliability(
        "sme", result, gate_thresholds(judge_runner, sme_set, "sme")
    )
    gates += judge_runner.sme_regression_gates(sme_set, rows, labels, "core_total")
    judge_runner.check_gates(sme_set, "sme", gates)
