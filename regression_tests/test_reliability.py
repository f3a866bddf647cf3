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


def test_sme_calibration(sme_set, judge_runner):
    gates = judge_runner.floors(sme_set, "sme")
    gates += judge_runner.sme_regression_gates(sme_set)
    judge_runner.check_gates(sme_set, "sme", gates)
