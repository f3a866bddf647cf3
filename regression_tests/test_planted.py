"""One test per planted item, prompt version and judge model, replayed from its cassette.

An accepted miss (in the set's expectations.toml) is a strict xfail: a fix shows as XPASS.
"""

from judges.core.checks import assert_expected


def test_planted_item(planted_case, judge_runner):
    (row,) = judge_runner.judge(planted_case)
    assert_expected(row)
