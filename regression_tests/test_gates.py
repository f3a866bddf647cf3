"""Set-level gates: absolute floors from gates.toml, and regression against the baseline.

Floors: per-category detection, control false positives and error rate, with Wilson
intervals. Regression: the paired McNemar test (mid-p) against the accepted baseline's main run
(the `baseline` of the version's gates.toml table), one-sided.
"""

from judges.stats.gates import evaluate


def test_detection_gates(gate_set, judge_runner):
    rows = judge_runner.replay_set(gate_set)
    results = [*evaluate(rows, judge_runner.gates(gate_set))]
    results += judge_runner.regression_gates(gate_set, rows)
    judge_runner.check_gates(gate_set, "detection", results)
