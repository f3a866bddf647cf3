"""The harness's generic judge suite, for every judge under `judges_prompts`.

A project pulls it in with one line in a test module (`python -m judges init` writes it):

    from judges.pytest_plugin.suite import *  # noqa: F403

pytest collects the test functions imported into a module like the ones defined there, so
no test code is copied. Each test is parametrized by the plugin over what the planted sets
ask for: one test per planted item, the detection and regression gates, fitness (is the
judge better than chance?), the noise floor and test-retest (when `set.toml` names them),
the panel (with `[panel]`), the bias probes (with `probes.toml`), the verdict-table
snapshot, and a callable judge's reply fixtures and their properties (`replies.jsonl`).
A test whose run a set does not name is not collected. The built-in judges' own suite
(`regression_tests/`) adds the tests specific to them (properties, SME calibration on
`core_total`, ranking).
"""

from __future__ import annotations

from typing import Any

from judges.core.checks import assert_accounted, assert_expected
from judges.pytest_plugin.probes import assert_unbiased
from judges.pytest_plugin.reply_fixtures import check_reply_fixture, check_reply_properties
from judges.reports.model.snapshots import verdict_table
from judges.stats.reliability import probes as probe_stats

__all__ = [
    "test_detection_gates",
    "test_judge_is_fit",
    "test_noise_floor",
    "test_noise_item",
    "test_panel",
    "test_panel_item",
    "test_planted_item",
    "test_probe_gates",
    "test_probe_item",
    "test_probe_noise_item",
    "test_reply_fixture",
    "test_reply_properties",
    "test_retest_item",
    "test_test_retest",
    "test_verdict_table",
]


def test_planted_item(planted_case: Any, judge_runner: Any) -> None:
    (row,) = judge_runner.judge(planted_case)
    assert_expected(row)


def test_detection_gates(gate_set: Any, judge_runner: Any) -> None:
    # The verdict's (judges.verdicts): the same gates the report and `baseline` read.
    results = [*judge_runner.floors(gate_set, "detection")]
    results += judge_runner.regression_gates(gate_set)
    judge_runner.check_gates(gate_set, "detection", results)


def test_judge_is_fit(fitness_set: Any, judge_runner: Any) -> None:
    # Chance is the threshold (judges.stats.fitness.judge): no floor can move it.
    judge_runner.check_fitness(fitness_set)


def test_verdict_table(gate_set: Any, judge_runner: Any, snapshot: Any) -> None:
    rows = judge_runner.replay_set(gate_set)
    assert verdict_table(rows) == snapshot


def test_noise_item(noise_case: Any, judge_runner: Any, judges_session: Any) -> None:
    planted = judges_session.catalogue.planted_sets[noise_case.judge]
    repeats = judges_session.catalogue.run_plan(planted, "noise").repeats
    assert_accounted(judge_runner.judge(noise_case, run="noise"), repeats)


def test_retest_item(retest_case: Any, judge_runner: Any, judges_session: Any) -> None:
    planted = judges_session.catalogue.planted_sets[retest_case.judge]
    draws = judges_session.catalogue.run_plan(planted, "retest").repeats_for(retest_case.version)
    assert_accounted(judge_runner.judge(retest_case, run="retest"), draws)


def test_panel_item(panel_case: Any, judge_runner: Any) -> None:
    assert_accounted(judge_runner.judge(panel_case, run="panel"), 1)


def gate_thresholds(judge_runner: Any, set_case: Any, section: str) -> dict[str, float]:
    gates = judge_runner.gates(set_case)
    return getattr(gates, section) if gates is not None else {}


def test_noise_floor(noise_set: Any, judge_runner: Any) -> None:
    gates = judge_runner.floors(noise_set, "noise_floor", run="noise")
    judge_runner.check_gates(noise_set, "noise_floor", gates)


def test_test_retest(retest_set: Any, judge_runner: Any) -> None:
    gates = judge_runner.floors(retest_set, "test_retest", run="retest")
    judge_runner.check_gates(retest_set, "test_retest", gates)


def test_panel(panel_set: Any, judge_runner: Any) -> None:
    judge_runner.check_gates(panel_set, "panel", judge_runner.floors(panel_set, "panel"))


def test_probe_item(probe_case: Any, judge_runner: Any, judges_session: Any) -> None:
    row = judge_runner.judge_probe(probe_case)
    clean = judge_runner.replay_clean(probe_case)
    spec = judges_session.catalogue.catalog[probe_case.case.judge]
    fields = [*spec.config.dimensions, *([spec.config.flag] if spec.config.flag else [])]
    score = judges_session.catalogue.probe_sets[probe_case.case.judge].score
    outcome = probe_stats.outcome(probe_case.probe, row, clean, fields, score)
    assert_unbiased(outcome, row, clean)


def test_probe_noise_item(probe_noise_case: Any, judge_runner: Any) -> None:
    assert_accounted([judge_runner.judge_probe_noise(probe_noise_case)], 1)


def test_probe_gates(probe_set: Any, judge_runner: Any) -> None:
    judge_runner.check_probe_gates(probe_set, judge_runner.probe_effects(probe_set))


def test_reply_fixture(reply_case: Any, judges_session: Any) -> None:
    # A callable judge's own code on a model's raw replies (replies.jsonl): no model call.
    check_reply_fixture(judges_session, reply_case)


def test_reply_properties(reply_case: Any, judges_session: Any) -> None:
    # The same verdict however the replies spell the names the item gave the judge.
    check_reply_properties(judges_session, reply_case)
