"""A judge that cannot be reached: which errors no retry gets past, when the record phase
stops, and what its message says (the URL, the error, the fix, the embedded judge's exit
status and log). The runs against a real socket are in tests/integration/test_dead_server.py."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import httpx2 as httpx
import openai
import pytest

from judges.calls.backends import NO_ROUTE, UNAUTHORISED, UNREACHABLE, unreachable
from judges.calls.local_server import LocalServer, server_log
from judges.core.results import JudgementRow
from judges.pytest_plugin.record_phase import ServerWatch, stop_message
from judges.pytest_plugin.session import JudgesSession, Settings

URL = "http://127.0.0.1:8080/v1"
MODEL = "local:smollm2-135m"


def _row(kind: str | None, error: str = "APIConnectionError: Connection error.") -> JudgementRow:
    return JudgementRow(
        judge="product_identity",
        prompt_version="0.2",
        prompt_hash="h",
        model=MODEL,
        item_id="PE-01",
        category="cousin",
        control=False,
        status="ok" if kind is None else "transport",
        error=None if kind is None else error,
        error_kind=kind,
    )


def _status_error(status: int) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:8080/chat/completions")
    response = httpx.Response(status, request=request, json={"error": {"message": "no"}})
    kind = {401: openai.AuthenticationError, 404: openai.NotFoundError}[status]
    return kind("no", response=response, body=None)


def _refused() -> openai.APIConnectionError:
    request = httpx.Request("POST", URL + "/chat/completions")
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as cause:
            raise httpx.ConnectError("[Errno 111] Connection refused") from cause
    except httpx.ConnectError as error:
        wrapped = openai.APIConnectionError(request=request)
        wrapped.__cause__ = error
        return wrapped


def test_errors_no_retry_gets_past_are_named_by_kind() -> None:
    refused = unreachable(_refused())
    assert refused is not None and refused.kind == UNREACHABLE
    assert "Connection refused" in refused.detail
    key = unreachable(_status_error(401))
    assert key is not None and key.kind == UNAUTHORISED
    route = unreachable(_status_error(404))
    assert route is not None and route.kind == NO_ROUTE
    assert "http://127.0.0.1:8080/chat/completions" in route.detail
    assert unreachable(ValueError("a reply not understood")) is None


def test_the_watch_stops_on_the_second_refusal_in_a_row_and_the_first_refused_key() -> None:
    watch = ServerWatch()
    assert not watch.finished([_row(UNREACHABLE)])
    assert not watch.finished([_row(None)])  # the server answered: the count starts again
    assert not watch.finished([_row(UNREACHABLE)])
    assert watch.finished([_row(None), _row(UNREACHABLE)])  # died between two repeats
    assert ServerWatch().finished([_row(UNAUTHORISED)])
    assert ServerWatch().finished([_row(NO_ROUTE)])
    assert not ServerWatch().finished([_row(None)])


def _session(tmp_path: Path, options: tuple[str, ...]) -> JudgesSession:
    return JudgesSession(Settings(rootdir=tmp_path, base_url=URL, rerecord_options=options))


def test_the_message_names_the_url_the_error_the_fix_and_the_command(tmp_path: Path) -> None:
    options = ("--judge-model", MODEL, "--judge-base-url", URL)
    watch = ServerWatch()
    watch.finished([_row(UNREACHABLE)])

    message = stop_message(_session(tmp_path, options), watch, 2, 40)

    first = message.splitlines()[0]
    assert f"stopped after 2 of 40 judgements: the judge at {URL} ({MODEL})" in first
    assert "Connection error." in first
    assert f"Start the judge server at {URL}" in message
    assert f"pytest --record=missing --judge-model {MODEL} --judge-base-url {URL}" in message


def test_a_url_without_v1_is_told_to_add_it(tmp_path: Path) -> None:
    watch = ServerWatch()
    watch.finished([_row(NO_ROUTE, "NotFoundError: Error code: 404")])
    session = JudgesSession(Settings(rootdir=tmp_path, base_url="http://127.0.0.1:8080"))

    message = stop_message(session, watch, 1, 40)

    assert "pass --judge-base-url http://127.0.0.1:8080/v1" in message
    assert "prompt" not in message


def test_the_embedded_judge_is_named_with_its_exit_status_and_log(tmp_path: Path) -> None:
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    process = subprocess.Popen([sys.executable, "-c", crash])
    process.wait(timeout=30)
    log = server_log(tmp_path, "http://127.0.0.1:41000/v1")
    server = LocalServer(process, "http://127.0.0.1:41000/v1", log)
    watch = ServerWatch()
    watch.finished([_row(UNREACHABLE)])
    session = JudgesSession(Settings(rootdir=tmp_path, base_url=server.base_url))

    message = stop_message(session, watch, 5, 40, server.state())

    assert log.name == "llama-server-41000.log"
    assert "The embedded judge (llama.cpp) died of SIGSEGV (exit status -11)" in message
    assert f"its log: {log}" in message
    assert "pytest --record=missing" in message


@pytest.mark.parametrize(("code", "said"), [(3, "exited with status 3"), (None, "still runs")])
def test_the_embedded_judges_state(tmp_path: Path, code: int | None, said: str) -> None:
    script = "import time; time.sleep(30)" if code is None else f"raise SystemExit({code})"
    process = subprocess.Popen([sys.executable, "-c", script])
    if code is not None:
        process.wait(timeout=30)
    try:
        assert said in LocalServer(process, URL, tmp_path / "log").state()
    finally:
        process.kill()
        process.wait(timeout=30)


def test_a_hosted_api_out_of_reach_is_not_blamed_on_the_embedded_judge(tmp_path: Path) -> None:
    row = _row(UNREACHABLE).model_copy(update={"model": "openai:gpt-4o-mini"})
    watch = ServerWatch()
    watch.finished([row])
    session = JudgesSession(Settings(rootdir=tmp_path))

    message = stop_message(session, watch, 2, 40, "stopped answering; its log: x.log")

    assert "the judge served by OpenAI's API (openai:gpt-4o-mini) cannot be reached" in message
    assert "check the network, a proxy, and the base URL its SDK reads" in message
    assert "embedded" not in message and "its default URL" not in message


def test_once_tripped_no_thread_starts_another_judgement() -> None:
    from judges.pytest_plugin.record_phase import _judge

    class Counted:
        calls = 0

        def judge(self, session: object) -> list[JudgementRow]:
            Counted.calls += 1
            return [_row(UNREACHABLE)]

    watch, stop = ServerWatch(), threading.Event()
    sent = [_judge(None, Counted(), stop, watch) for _ in range(5)]  # type: ignore[arg-type]
    # Two refusals in a row trip it; the three after it are never sent, whatever the timing.
    assert Counted.calls == 2 and [len(rows) for rows in sent] == [1, 1, 0, 0, 0]
    assert watch.tripped and watch.finished([_row(None)])  # an answer after it resets nothing
