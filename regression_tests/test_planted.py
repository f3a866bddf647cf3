"""One test per planted item, prompt version and judge model, replayed from its cassette.

An accepted miss (in the set's expectations.toml) is a strict xfail: a fix shows as XPASS.
The test is the generic suite's (`judges.pytest_plugin.suite`), as in any project.
"""

from judges.pytest_plugin.suite import test_planted_item  # noqa: F401
