"""Per-category detection and control false-positive rates, gated with Wilson intervals."""

import pytest


def test_detection_gates(gate_case, judge_runner, judges_session):
    if judges_session.settings.live:
        pytest.skip("gates are evaluated on replay: run pytest again without --record")
    rows = judge_runner.replay_set(gate_case)
    judge_runner.check_gates(gate_case, rows)
