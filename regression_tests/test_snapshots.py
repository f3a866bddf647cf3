"""Re-baselines are reviewed as snapshot diffs of each (judge, prompt version) verdict table.

After a deliberate re-record: `pytest --snapshot-update` accepts the new verdicts. The test
is the generic suite's (`judges.pytest_plugin.suite`), as in any project.
"""

from judges.pytest_plugin.suite import test_verdict_table  # noqa: F401
