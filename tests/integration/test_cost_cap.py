"""`--cost-cap` stops live calls once the session's ledger reaches the cap."""

from __future__ import annotations

import re

import pytest

from ._support import ITEMS, WORKERS, FakeJudge, JudgesProject, cassette_name, versions

# Every call costs its prompt tokens in USD: 100 tokens -> $100, so a $150 cap lets
# exactly two calls start in one process (the check runs before each call).
PRICES = """
[models."local:smollm2-135m"]
input_per_mtok = 1000000.0
output_per_mtok = 0.0
"""
CAP = "150"
CALLS_UNDER_CAP = 2


def skipped_for_cost_cap(output: str) -> int:
    counts = re.findall(
        r"^SKIPPED \[(\d+)\] regression_tests/test_planted.py:\d+: cost_cap: cost cap reached: "
        r"\$\d+\.\d{4} spent of \$150\.0000",
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

    calls = len(fake_judge.calls)
    if workers == "0":
        assert calls == CALLS_UNDER_CAP
    else:
        # Each worker checks the shared ledger before its call: at most one overshoot each.
        assert CALLS_UNDER_CAP <= calls <= CALLS_UNDER_CAP + int(workers)
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=calls, skipped=planted - calls + len(versions()))
    assert skipped_for_cost_cap(result.stdout.str()) == planted - calls
    result.stdout.fnmatch_lines([f"cost cap $150.0000: spent ${100 * calls}.0000"])

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

    replayed = project.run("-k", "test_planted_item", workers=workers)

    # What was recorded before the cap replays; the capped tests have no cassette.
    replayed.assert_outcomes(passed=calls, failed=planted - calls)
    assert len(fake_judge.calls) == calls
