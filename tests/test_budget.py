"""The runner's time budget and transport retries (`--judge-timeout`), with scripted backends."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from judges.calls.backends import (
    JudgeRequest,
    JudgeResponse,
    MalformedUsage,
    ModelRef,
    Price,
    token_count,
)
from judges.core.runner import BUDGET_TIMEOUTS, Call, judge
from tests._scripted_judge import CATALOG, GOOD, SUBJECTS, latest

JUDGE = "product_identity"


class APITimeoutError(Exception):
    """Named as the SDKs name theirs."""


class InternalServerError(Exception):
    status_code = 500


class ScriptedBackend:
    """Answers each call with the next step of a script: a reply text or an exception."""

    model = ModelRef.parse("local:scripted")

    def __init__(self, steps: list[Callable[[JudgeRequest], str]]) -> None:
        self.steps = steps
        self.timeouts: list[float | None] = []

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        self.timeouts.append(request.timeout)
        step = self.steps[min(len(self.timeouts), len(self.steps)) - 1]
        return JudgeResponse(step(request), False, 10, 5)


def reply(request: JudgeRequest) -> str:
    return json.dumps(GOOD[JUDGE])


def raises(error: Exception) -> Callable[[JudgeRequest], str]:
    def step(request: JudgeRequest) -> str:
        raise error

    return step


def run(backend: ScriptedBackend, *, live: bool, timeout_s: float = 120.0) -> Any:
    spec = CATALOG[JUDGE]
    call = Call(backend=backend, price=Price(0, 0), live=live, timeout_s=timeout_s)
    return judge(spec, latest(spec), SUBJECTS[JUDGE], call)


def test_a_timeout_is_a_transport_row_naming_the_option_and_is_not_retried() -> None:
    backend = ScriptedBackend([raises(APITimeoutError("read timed out")), reply])

    row = run(backend, live=True, timeout_s=7)

    assert row.status == "transport"
    assert row.error == (
        "JudgeTimeout: no reply within 7 s (--judge-timeout 7); raise --judge-timeout SECONDS "
        "for a slow server"
    )
    assert backend.timeouts == [7]  # one request, given the option's timeout


def test_server_errors_are_retried_live_only() -> None:
    steps = [raises(InternalServerError("busy")), raises(InternalServerError("busy")), reply]

    live = ScriptedBackend(steps)
    assert run(live, live=True).status == "ok"
    assert len(live.timeouts) == 3

    replay = ScriptedBackend(steps)
    row = run(replay, live=False)
    assert row.status == "transport" and row.error == "InternalServerError: busy"
    assert len(replay.timeouts) == 1


def test_a_client_error_is_not_retried() -> None:
    class BadRequestError(Exception):
        status_code = 400

    backend = ScriptedBackend([raises(BadRequestError("bad schema")), reply])
    assert run(backend, live=True).status == "transport"
    assert len(backend.timeouts) == 1


def test_a_judgement_stops_when_its_budget_is_spent() -> None:
    """Slow unusable replies: each attempt is re-asked until the whole budget is gone."""
    timeout_s = 0.1

    def slow_prose(request: JudgeRequest) -> str:
        time.sleep(timeout_s)
        return "no verdict today"

    backend = ScriptedBackend([slow_prose])
    spec = CATALOG[JUDGE]
    # More reply attempts than the budget allows: the budget, not the count, ends it.
    spec = replace(spec, config=spec.config.model_copy(update={"max_attempts": 10}))
    call = Call(backend=backend, price=Price(0, 0), live=True, timeout_s=timeout_s)

    started = time.monotonic()
    row = judge(spec, latest(spec), SUBJECTS[JUDGE], call)
    elapsed = time.monotonic() - started

    assert row.status == "transport"
    assert row.error.startswith(
        f"JudgeTimeout: the judgement used its whole time budget of {BUDGET_TIMEOUTS * 0.1:g} s"
    )
    assert len(backend.timeouts) < 10
    assert elapsed < BUDGET_TIMEOUTS * timeout_s + 0.5
    assert all(t is not None and t <= timeout_s for t in backend.timeouts)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1, 12.5, "12", True])
def test_usage_that_is_not_a_count_is_refused(value: Any) -> None:
    with pytest.raises(MalformedUsage, match="not a token count"):
        token_count(value, "prompt_tokens")


def test_usage_counts_are_read() -> None:
    assert token_count(12, "prompt_tokens") == 12
    assert token_count(12.0, "prompt_tokens") == 12
    assert token_count(None, "prompt_tokens") == 0  # a server that reports no usage
