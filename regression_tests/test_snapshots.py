"""Re-baselines are reviewed as snapshot diffs of each (judge, prompt version) verdict table.

After a deliberate re-record: `pytest --snapshot-update` accepts the new verdicts.
"""

from judges.reports.snapshots import verdict_table


def test_verdict_table(gate_set, judge_runner, snapshot):
    rows = judge_runner.replay_set(gate_set)
    assert verdict_table(rows) == snapshot
