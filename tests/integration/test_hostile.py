"""Hostile judge servers and hostile files: every judgement ends as a row, later runs work.

Each test makes the fake judge misbehave (replies nested 1,000 deep, lone surrogates, NaN
usage, 1 MB replies, hung requests, echoed keys), records through it, and checks the row
that was written, that nothing secret reached disk, and that the next replay and
`python -m judges report` still succeed and count the failed rows.

One fake server serves the whole module and inner runs are in-process (`inprocess=True`)
where workers are not the point: they are seconds faster each.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

# Imported before any in-process run: pytester restores sys.modules after each, and numpy
# (under the statistics) cannot be imported twice in one process, nor can the HTTP stack
# (a second httpx2 next to vcrpy's stubs of the first fails its own isinstance checks).
import openai  # noqa: F401
import pytest
import vcr.stubs.httpx_stubs  # noqa: F401

import judges.builtin.product_identity as product_identity
import judges.calls._vcr
import judges.reports.write
import judges.stats.estimates.floors  # noqa: F401
from judges.calls.network import block_network
from judges.core.results import Expectation
from judges.pytest_plugin.harness import restore_network_key
from judges.pytest_plugin.live import LOCK_FILE
from judges.storage.files import FolderLock

from ._support import (
    FAKE_KEY,
    JUDGE,
    FakeJudge,
    FakeJudgeServer,
    JudgesProject,
    Received,
    load_cassette,
)

VERSION = "0.3.1"
ONE = ("-k", f"test_planted_item and {VERSION}-PE-02")  # one judgement: a cousin, missed
GOOD = {
    "reference_product": "barrier reverse convertible",
    "answer_product": "other product",
    "product_identity_match": False,
    "factual_accuracy": 1,
    "completeness": 2,
    "causal_reasoning": 2,
    "rationale": "a cousin product",
}
PLAIN_KEY = "plainlocalkey0123456789"  # a key with no recognisable shape


@pytest.fixture(scope="module")
def server(pytestconfig: pytest.Config) -> Iterator[FakeJudgeServer]:
    """The fake judge, reachable: this suite's own replay session blocks the network, and
    in-process inner runs share its sockets."""
    restore = pytestconfig.stash.get(restore_network_key, None)
    if restore is not None:
        restore()
    fake = FakeJudgeServer()
    try:
        yield fake
    finally:
        fake.stop()
        if restore is not None:
            pytestconfig.stash[restore_network_key] = block_network()


@pytest.fixture
def fake_judge(server: FakeJudgeServer) -> FakeJudge:
    """The module's one fake judge, honest again for each test."""
    server.judge.reset()
    return server.judge


def results_file(project: JudgesProject) -> Path:
    return project.root / "reports" / JUDGE / VERSION / "results.jsonl"


def only_row(project: JudgesProject) -> dict:
    lines = results_file(project).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


def record_one(project: JudgesProject, *args: str) -> pytest.RunResult:
    return project.run(*ONE, *args, record="all", inprocess=True)


def assert_later_runs_work(project: JudgesProject, status: str) -> None:
    """The replay and `python -m judges report` after a hostile case both succeed, and the
    report counts the failed row."""
    replayed = project.run(*ONE, inprocess=True)
    assert replayed.ret == pytest.ExitCode.TESTS_FAILED, replayed.stdout.str()
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines([f"1 judgements: 1 {status}"])
    rebuilt = project.report()
    assert rebuilt.code == 0, rebuilt.err
    assert status_counts(project) == {status: 1}


def status_counts(project: JudgesProject) -> dict[str, int]:
    """The main run's row count per status, as report.json gives it."""
    report = json.loads((results_file(project).parent / "report.json").read_text())
    (model,) = report["models"]
    return model["status_by_run"]["main"]


def test_a_reply_nested_1000_deep_is_an_unparseable_row(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    fake_judge.content = lambda received: "[" * 2000

    recorded = record_one(project)

    recorded.assert_outcomes(failed=1)
    row = only_row(project)
    assert row["status"] == "unparseable"
    assert [a["error_kind"] for a in row["attempts"]] == ["too_deep"] * 3
    assert "2000 levels deep" in row["error"]
    assert_later_runs_work(project, "unparseable")


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_lone_surrogate_is_escaped_and_every_later_run_reads_the_row(
    project: JudgesProject, fake_judge: FakeJudge, workers: str
) -> None:
    reply = json.dumps(GOOD).replace("a cousin product", "cousin \\ud800 product")
    assert "\\ud800" in reply and json.loads(reply)  # valid JSON, unwritable as UTF-8
    fake_judge.content = lambda received: reply

    recorded = project.run(*ONE, record="all", inprocess=True, workers=workers)

    recorded.assert_outcomes(passed=1)
    assert "INTERNALERROR" not in recorded.stdout.str()
    row = only_row(project)
    assert row["status"] == "ok"
    assert row["verdict"]["rationale"] == "cousin \\ud800 product"  # shown, escaped
    rebuilt = project.report()
    assert rebuilt.code == 0, rebuilt.err
    assert status_counts(project) == {"ok": 1}
    replayed = project.run(*ONE, inprocess=True)
    replayed.assert_outcomes(passed=1)


def test_nan_token_usage_is_a_transport_row(project: JudgesProject, fake_judge: FakeJudge) -> None:
    fake_judge.prompt_tokens = float("nan")  # type: ignore[assignment]

    recorded = record_one(project)

    recorded.assert_outcomes(failed=1)
    assert "INTERNALERROR" not in recorded.stdout.str()
    row = only_row(project)
    assert row["status"] == "transport"
    assert "usage prompt_tokens = nan, not a token count" in row["error"]
    assert_later_runs_work(project, "transport")


def test_a_verdict_module_that_raises_gives_an_error_row(
    project: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> product_identity.JudgeScore:
        raise ZeroDivisionError("the verdict module divided by zero")

    # In-process: the inner run judges with this process's (patched) judge module.
    monkeypatch.setattr(product_identity, "build_verdict", broken)

    recorded = record_one(project)

    recorded.assert_outcomes(failed=1)
    recorded.stdout.fnmatch_lines(["*the judgement failed (error)*building the verdict raised*"])
    row = only_row(project)
    assert row["status"] == "error" and row["met"] is False
    assert row["error"] == (
        "building the verdict raised ZeroDivisionError: the verdict module divided by zero"
    )
    assert json.loads(row["verdict"]["raw"]) == fake_judge.reply("PE-02")  # the reply is kept
    assert_later_runs_work(project, "error")


def test_an_expectation_that_raises_gives_an_error_row(
    project: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Planted sets are checked against the verdict model when loaded, so no expectation in
    # a valid set compares a text with a number; the runner still guards the check itself.
    def broken(self: Expectation, verdict: dict) -> bool:
        return verdict[self.field] <= "a text"

    monkeypatch.setattr(Expectation, "holds", broken)

    recorded = record_one(project)

    recorded.assert_outcomes(failed=1)
    row = only_row(project)
    assert row["status"] == "error"
    assert row["error"].startswith("checking the expectations raised TypeError: '<=' not")
    assert row["verdict"]["factual_accuracy"] == 1  # the verdict is kept
    assert_later_runs_work(project, "error")


def test_a_1mb_reply_is_stored_once(project: JudgesProject, fake_judge: FakeJudge) -> None:
    size = 1_000_000
    reply = json.dumps(GOOD)[:-1] + " " * size + "}"  # valid JSON, 1 MB of padding
    fake_judge.content = lambda received: reply

    record_one(project).assert_outcomes(passed=1)

    stored = results_file(project).stat().st_size
    assert size < stored < 1.2 * size, f"{stored} bytes for a {size}-byte reply"
    row = only_row(project)
    assert row["verdict"]["raw"] == reply
    assert [a["text"] for a in row["attempts"]] == [None]  # the verdict's raw, not a copy


def test_stale_temporaries_are_removed_at_the_next_run(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    record_one(project).assert_outcomes(passed=1)
    folder = results_file(project).parent
    dead = folder / ".results.jsonl.999999999.k1llxd9z.tmp"  # no such pid
    old = folder / ".results.jsonl.a8f3kq2z.tmp"  # an older name, without a pid
    live = folder / f".results.jsonl.{os.getpid()}.q9w8e7r6.tmp"  # a writer still running
    for path in (dead, old, live):
        path.write_text('{"half a row', encoding="utf-8")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))

    project.run(*ONE, inprocess=True).assert_outcomes(passed=1)

    assert not dead.exists() and not old.exists()
    assert live.exists()
    assert project.report().code == 0


def test_temporaries_are_ignored_by_git() -> None:
    root = Path(__file__).resolve().parents[2]
    for path in (
        "reports/geval/1.0/.results.jsonl.123.abcd1234.tmp",
        "cassettes/.judges-record.lock",
    ):
        found = subprocess.run(
            ["git", "check-ignore", "--no-index", "-q", path], cwd=root, check=False
        )
        assert found.returncode == 0, f"{path} is not ignored by .gitignore"


def test_a_second_live_session_fails_fast_naming_the_holder(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    lock = FolderLock(project.root / "cassettes", LOCK_FILE)
    lock.acquire()  # this process stands for a live session still recording
    try:
        second = record_one(project)
        replay = project.run(*ONE, inprocess=True)  # replay takes no lock
    finally:
        lock.release()

    assert second.ret == pytest.ExitCode.USAGE_ERROR
    second.stderr.fnmatch_lines(
        [f"ERROR: another session (pid {os.getpid()}) is recording into or pinning *cassettes*"
         "--cassette-dir DIR"]
    )  # fmt: skip
    assert fake_judge.calls == [] and project.cassettes() == []
    assert replay.ret == pytest.ExitCode.TESTS_FAILED  # no cassette yet: a loud miss
    record_one(project).assert_outcomes(passed=1)  # once released, recording works


def test_a_hung_server_costs_one_timeout(project: JudgesProject, fake_judge: FakeJudge) -> None:
    fake_judge.delay_s = 5.0
    started = time.monotonic()

    recorded = record_one(project, "--judge-timeout", "0.5")

    recorded.assert_outcomes(failed=1)
    row = only_row(project)
    assert row["status"] == "transport"
    assert row["error"].startswith("JudgeTimeout: no reply within 0.5 s (--judge-timeout 0.5)")
    assert len(fake_judge.calls) == 1  # a timeout is not retried at full length
    assert time.monotonic() - started < 5.0
    assert project.report().code == 0
    assert status_counts(project) == {"transport": 1}
    refused = record_one(project, "--judge-timeout", "0")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--judge-timeout: '0' is not a number of seconds above 0"])


def test_server_errors_are_retried_within_the_budget(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    fake_judge.fail_next = 5  # more 500s than the retries allow

    recorded = record_one(project)

    recorded.assert_outcomes(failed=1)
    row = only_row(project)
    assert row["status"] == "transport" and "InternalServerError" in row["error"]
    assert len(fake_judge.calls) == 3  # the call and its two retries
    # Failed calls leave no cassette interaction: the replay misses loudly, the report stays.
    assert project.report().code == 0
    assert status_counts(project) == {"transport": 1}


def test_a_key_in_the_base_url_never_reaches_disk(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    secret = "qsKEY0123456789abcdef"
    url = f"{fake_judge.url}?key={secret}&api-version=2024-10-21"

    recorded = project.run(*ONE, record="all", inprocess=True, base_url=url)

    recorded.assert_outcomes(passed=1)
    assert project.files_containing(secret) == []
    (cassette,) = project.cassettes()
    uri = load_cassette(cassette)["interactions"][0]["request"]["uri"]
    assert uri.endswith("/v1/chat/completions?api-version=2024-10-21"), uri
    project.run(*ONE, inprocess=True).assert_outcomes(passed=1)  # the stripped URI replays


def authorization(received: Received) -> str:
    return {k.lower(): v for k, v in received.headers.items()}["authorization"]


def echo_headers(received: Received) -> tuple[int, dict]:
    """A 401 that repeats the request's headers, as some gateways do."""
    headers = {name.lower(): value for name, value in received.headers.items()}
    return 401, {"error": {"message": f"invalid key; you sent {json.dumps(headers)}"}}


@pytest.mark.parametrize("key", [FAKE_KEY, PLAIN_KEY], ids=["sk-shaped", "plain"])
def test_a_401_echoing_the_key_leaves_it_nowhere(
    project: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", key)
    fake_judge.respond = echo_headers

    recorded = record_one(project)

    # A refused key stops the record phase at once, naming the 401 and the variable to set.
    assert recorded.ret == pytest.ExitCode.INTERRUPTED, recorded.stdout.str()
    recorded.stdout.fnmatch_lines(["*judges record: stopped after 1 of 1 judgements*"])
    recorded.stdout.fnmatch_lines(["*The server refused the key: set JUDGES_LOCAL_API_KEY*"])
    assert authorization(fake_judge.calls[0]) == f"Bearer {key}"  # it was sent
    row = only_row(project)
    assert row["status"] == "transport"
    assert "AuthenticationError" in row["error"] and "<redacted>" in row["error"]
    assert key not in recorded.stdout.str()
    assert project.files_containing(key) == []
    assert project.report().code == 0
    assert status_counts(project) == {"transport": 1}
    assert project.files_containing(key) == []


@pytest.mark.parametrize("key", [FAKE_KEY, PLAIN_KEY], ids=["sk-shaped", "plain"])
def test_a_reply_echoing_the_key_leaves_it_nowhere(
    project: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", key)
    echoed = dict(GOOD)

    def content(received: Received) -> str:
        echoed["rationale"] = f"you sent {authorization(received)}"
        return json.dumps(echoed)

    fake_judge.content = content

    record_one(project).assert_outcomes(passed=1)

    assert project.files_containing(key) == []
    assert only_row(project)["verdict"]["rationale"].startswith("you sent ")
    assert "<redacted>" in only_row(project)["verdict"]["rationale"]
    project.run(*ONE, inprocess=True).assert_outcomes(passed=1)
    assert project.report().code == 0
    assert project.files_containing(key) == []


def test_a_damaged_results_line_is_reported_counted_and_kept(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    record_one(project).assert_outcomes(passed=1)
    path = results_file(project)
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    # As older versions wrote it: valid JSON, a lone surrogate that UTF-8 cannot hold.
    old = dict(row, item_id="PE-03", verdict=dict(row["verdict"], rationale="x\ud800y"))
    with path.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(old) + "\n")
        stream.write('{"judge": "product_identity", "prompt_ver\n')  # cut off by a crash

    rebuilt = project.report()

    assert rebuilt.code == 0, rebuilt.err
    assert f"damaged: {path}:3: not a result row (" in rebuilt.out
    report = json.loads((path.parent / "report.json").read_text())
    assert any(note.startswith("1 damaged line(s) of results.jsonl") for note in report["notes"])
    assert status_counts(project) == {"ok": 2}  # the surrogate row is read, escaped
    replayed = project.run(*ONE, inprocess=True)
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines([f"damaged: {path}:3: not a result row (*"])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[-1] == '{"judge": "product_identity", "prompt_ver'  # kept, not dropped
    assert "x\\\\ud800y" in lines[1]  # rewritten escaped: it reads back everywhere


@pytest.mark.parametrize("field", ["item_id", "category", "model", "run", "fingerprint", "expect"])
def test_a_surrogate_anywhere_in_a_row_never_stops_the_report(
    project: JudgesProject, fake_judge: FakeJudge, field: str
) -> None:
    record_one(project).assert_outcomes(passed=1)
    path = results_file(project)
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    bad = "x\ud800y"
    if field == "fingerprint":
        hostile = dict(row, item_id="PE-03", fingerprint={"server": bad})
    elif field == "expect":
        hostile = dict(
            row, item_id="PE-03", expect=[{"field": "rationale", "op": "==", "value": bad}]
        )
    else:
        hostile = dict(row, **{field: bad})
    with path.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(hostile) + "\n")  # `\ud800` in JSON: valid JSON, not UTF-8

    rebuilt = project.report()

    assert rebuilt.code == 0, rebuilt.err
    if field in ("fingerprint", "expect"):  # free text: read, and escaped wherever shown
        assert "damaged" not in rebuilt.out
        assert status_counts(project) == {"ok": 2}
    else:  # what identifies a row is never rewritten: the row is damaged, named, kept
        assert f"damaged: {path}:2: not a result row (" in rebuilt.out
        assert "lone surrogate" in rebuilt.out
        assert status_counts(project) == {"ok": 1}
        assert len(path.read_text(encoding="utf-8").splitlines()) == 2
    for report in path.parent.iterdir():
        report.read_bytes().decode("utf-8")  # every file written is UTF-8
