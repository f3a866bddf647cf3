"""How a sent call is settled: what it reported, or what the provider may bill (worst case).

A reply without usage, a reply cut off after the request was sent, and each retry of one
are charged at the call's worst case and marked estimated; an error status or a connection
never made release the reservation; a free model stays free.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2 as httpx
import openai
import pytest

from judges.calls.backends import (
    JudgeRequest,
    JudgeResponse,
    ModelRef,
    OpenAIBackend,
    Price,
    may_have_been_billed,
)
from judges.calls.batch.answers import usage_of
from judges.calls.ledger import Ledger, Reported, Usage, settlement
from judges.core.results import JudgementRow
from judges.core.runner import Call, judge, worst_case_usd
from judges.reports.sections.cost import cost_cell, estimated_part
from tests._scripted_judge import CATALOG, GOOD, SUBJECTS, chat_completion

MODEL = ModelRef("openai", "gpt-4o-2024-11-20")
PRICE = Price(1.0, 2.0)  # USD per million tokens
JUDGE = "product_identity"
REPLY = json.dumps(GOOD[JUDGE])


def test_a_reported_usage_is_charged_as_reported() -> None:
    usage = settlement(Reported(100, 20, 0.5), worst_usd=9.0)
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 100, 20)
    assert usage.cost_usd == 0.5 and usage.estimated_usd == 0.0 and not usage.estimated_calls


def test_no_usage_is_charged_at_the_worst_case() -> None:
    usage = settlement(None, worst_usd=9.0)
    assert usage.cost_usd == usage.estimated_usd == 9.0
    assert (usage.calls, usage.estimated_calls, usage.input_tokens) == (1, 1, 0)


def test_the_worst_case_of_a_free_model_is_free() -> None:
    assert settlement(None, worst_usd=0.0) == Usage(calls=1)


def test_the_ledger_keeps_reported_and_estimated_spend_apart(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=20.0)
    ledger.settle(ledger.reserve(str(MODEL), 9.0), str(MODEL), 9.0, Reported(10, 5, 1.0))
    ledger.settle(ledger.reserve(str(MODEL), 9.0), str(MODEL), 9.0, None)
    assert ledger.spent_usd() == 10.0 and ledger.estimated_usd() == 9.0
    assert ledger.held_usd() == 0.0
    total = ledger.totals()[str(MODEL)]
    assert (total.calls, total.estimated_calls, total.estimated_usd) == (2, 1, 9.0)
    # The next worst case no longer fits: the estimate counts against the cap.
    with pytest.raises(Exception, match="cost cap reached"):
        ledger.reserve(str(MODEL), 10.5)


# -- the runner settles every attempt ------------------------------------------------------


@dataclass
class Provider:
    """A backend answering from a script: a reply (with or without usage) or an error."""

    script: list[JudgeResponse | BaseException]
    model: ModelRef = MODEL
    sent: list[JudgeRequest] = field(default_factory=list)

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        self.sent.append(request)
        outcome = self.script.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def cut_off() -> openai.APIConnectionError:
    """What the SDK raises when the body ends early: the provider did the work."""
    request = httpx.Request("POST", "https://api.example/v1/chat/completions")
    error = openai.APIConnectionError(request=request)
    error.__cause__ = httpx.RemoteProtocolError("peer closed connection", request=request)
    return error


def never_connected() -> openai.APIConnectionError:
    request = httpx.Request("POST", "https://api.example/v1/chat/completions")
    error = openai.APIConnectionError(request=request)
    error.__cause__ = httpx.ConnectError("connection refused", request=request)
    return error


def overloaded() -> openai.InternalServerError:
    request = httpx.Request("POST", "https://api.example/v1/chat/completions")
    response = httpx.Response(500, request=request, json={"error": {"message": "busy"}})
    return openai.InternalServerError("busy", response=response, body=None)


def reply(usage: bool = True) -> JudgeResponse:
    return JudgeResponse(REPLY, False, 100 if usage else 0, 20 if usage else 0, usage)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr("judges.core.runner._BACKOFF_S", 0.0)
    yield


def run(provider: Provider, ledger: Ledger, price: Price = PRICE) -> JudgementRow:
    call = Call(backend=provider, price=price, live=True, ledger=ledger)
    return judge(CATALOG[JUDGE], "0.3.1", SUBJECTS[JUDGE], call)


def worst(provider: Provider, price: Price = PRICE) -> float:
    (worst_usd,) = {worst_case_usd(price, request) for request in provider.sent}
    return worst_usd


def test_a_reply_without_usage_is_charged_at_its_worst_case(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=1.0)
    provider = Provider([reply(usage=False)])
    row = run(provider, ledger)
    assert row.status == "ok"
    assert ledger.spent_usd() == ledger.estimated_usd() == pytest.approx(worst(provider))
    assert row.usage.estimated_usd == row.usage.cost_usd == pytest.approx(worst(provider))
    assert row.usage.estimated_calls == 1


def test_a_reply_cut_off_is_charged_and_each_retry_again(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=1.0)
    provider = Provider([cut_off(), cut_off(), reply()])
    row = run(provider, ledger)
    assert row.status == "ok" and len(provider.sent) == 3
    total = ledger.totals()[str(MODEL)]
    assert (total.calls, total.estimated_calls) == (3, 2)
    reported = PRICE.cost(100, 20)
    assert ledger.estimated_usd() == pytest.approx(2 * worst(provider))
    assert ledger.spent_usd() == pytest.approx(2 * worst(provider) + reported)
    assert row.usage.cost_usd == pytest.approx(ledger.spent_usd())
    assert ledger.held_usd() == 0.0


def test_retries_stop_at_the_cap_that_their_worst_cases_fill(tmp_path: Path) -> None:
    probe = Provider([reply()])
    run(probe, Ledger(tmp_path / "probe.jsonl"))
    cap = 2.5 * worst(probe)  # two worst cases fit, never three
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=cap)
    provider = Provider([cut_off(), cut_off(), cut_off()])
    row = run(provider, ledger)
    assert row.status == "cost_cap" and len(provider.sent) == 2
    assert ledger.spent_usd() <= cap


@pytest.mark.parametrize("error", [never_connected, overloaded], ids=["refused", "status"])
def test_a_call_the_provider_did_not_work_on_is_not_charged(
    tmp_path: Path, error: type[Exception]
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=1.0)
    row = run(Provider([error(), error(), error()]), ledger)
    assert row.status == "transport"
    assert ledger.spent_usd() == 0.0 and ledger.held_usd() == 0.0 and ledger.totals() == {}


def test_a_free_model_cut_off_stays_free(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=0.0)
    provider = Provider([cut_off(), reply(usage=False)])
    row = run(provider, ledger, price=Price(0.0, 0.0))
    assert row.status == "ok" and len(provider.sent) == 2
    assert ledger.spent_usd() == 0.0 and row.usage.estimated_calls == 0
    assert "estimated" not in json.dumps(row.dump())


def test_which_errors_may_have_been_billed() -> None:
    assert may_have_been_billed(cut_off())
    assert may_have_been_billed(openai.APITimeoutError(request=httpx.Request("POST", "http://x")))
    assert not may_have_been_billed(never_connected())
    assert not may_have_been_billed(overloaded())


# -- where usage is read -------------------------------------------------------------------


def test_the_sdk_reply_says_whether_it_reported_usage() -> None:
    class Client:
        def __init__(self, usage: tuple[int, int] | None) -> None:
            create = lambda **kw: chat_completion(REPLY, usage=usage)  # noqa: E731
            self.chat = type("Chat", (), {"completions": type("C", (), {"create": create})})

    request = JudgeRequest("sys", "prompt", "verdict", {"type": "object"}, 10)
    assert OpenAIBackend(MODEL, Client((1, 2))).complete(request).usage_reported
    assert not OpenAIBackend(MODEL, Client(None)).complete(request).usage_reported


def test_a_batch_reply_without_usage_reports_none() -> None:
    assert usage_of({"usage": {"prompt_tokens": 3, "completion_tokens": 4}}) == (3, 4)
    assert usage_of({"usage": {"input_tokens": 3, "output_tokens": 4}}) == (3, 4)
    assert usage_of({"choices": []}) is None
    assert usage_of({"usage": {"prompt_tokens": 3}}) is None


def test_the_estimated_part_is_named_only_when_there_is_one() -> None:
    assert cost_cell(Usage(calls=1, cost_usd=1.5)) == "1.5000"
    assert estimated_part(Usage(calls=1, cost_usd=1.5)) == ""
    usage = settlement(None, 2.0)
    assert cost_cell(usage) == "2.0000 (2.0000 estimated)"
    assert estimated_part(usage).startswith(", of which $2.0000 estimated (1 call ")
