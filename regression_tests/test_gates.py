"""Per-category detection and control false-positive rates, gated with Wilson intervals."""

from judges.stats.gates import evaluate


def test_detection_gates(gate_set, judge_runner):
    rows = judge_runner.replay_set(gate_set)
    judge_runner.check_gates(gate_set, "detection", evaluate(rows, judge_runner.gates(gate_set)))
