"""The record phase: live judgements called concurrently before the tests (the only live
calls: a test replays), cassettes identical to a sequential recording, the cost cap held by
the calls in flight."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from ._support import (
    ITEMS,
    JUDGE,
    KEEP_LEDGER,
    FakeJudge,
    JudgesProject,
    cassette_name,
    committed_peak,
    kept_ledger,
    sigint_at_default,
    versions,
)

LATENCY_S = 0.1  # long enough for concurrent calls to overlap
PRICES = """
[models."local:smollm2-135m"]
input_per_mtok = 0.0
output_per_mtok = 1000000.0
"""


def _recorded(project: JudgesProject) -> dict[str, bytes]:
    root = project.root / "cassettes"
    return {str(p.relative_to(root)): p.read_bytes() for p in project.cassettes()}


def _record(project: JudgesProject, *args: str, workers: str = "0") -> pytest.RunResult:
    shutil.rmtree(project.root / "cassettes", ignore_errors=True)
    return project.run("-k", "test_planted_item", *args, workers=workers, record="all")


def test_cassettes_are_identical_at_concurrency_1_and_16_and_no_test_calls_live(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    fake_judge.delay_s = LATENCY_S
    judgements = len(versions()) * len(ITEMS)

    # Without the record phase no judgement is called at all: a test only replays, and one
    # whose cassette the phase did not record fails naming the command that records it.
    alone = _record(project, "-p", "no:judges.pytest_plugin.record")
    alone.assert_outcomes(failed=judgements)
    alone.stdout.fnmatch_lines(["*was not recorded by the record phase, and a test only replays*"])
    assert fake_judge.calls == [] and _recorded(project) == {}

    baseline: dict[str, bytes] = {}
    for concurrency in ("1", "16"):
        fake_judge.reset()
        if concurrency == "1":
            fake_judge.delay_s = LATENCY_S
        else:  # every call is answered only once all are in flight: 9 at once, exactly
            fake_judge.hold_until_in_flight(judgements)
        result = _record(project, "--judge-concurrency", concurrency)
        result.assert_outcomes(passed=judgements)
        # One request per judgement: the tests took the phase's rows, they did not call again.
        assert len(fake_judge.calls) == judgements
        assert fake_judge.max_in_flight == (1 if concurrency == "1" else judgements)
        baseline = baseline or _recorded(project)  # one at a time: the sequential recording
        assert len(baseline) == judgements and _recorded(project) == baseline
        result.stderr.fnmatch_lines([f"judges record: {judgements}/{judgements} judgements*"])

    replayed = project.run("-k", "test_planted_item")
    replayed.assert_outcomes(passed=judgements)


@pytest.mark.parametrize("cap", [340.0, 1000.0])
def test_cost_cap_is_never_exceeded_at_concurrency_16_with_two_workers(
    project: JudgesProject, fake_judge: FakeJudge, cap: float
) -> None:
    project.pytester.makefile(".toml", prices=PRICES)
    project.pytester.makeconftest(KEEP_LEDGER)
    fake_judge.delay_s = LATENCY_S
    result = _record(
        project,
        *("--judge-prices", "prices.toml", "--cost-cap", str(cap), "--judge-concurrency", "16"),
        workers="2",
    )

    peak, spent = committed_peak(kept_ledger(project.root))
    calls = len(fake_judge.calls)
    assert spent == 20.0 * calls
    assert peak <= cap
    assert 1 <= calls < len(versions()) * len(ITEMS)  # the cap stopped some
    assert fake_judge.max_in_flight <= cap // 320
    skipped = re.findall(r"cost_cap: cost cap reached", result.stdout.str())
    assert skipped
    # One worker ran the record phase for both; the capped judgements count as errors.
    total = len(versions()) * len(ITEMS)
    result.stderr.fnmatch_lines([f"judges record: {total}/{total} judgements, *"])
    errors = re.search(rf"{total}/{total} judgements.* (\d+) error", result.stderr.str())
    assert errors is not None and int(errors.group(1)) == total - calls


def _finished(project: JudgesProject) -> set[tuple[str, str, str]]:
    """(version, item, run) of each cassette on disk: the judgements that finished."""
    found = set()
    for path in project.cassettes():
        version = path.relative_to(project.root / "cassettes").parts[1]
        item_id = next(i["id"] for i in ITEMS if path.name == cassette_name(i))
        found.add((version, item_id, "main"))
    return found


@pytest.mark.parametrize(
    ("signum", "workers"),
    [(signal.SIGINT, "0"), (signal.SIGTERM, "0"), (signal.SIGINT, "2")],
    ids=["sigint-n0", "sigterm-n0", "sigint-n2"],
)
def test_an_interrupt_keeps_every_finished_cassette_and_reports_its_row(
    project: JudgesProject, fake_judge: FakeJudge, signum: signal.Signals, workers: str
) -> None:
    fake_judge.hold_from = 3  # two calls answered, the next two held in flight
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", workers]
    argv += ["--record", "--judge-base-url", fake_judge.url, "--judge-concurrency", "2"]
    process = subprocess.Popen(
        [*argv, "-k", "test_planted_item"],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=sigint_at_default,
    )
    deadline = time.monotonic() + 120
    while fake_judge.answered < 4 and time.monotonic() < deadline:
        time.sleep(0.02)  # the first two calls answered, the next two held in flight
    # To the whole group, as Ctrl-C in a terminal: under xdist the worker that records gets
    # it too, and the controller waits for its grace period before writing the reports.
    os.killpg(process.pid, signum)
    time.sleep(0.2)  # the signal lands while the two calls are still in flight
    fake_judge.release.set()
    output, _ = process.communicate(timeout=120)

    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    sent = len(fake_judge.calls)
    total = len(versions()) * len(ITEMS)
    assert sent == 4 < total  # stopped sending: nothing after the two held calls
    time.sleep(0.5)
    assert len(fake_judge.calls) == sent  # and nothing was sent after it ended
    # Every call that was sent finished within the grace period and kept its cassette.
    cassettes = project.cassettes()
    assert len(cassettes) == sent
    assert not list((project.root / "cassettes").rglob("*.tmp*"))
    assert f"judges record: {sent}/{total} judgements" in output
    # One row per finished judgement, and none for the others; the reports are written.
    rows = project.results()
    assert set(rows) == _finished(project)
    assert all(row["status"] == "ok" for row in rows.values())
    for version in {version for version, _, _ in rows}:
        written = {p.name for p in (project.root / "reports" / JUDGE / version).iterdir()}
        assert {"results.jsonl", "report.md", "report.json"} <= written
    assert f"{sent} judgements: {sent} ok" in output  # the judges summary, on the terminal
    replayed = project.run("-k", "test_planted_item")
    replayed.assert_outcomes(passed=sent, failed=total - sent)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_every_row_the_phase_recorded_reaches_results_when_the_tests_stop_early(
    project: JudgesProject, fake_judge: FakeJudge, workers: str
) -> None:
    """`-x` stops the tests at the first failure; the judgements the phase already made (and
    paid for) are in its row journal, so their rows are written all the same."""
    fake_judge.scores = {item["id"]: 0 for item in ITEMS}  # every control is a false positive
    result = _record(project, "-x", workers=workers)

    total = len(versions()) * len(ITEMS)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) < total  # stopped early
    assert len(fake_judge.calls) == total
    rows = project.results()
    assert set(rows) == _finished(project) and len(rows) == total
    assert not list((project.root / ".judges-tmp").glob("rows-*"))  # the journals are gone


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_429_pauses_every_call_in_flight_for_its_retry_after(
    project: JudgesProject, fake_judge: FakeJudge, workers: str
) -> None:
    # The 429 comes at once, the other calls of the first burst end 0.5 s later: without a
    # shared pause their threads would send their next calls then, 1 s before Retry-After.
    fake_judge.delay_s = 0.5
    fake_judge.limit_next = 1
    fake_judge.retry_after = "1.5"
    fake_judge.limit_when_in_flight = 8  # the whole first burst
    result = _record(project, "--judge-concurrency", "8", workers=workers)

    judgements = len(versions()) * len(ITEMS)
    result.assert_outcomes(passed=judgements)  # the limited call was retried after the pause
    (limited,) = fake_judge.limited_at
    arrivals = [r.at - limited for r in fake_judge.calls]
    # Sent during the pause (the first burst was in flight before the 429 reached the client).
    held = [t for t in arrivals if 0.25 < t < 1.5 - 0.05]
    assert held == []
    assert any(t >= 1.45 for t in arrivals)
    assert len(fake_judge.calls) == judgements + 1
