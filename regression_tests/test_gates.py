"""Set-level gates: absolute floors from gates.toml, and regression against the baseline.

Floors: per-category detection, control false positives and error rate, with Wilson
intervals. Regression: the paired McNemar test (mid-p) against the accepted baseline's main run
(the `baseline` of the version's gates.toml table), one-sided. The test is the generic
suite's (`judges.pytest_plugin.suite`), as in any project.
"""

from judges.pytest_plugin.suite import test_detection_gates  # noqa: F401
