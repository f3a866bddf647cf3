"""Imported judgements replay straight from their cassettes (judges.calls.direct_replay).

The direct replay must answer exactly what the openai SDK answers through vcrpy from the
same cassette, miss where vcrpy misses, and name a broken file or reply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judges.calls import _vcr, direct_replay
from judges.calls.backends import (
    IMPORTED_PATH,
    BackendError,
    JudgeRequest,
    LocalBackend,
    ModelRef,
    Price,
    make_backend,
)
from judges.calls.cassettes import open_cassette
from judges.core.runner import Call, Subject, first_requests, judge
from judges.core.spec import load_catalog

MODEL = ModelRef("imported", "Good")
URI = f"http://imported.invalid{IMPORTED_PATH}"
SCHEMA = {
    "type": "object",
    "properties": {"winner": {"type": "string", "enum": ["a", "b"]}},
    "required": ["winner"],
}


def _request(prompt: str, seed: int | None = 7) -> JudgeRequest:
    return JudgeRequest("Be a judge.", prompt, "verdict", SCHEMA, 64, 0.0, seed)


def _reply(content: Any, finish: str = "stop", usage: dict[str, Any] | None = None) -> dict:
    reply: dict[str, Any] = {
        "model": MODEL.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
    }
    if usage is not None:
        reply["usage"] = usage
    return reply


def _write(path: Path, exchanges: list[tuple[JudgeRequest, dict]]) -> None:
    backend = make_backend(MODEL, live=False)
    pairs = [(backend.body(request), reply) for request, reply in exchanges]  # type: ignore[attr-defined]
    _vcr.write_cassette(path, pairs, {"backend": "imported", "model": MODEL.model}, URI)


def _through_sdk(path: Path, requests: list[JudgeRequest]) -> list[Any]:
    """What the SDK path answers: the same body through openai and vcrpy's HTTP stub."""
    client = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1", max_retries=0)
    backend = LocalBackend(MODEL, client)
    with _vcr.cassette(path, record=False):
        return [backend.complete(request) for request in requests]


def _direct(path: Path, requests: list[JudgeRequest]) -> list[Any]:
    backend = make_backend(MODEL, live=False)
    with open_cassette(path, MODEL, record=False):
        return [backend.complete(request) for request in requests]


replies = st.builds(
    _reply,
    content=st.one_of(st.none(), st.text(max_size=40)),
    finish=st.sampled_from(["stop", "length"]),
    usage=st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {"prompt_tokens": st.integers(0, 9999), "completion_tokens": st.integers(0, 999)}
        ),
    ),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prompts=st.lists(st.sampled_from(["one", "two", "three é"]), min_size=1, max_size=4),
    data=st.data(),
)
def test_direct_replay_answers_what_the_sdk_answers(
    tmp_path: Path, prompts: list[str], data: st.DataObject
) -> None:
    # Repeated prompts are repeats: each recorded reply answers once, in order.
    exchanges = [(_request(prompt), data.draw(replies)) for prompt in prompts]
    path = tmp_path / f"{abs(hash((tuple(prompts), str(exchanges))))}.yaml"
    _write(path, exchanges)
    requests = [request for request, _ in exchanges]
    assert _direct(path, requests) == _through_sdk(path, requests)


def test_a_request_the_cassette_does_not_hold_is_a_replay_miss(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    _write(path, [(_request("one"), _reply('{"winner": "a"}'))])
    for asked in ([_request("one", seed=8)], [_request("one"), _request("one")]):
        with pytest.raises(direct_replay.ReplayMiss, match=r"one\.yaml") as missed:
            _direct(path, asked)
        assert _vcr.is_replay_miss(missed.value)
        with pytest.raises(Exception) as sdk_missed:  # the SDK wraps vcrpy's miss
            _through_sdk(path, asked)
        assert _vcr.is_replay_miss(sdk_missed.value)
    with pytest.raises(direct_replay.ReplayMiss):
        _direct(tmp_path / "absent.yaml", [_request("one")])


def test_a_miss_ends_the_judgement_a_bad_reply_becomes_an_error_row(tmp_path: Path) -> None:
    spec = load_catalog()["pairwise"]
    subject = Subject(
        "X-1", "natural", False, {"instruction": "Hi?", "output_1": "Hello", "output_2": "Bye"}
    )
    requests = first_requests(spec, "0.1", subject)
    call = Call(make_backend(MODEL, live=False), Price(0, 0), live=False,
                is_fatal=_vcr.is_replay_miss)  # fmt: skip
    path = tmp_path / "item.yaml"
    _write(path, [(requests["original"], _reply('{"winner": "a", "rationale": "r"}'))])
    with open_cassette(path, MODEL, record=False), pytest.raises(direct_replay.ReplayMiss):
        judge(spec, "0.1", subject, call)  # the swapped order was never recorded
    _write(path, [(requests[order], {"choices": []}) for order in ("original", "swapped")])
    with open_cassette(path, MODEL, record=False):
        row = judge(spec, "0.1", subject, call)
    assert row.status == "transport"
    assert "import the release again" in (row.error or "")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<<<<<<< HEAD\ninteractions: [\n", "cannot be read"),
        ("", "empty or not a mapping"),
        ("- a\n- b\n", "empty or not a mapping"),
        ("interactions:\n- request: {}\n", "cannot be read"),
        ("interactions:\n- {request: {method: POST, uri: u, body: '{x'}, response: {}}\n",
         "cannot be read"),
        ("interactions:\n- {request: {method: POST, uri: u, body: '{}'}, response: {status: "
         "{code: 200}, body: {string: 'not json'}}}\n", "cannot be read"),
        ("interactions:\n- {request: {method: POST, uri: u, body: '{}'}, response: {status: "
         "{code: 200}, body: {string: 7}}}\n", "cannot be read"),
    ],
)  # fmt: skip
def test_an_unreadable_cassette_is_named(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(direct_replay.UnreadableCassette, match=reason) as raised:
        _direct(path, [_request("one")])
    assert str(path) in str(raised.value)


@pytest.mark.parametrize(
    "reply",
    [
        {"choices": []},
        {"choices": [{"message": {"content": 3}}]},
        {"choices": [{"message": None}]},
        {"choices": [{"message": {"content": "{}"}}], "usage": "many"},
        ["not", "a", "completion"],
    ],
)
def test_a_malformed_imported_reply_is_a_named_error(tmp_path: Path, reply: Any) -> None:
    path = tmp_path / "odd.yaml"
    _write(path, [(_request("one"), reply)])
    with pytest.raises(BackendError, match=r"imported:Good.*import the release again"):
        _direct(path, [_request("one")])


def test_failed_interactions_are_skipped_and_the_fingerprint_is_read(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    _write(path, [(_request("one"), _reply('{"winner": "b"}'))])
    text = path.read_text(encoding="utf-8")
    failed = text.replace("code: 200", "code: 500").split("metadata:")[0]
    path.write_text(failed + text.split("interactions:\n", 1)[1], encoding="utf-8")
    with open_cassette(path, MODEL, record=False) as replayed:
        answered = make_backend(MODEL, live=False).complete(_request("one"))
        fingerprint = _vcr.stored_fingerprint(replayed)
    assert json.loads(answered.text) == {"winner": "b"}
    assert fingerprint == {"backend": "imported", "model": "Good"}


def test_imported_judgements_never_load_an_sdk_client() -> None:
    backend = make_backend(MODEL, live=False)
    assert getattr(backend, "client", None) is None
    with pytest.raises(BackendError, match="never called live"):
        make_backend(MODEL, live=True)
