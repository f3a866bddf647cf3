"""`--cost-cap` refuses every live call whose worst case could pass the cap."""

from __future__ import annotations

import re

import pytest

from ._support import ITEMS, WORKERS, FakeJudge, JudgesProject, cassette_name, versions

# Every output token costs $1, input is free: a call reserves its worst case, max_tokens
# (320) = $320, and costs what the fake judge answers, 20 tokens = $20. A $340 cap lets
# exactly two calls start one after the other: $0 + 320 and $20 + 320 fit, $40 + 320 not.
PRICES = """
[models."local:smollm2-135m"]
input_per_mtok = 0.0
output_per_mtok = 1000000.0
"""
CAP = "340"
CALLS_UNDER_CAP = 2
COST_PER_CALL = 20


def skipped_for_cost_cap(output: str) -> int:
    counts = re.findall(
        r"^SKIPPED \[(\d+)\] regression_tests/test_planted.py:\d+: cost_cap: cost cap reached: "
        r"\$\d+\.\d{4} spent of \$340\.0000",
        output,
        flags=re.M,
    )
    return sum(int(n) for n in counts)


@pytest.mark.parametrize("workers", WORKERS)
def test_cost_cap_stops_live_calls_and_skips_the_rest(
    project: JudgesProject, fake_judge: FakeJudge, workers: str
) -> None:
    project.pytester.makefile(".toml", prices=PRICES)
    planted = len(versions()) * len(ITEMS)

    result = project.run(
        "--judge-prices", "prices.toml", "--cost-cap", CAP, workers=workers, record="all"
    )

    # The record phase runs in one process for all workers, one call at a time on a local
    # server: exactly the calls whose worst case fits, with or without xdist.
    calls = len(fake_judge.calls)
    assert calls == CALLS_UNDER_CAP
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=calls, skipped=planted - calls + len(versions()))
    assert skipped_for_cost_cap(result.stdout.str()) == planted - calls
    result.stdout.fnmatch_lines([f"cost cap $340.0000: spent ${COST_PER_CALL * calls}.0000"])

    rows = project.results()
    ok = {(v, i) for (v, i, _), row in rows.items() if row["status"] == "ok"}
    capped = {(v, i) for (v, i, _), row in rows.items() if row["status"] == "cost_cap"}
    assert len(ok) == calls
    assert len(capped) == planted - calls
    assert all(rows[(v, i, "main")]["error"].startswith("cost cap reached") for v, i in capped)
    recorded = {
        project.cassette_dir(version) / cassette_name(item)
        for version in versions()
        for item in ITEMS
        if (version, item["id"]) in ok
    }
    assert set(project.cassettes()) == recorded

    # Replaying under workers is proven in test_record_and_replay; here it is the cap's.
    replayed = project.run("-k", "test_planted_item")

    # What was recorded before the cap replays; the capped tests have no cassette.
    replayed.assert_outcomes(passed=calls, failed=planted - calls)
    assert len(fake_judge.calls) == calls


# $0.05 an output token: a call's worst case (max_tokens, 320) is $16, under a $20 cap; the
# provider then reports 10,000 output tokens for it: $500.
OVER_PRICES = """
[models."local:smollm2-135m"]
input_per_mtok = 0.0
output_per_mtok = 50000.0
"""


def test_usage_reported_past_the_cap_fails_the_run_with_the_figures(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    """A provider that over-reports usage: the call reserved its worst case ($16 of $20), is
    billed $500 as reported, and the run says the cap was exceeded, names the call's figures
    and fails, instead of a quiet "$500.0000 of $20.0000" and exit 0."""
    project.pytester.makefile(".toml", prices=OVER_PRICES)
    fake_judge.completion_tokens = 10_000

    result = project.run("--judge-prices", "prices.toml", "--cost-cap", "20", record="all")

    assert len(fake_judge.calls) == 1  # the next call's worst case no longer fits
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "cost cap $20.0000: spent $500.0000",
        "COST CAP EXCEEDED: spent $500.0000 of a $20.0000 cap ($480.0000 over): the run fails.*",
        "over-reported usage: a call to local:smollm2-135m reported 100 input + 10000 output "
        "tokens = $500.0000, past its worst case $16.0000 *",
    ])  # fmt: skip
