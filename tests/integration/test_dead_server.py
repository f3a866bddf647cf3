"""A judge that cannot be reached stops `--record` within seconds, naming the URL, the error
and the fix, and keeps every row already recorded: nothing listening, a server killed
mid-run, a base URL without its `/v1`."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import pytest

from ._support import (
    ITEMS,
    MODEL,
    FakeJudgeServer,
    JudgesProject,
    Received,
    completion,
    versions,
)


def _dead_url() -> str:
    """A loopback URL with nothing listening: a port the system gave, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _stop_line(output: str) -> str:
    (line,) = [text for text in output.splitlines() if "judges record: stopped after" in text]
    return line


@pytest.mark.parametrize("workers", ["0", "2"])
def test_nothing_listening_stops_at_once_naming_the_url(
    project: JudgesProject, workers: str
) -> None:
    url = _dead_url()
    started = time.monotonic()

    result = project.run("--judge-model", MODEL, record="all", base_url=url, workers=workers)

    took = time.monotonic() - started
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    line = _stop_line(output)
    assert url in line and MODEL in line and "Connection refused" in line, line
    assert "Start the judge server at " + url in output
    assert f"pytest --record=missing --judge-model {MODEL} --judge-base-url {url}" in output
    # Two judgements in a row (each tried three times), and the one already in flight: not
    # one per planted item and version.
    judgements = len(ITEMS) * len(versions())
    done = int(line.split("stopped after ")[1].split(" of ")[0])
    assert 2 <= done <= 3 < judgements, line
    assert took < 60, took  # the whole inner run, interpreter start included
    assert "passed" not in output.splitlines()[-1]  # no test passed against a dead server


def test_a_server_killed_mid_run_stops_the_phase_keeping_what_it_recorded(
    project: JudgesProject,
) -> None:
    server = FakeJudgeServer()
    judge = server.judge
    answered = judge.reply

    def dies_after_two(received: Received) -> tuple[int, dict[str, Any]]:
        if len(judge.calls) > 2:  # the third call: the server goes away, unanswered
            threading.Thread(target=server.stop, daemon=True).start()
            return 500, {"error": {"message": "going away", "type": "server_error"}}
        return 200, completion(judge, received.body, json.dumps(answered(received.item_id)))

    judge.respond = dies_after_two
    try:
        result = project.run("--judge-model", MODEL, record="all", base_url=judge.url)
    finally:
        server.stop()

    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    line = _stop_line(output)
    assert judge.url in line and "Connection refused" in line, line
    rows = project.results()
    ok = [row for row in rows.values() if row["status"] == "ok"]
    assert len(ok) == 2  # both judgements answered before the server died are kept
    down = [row for row in rows.values() if row.get("error_kind") == "unreachable"]
    assert len(down) >= 2 and all("Connection refused" in row["error"] for row in down)


def test_a_base_url_without_v1_is_named_as_such(project: JudgesProject) -> None:
    url = project.judge.url.removesuffix("/v1")

    result = project.run("--judge-model", MODEL, record="all", base_url=url)

    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    line = _stop_line(output)
    assert "HTTP 404" in line and f"{url}/chat/completions" in line, line
    assert f"pass --judge-base-url {url}/v1" in output
    assert "prompt" not in line and "git checkout" not in output
    assert len(project.judge.calls) == 0  # the fake judge serves only /v1/chat/completions
    assert "stopped after 1 of" in line or "stopped after 2 of" in line


def test_a_replay_with_another_base_url_names_the_url_not_the_prompt(
    project: JudgesProject,
) -> None:
    assert project.run("--judge-model", MODEL, record="all").ret == 0
    url = project.judge.url.removesuffix("/v1")

    result = project.run("--judge-model", MODEL, "--judge-base-url", url, "-k", "PE-01")

    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    assert "the base URL differs, not the prompt" in output
    assert f"this one went to /chat/completions ({url}/chat/completions)" in output
    assert "was recorded for requests to /v1/chat/completions" in output
    assert "the prompt file, the item's inputs or the sampling settings changed" not in output
