"""Fitness: is each judge, prompt version and model better than chance at what its set measures?

The threshold of every test is chance itself (judges.stats.fitness.judge), so no floor in
gates.toml can move it. A judge known to be unfit is accepted by `accept_not_fit = "<why>"`
in its own gates.toml table: the test is then a strict xfail, and XPASSes once it is fit.
The test is the generic suite's (`judges.pytest_plugin.suite`), as in any project.
"""

from judges.pytest_plugin.suite import test_judge_is_fit  # noqa: F401
