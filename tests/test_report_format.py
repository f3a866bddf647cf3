"""Every figure formatted once (judges.reports.format): one p-value style, rates as k/n and
%, intervals, n, and NaN read as "undefined" with why, never as nan."""

from __future__ import annotations

import math

import pytest

from judges.reports.format import (
    estimate,
    interval,
    n_is,
    number,
    p_is,
    p_value,
    percent,
    rate,
    rate_percent,
    rate_percent_short,
    rate_with_interval,
    sided_p,
    undefined,
)
from judges.stats.estimates.intervals import wilson
from judges.verdicts.vocabulary import AT_CHANCE, NOT_FIT, Reading, Verdict

NAN = math.nan


@pytest.mark.parametrize(
    ("p", "shown"),
    [
        (1.0, "1.0000"),
        (0.5, "0.5000"),
        (0.0025, "0.0025"),
        (0.0001, "0.0001"),
        (0.00009, "< 0.0001"),
    ],
)
def test_one_p_value_style(p: float, shown: str) -> None:
    assert p_value(p) == shown
    assert p_is(p) == (f"p {shown}" if shown.startswith("<") else f"p = {shown}")


def test_an_undefined_p_value_says_why_and_never_nan() -> None:
    assert p_value(NAN) == "undefined"
    assert p_is(NAN, why="no discordant pair") == "p undefined (no discordant pair)"
    assert p_is(0.03, "mid-p") == "mid-p = 0.0300"


def test_sided_p_values_name_their_side() -> None:
    assert sided_p(0.03) == "p(better) = 0.0300"
    assert sided_p(1.0, 0.00001) == "p(better) = 1.0000, p(worse) < 0.0001"


def test_rates_intervals_and_n() -> None:
    r = wilson(9, 20)
    assert rate(9, 20) == "9/20 = 0.45" and rate(0, 0) == "no items (n=0)"
    assert rate_with_interval(r) == f"9/20 = 0.45 [{r.low:.2f}, {r.high:.2f}] n=20"
    assert rate_percent(r) == f"9/20 = 45% [{percent(r.low)}, {percent(r.high)}] n=20"
    assert rate_percent_short(r) == f"9/20 = 45.0% [{r.low * 100:.0f}, {r.high * 100:.0f}]"
    assert rate_percent_short(wilson(0, 0), empty="none judged") == "none judged"
    assert interval(0.1, 0.25) == "[0.10, 0.25]" and interval(NAN, 0.2) == "(no interval)"
    assert n_is(7) == "n=7"
    assert estimate(0.5, 0.4, 0.6, 7) == "0.50 [0.40, 0.60] n=7"


def test_nan_reads_undefined_everywhere() -> None:
    assert estimate(NAN, NAN, NAN, 44, "a constant rater") == "undefined (a constant rater), n=44"
    assert percent(NAN) == "undefined" and undefined() == "undefined"
    assert number(NAN) == "-" and number(NAN, nan="none at this n") == "none at this n"
    assert "nan" not in " ".join([p_value(NAN), estimate(NAN, NAN, NAN, 1), percent(NAN)])


def test_each_state_has_one_word() -> None:
    assert f"{NOT_FIT}" == "NOT FIT" and NOT_FIT == Verdict.NOT_FIT
    assert AT_CHANCE.upper() == "AT CHANCE" and AT_CHANCE is Reading.AT_CHANCE
    words = [*Verdict, *Reading]
    assert len({w.value for w in words}) == len(words)
