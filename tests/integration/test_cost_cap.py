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
