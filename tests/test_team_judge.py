"""A judge given as the team's callable (judges.core.team_judge): loading, binding an item's
inputs, the verdict it returns, its rows, and what a replay miss says changed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anthropic
import openai
import pytest
import requests

from judges.calls.backends import ModelRef, Price
from judges.calls.cassettes import (
    CassetteMiss,
    fixture_replies,
    in_cassette,
    is_replay_miss,
    write_imported_cassette,
)
from judges.calls.ledger import Reported, reported_usage
from judges.core.runner import Call, Subject, judge
from judges.core.spec import SpecError, load_judge
from judges.core.team_judge import TeamJudge, TeamJudgeError, as_verdict
from judges.pytest_plugin.reply_fixtures import ReplyCase, verdict_on
from judges.sets.items import ReplyFixture

TEAM_MODULE = """
import asyncio
import json
import dataclasses
import math
import threading
from typing import Sequence

from pydantic import BaseModel, Field

JUDGE_PROMPT_VERSION = "0.3.1"


class Verdict(BaseModel):
    score: float = Field(ge=0, le=3)
    dropped: int


def judge_plain(query: str, criteria: list[str], strict: bool = False) -> Verdict:
    return Verdict(score=float(len(criteria)), dropped=0)


async def judge_async(query: str) -> dict:
    await asyncio.sleep(0)
    return {"score": 2, "query": query}


@dataclasses.dataclass
class Found:
    score: int


class JudgeObject:
    def __call__(self, query: str) -> Found:
        return Found(score=len(query))


judge_object = JudgeObject()


def judge_kwargs(**inputs) -> bool:
    return bool(inputs)


def judge_positional(query, /):
    return 1


def judge_raises(query: str) -> dict:
    raise KeyError("criteria")


def judge_hangs(query: str) -> dict:
    threading.Event().wait()  # never returns
    return {}


def judge_nan(query: str) -> dict:
    return {"score": math.nan}


class Document(BaseModel):
    corpus_id: str
    markdown: str


@dataclasses.dataclass(frozen=True)
class Criterion:
    name: str
    weight: float


def judge_typed(entities: Sequence[Document], criteria: list[Criterion] | None = None) -> dict:
    return {e.corpus_id: sum(c.weight for c in criteria or []) for e in entities}


not_callable = 3
"""


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A team's module on the path, under a name no other test imports."""
    name = f"team_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TEAM_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def load(ref: str, version: str | None = None, **arguments: str) -> TeamJudge:
    return TeamJudge.load(ref, version, "JUDGE_PROMPT_VERSION", arguments)


def test_the_version_is_the_team_s_own(team: str) -> None:
    assert load(f"{team}:judge_plain").version == "0.3.1"
    assert load(f"{team}:judge_plain", version="1.2").version == "1.2"


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("no_colon", "is not 'pkg.module:function'"),
        ("team_nowhere_at_all:judge", "cannot be imported"),
        ("{team}:missing", "has no 'missing'"),
        ("{team}:not_callable", "is a int, not callable"),
        ("{team}:judge_positional", "by position only"),
    ],
)
def test_a_callable_that_cannot_be_used_is_named(team: str, ref: str, says: str) -> None:
    with pytest.raises(TeamJudgeError, match=says.replace("(", r"\(")):
        load(ref.format(team=team))


def test_no_version_anywhere_says_where_to_declare_it(team: str, tmp_path: Path) -> None:
    (tmp_path / f"{team}_bare.py").write_text("def judge(query):\n    return 1\n")
    with pytest.raises(TeamJudgeError, match=r'set `version = "1\.0"` in judge\.toml'):
        load(f"{team}_bare:judge")


def test_inputs_bind_by_name_or_as_mapped(team: str) -> None:
    plain = load(f"{team}:judge_plain")
    assert plain.bind({"query": "q", "criteria": ["a"]}).values == {"query": "q", "criteria": ["a"]}
    mapped = load(f"{team}:judge_plain", query="question")
    bound = mapped.bind({"question": "q", "criteria": []})
    assert bound.values == {"query": "q", "criteria": []}
    with pytest.raises(TeamJudgeError, match=r"needs criteria \(input 'criteria'\)"):
        plain.bind({"query": "q"})
    with pytest.raises(TeamJudgeError, match=r"the inputs \['extra'\] go to no parameter"):
        plain.bind({"query": "q", "criteria": [], "extra": 1})
    assert load(f"{team}:judge_kwargs").bind({"anything": 1}).values == {"anything": 1}
    with pytest.raises(TeamJudgeError, match=r"`arguments` names \['nope'\]"):
        load(f"{team}:judge_plain", nope="x")


def test_inputs_take_the_pydantic_models_and_dataclasses_the_callable_annotates(
    team: str,
) -> None:
    typed = load(f"{team}:judge_typed")
    inputs = {
        "entities": [{"corpus_id": "d1", "markdown": "IMPALA"}],
        "criteria": [{"name": "distributed RL", "weight": 0.5}],
    }
    bound = typed.bind(inputs)
    assert bound.values == inputs  # the item's JSON identifies the judgement
    assert type(bound.passed["entities"][0]).__name__ == "Document"
    assert type(bound.passed["criteria"][0]).__name__ == "Criterion"
    assert typed.call(bound) == {"d1": 0.5}
    with pytest.raises(TeamJudgeError) as refused:
        typed.bind({"entities": [{"corpus_id": "d1"}]})
    assert str(refused.value).startswith(
        f"the input for parameter 'entities' of {team}:judge_typed is not a Sequence[team_"
    )
    assert "0.markdown: Field required" in str(refused.value)


def test_sync_async_and_callable_objects_are_called(team: str) -> None:
    plain = load(f"{team}:judge_plain")
    assert as_verdict(plain.call(plain.bind({"query": "q", "criteria": ["a", "b"]}))) == {
        "score": 2.0,
        "dropped": 0,
    }
    asynchronous = load(f"{team}:judge_async")
    assert as_verdict(asynchronous.call(asynchronous.bind({"query": "q"}))) == {
        "score": 2,
        "query": "q",
    }
    instance = load(f"{team}:judge_object")
    assert as_verdict(instance.call(instance.bind({"query": "four"}))) == {"score": 4}
    assert instance.verdict_model is None  # a dataclass: no fields to check before a call


def test_every_kind_of_return_is_a_json_verdict() -> None:
    assert as_verdict(True) == {"value": True}
    assert as_verdict(2.5) == {"value": 2.5}
    assert as_verdict("relevant") == {"value": "relevant"}
    assert as_verdict({"a": {"b": [1]}}) == {"a": {"b": [1]}}
    for bad, says in [(None, "returned a NoneType"), ({"x": float("nan")}, "not JSON"),
                      ({"x": {1, 2}}, "not JSON")]:  # fmt: skip
        with pytest.raises(TeamJudgeError, match=says):
            as_verdict(bad)


def write_judge(root: Path, body: str) -> Path:
    folder = root / "paper_relevance"
    folder.mkdir(parents=True)
    (folder / "judge.toml").write_text(
        'name = "paper_relevance"\nbaseline_model = "openai:gpt-4o-mini"\n' + body,
        encoding="utf-8",
    )
    return folder


def test_judge_toml_names_a_callable_instead_of_prompt_files(team: str, tmp_path: Path) -> None:
    spec = load_judge(write_judge(tmp_path / "a", f'callable = "{team}:judge_plain"\n'))
    assert spec.versions == ["0.3.1"] and spec.team is not None
    assert spec.verdict_model is not None and spec.verdict_model.__name__ == "Verdict"
    assert spec.score_scales("0.3.1") == {"score": (0.0, 3.0)}
    with pytest.raises(ValueError, match="the inputs"):
        spec.parse_inputs({"query": "q", "criteria": [], "stray": 1})


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('module = "judges.builtin.relevance"\ncallable = "{team}:judge_plain"\n', "not both"),
        ("", "not both or neither"),
        ('callable = "{team}:judge_plain"\nfacets = ["a"]\n', "makes its own requests"),
        ('callable = "{team}:judge_plain"\nsystem = "x"\n', "makes its own requests"),
        ('callable = "{team}:missing"\n', r"judge.toml:\d+: callable .* has no 'missing'"),
    ],
)
def test_a_callable_judge_toml_that_cannot_work_is_refused(
    team: str, tmp_path: Path, body: str, says: str
) -> None:
    with pytest.raises(SpecError, match=says):
        load_judge(write_judge(tmp_path, body.format(team=team)))


class _Backend:
    model = ModelRef.parse("openai:gpt-4o-mini")


def test_a_failing_callable_is_an_error_row_and_a_verdict_is_checked(
    team: str, tmp_path: Path
) -> None:
    subject = Subject("PR-01", "off_topic", False, {"query": "q"}, ())
    call = Call(backend=_Backend(), price=None, live=False)  # type: ignore[arg-type]
    for name, status, says in [("judge_raises", "error", "raised KeyError: 'criteria'"),
                               ("judge_nan", "error", "not JSON")]:  # fmt: skip
        folder = tmp_path / name
        folder.mkdir()
        spec = load_judge(write_judge(folder, f'callable = "{team}:{name}"\n'))
        row = judge(spec, "0.3.1", subject, call)
        assert (row.status, row.met) == (status, False) and says in (row.error or "")
    folder = tmp_path / "async"
    folder.mkdir()
    spec = load_judge(write_judge(folder, f'callable = "{team}:judge_async"\n'))
    row = judge(spec, "0.3.1", subject, call)
    assert row.status == "ok" and row.verdict == {"score": 2, "query": "q"} and row.met
    assert row.prompt_hash and row.model == "openai:gpt-4o-mini"


def chat_request(content: str) -> dict[str, Any]:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}


def chat_reply(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }  # fmt: skip


def test_a_replay_miss_names_what_changed_in_the_request(tmp_path: Path) -> None:
    path = tmp_path / "PR-01.yaml"
    sent = "Rate the document on each criterion: distributed RL, method."
    uri = "http://127.0.0.1:1/v1/chat/completions"
    write_imported_cassette(path, [(chat_request(sent), chat_reply("{}"))], {}, uri)
    client = openai.OpenAI(api_key="replay", base_url="http://127.0.0.1:1/v1", max_retries=0)
    model = ModelRef.parse("openai:gpt-4o-mini")
    with in_cassette(path, model, record=False, every_transport=True):
        client.chat.completions.create(**chat_request(sent))  # the recorded request replays
    with (
        pytest.raises(CassetteMiss) as missed,
        in_cassette(path, model, record=False, every_transport=True),
    ):
        client.chat.completions.create(**chat_request(sent.replace("document", "paper")))
    assert missed.value.changed == (
        'messages[0].content: recorded "Rate the document on each criteri"..., '
        'now "Rate the paper on each criterion:"...'
    )
    assert "(in the request, messages[0].content: recorded" in missed.value.reason(model)


def test_reply_fixtures_answer_any_client_in_call_order() -> None:
    chat = chat_request("x")
    with fixture_replies(["first", "second", "third"], "gpt-4o-mini"):
        client = openai.OpenAI(api_key="fixture", base_url="https://gateway.example/openai/v1")
        if hasattr(client, "responses"):  # the Responses API (openai 1.66 on)
            assert client.responses.create(model="gpt-4o-mini", input="x").output_text == "first"
        else:
            assert client.chat.completions.create(**chat).choices[0].message.content == "first"
        assert client.chat.completions.create(**chat).choices[0].message.content == "second"
        message = anthropic.Anthropic(api_key="fixture").messages.create(
            model="claude", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
        assert message.content[0].text == "third"  # type: ignore[union-attr]
    with fixture_replies(["by requests"], "m"):
        answer = requests.post("https://api.example/v1/chat/completions", json=chat, timeout=1)
        assert answer.json()["choices"][0]["message"]["content"] == "by requests"

    async def ask() -> str | None:
        client = openai.AsyncOpenAI(api_key="fixture")
        reply = await client.chat.completions.create(**chat)
        return reply.choices[0].message.content

    with fixture_replies(["async"], "m"):
        assert asyncio.run(ask()) == "async"
    with pytest.raises(Exception) as past_the_end, fixture_replies(["only one"], "m"):
        client = openai.OpenAI(api_key="fixture", max_retries=0)
        client.chat.completions.create(**chat)
        client.chat.completions.create(**chat)
    assert is_replay_miss(past_the_end.value)


def test_only_a_callable_judge_s_earlier_versions_are_retired(team: str, tmp_path: Path) -> None:
    spec = load_judge(write_judge(tmp_path / "a", f'callable = "{team}:judge_plain"\n'))
    assert [spec.retired(v) for v in ("0.3.0", "0.2.9", "0.3.1", "0.3.10", "1.0", "x")] == [
        True, True, False, False, False, False,
    ]  # fmt: skip
    builtin = load_judge(Path(__file__).parents[1] / "judges" / "prompts" / "relevance")
    assert not builtin.retired("0.1")


def test_a_reply_s_usage_is_read_in_each_provider_s_shape() -> None:
    price = Price(input_per_mtok=1.0, output_per_mtok=2.0)
    chat = {"usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
    messages = {"usage": {"input_tokens": 7, "output_tokens": 3}}
    assert reported_usage(chat, price) == Reported(100, 20, 140e-6)
    assert reported_usage(messages, price) == Reported(7, 3, 13e-6)
    for silent in (None, {}, {"usage": None}, {"usage": {"prompt_tokens": True}}, [1]):
        assert reported_usage(silent, price) is None


def test_a_callable_judge_s_set_has_no_panel(team: str, tmp_path: Path) -> None:
    from judges.sets.planted import PlantedSetError, load_planted_set

    spec = load_judge(write_judge(tmp_path / "prompts", f'callable = "{team}:judge_plain"\n'))
    folder = tmp_path / "sets" / "paper_relevance"
    folder.mkdir(parents=True)
    item = {"id": "PR-01", "slug": "a", "judge": "paper_relevance", "category": "off",
            "inputs": {"query": "q", "criteria": []}, "provenance": {"source": "hand"},
            "expect": [{"field": "score", "op": "<=", "value": 1}]}  # fmt: skip
    (folder / "items.jsonl").write_text(json.dumps(item) + "\n")
    (folder / "set.toml").write_text('[panel]\nmodel = "openai:gpt-4o"\nlabel = "cross-check"\n')
    with pytest.raises(PlantedSetError, match="calls its own model: remove"):
        load_planted_set(tmp_path / "sets", spec)


def test_a_reply_fixture_whose_judge_never_returns_fails_after_its_time(
    team: str, tmp_path: Path
) -> None:
    spec = load_judge(write_judge(tmp_path, f'callable = "{team}:judge_hangs"\n'))
    fixture = ReplyFixture.model_validate({
        "id": "RF-01", "slug": "hangs", "judge": "paper_relevance", "category": "control",
        "control": True, "inputs": {"query": "q"}, "replies": ["{}"],
        "expect": [{"field": "score", "op": ">=", "value": 2}], "provenance": {"source": "hand"},
    })  # fmt: skip
    session = SimpleNamespace(
        catalogue=SimpleNamespace(catalog={"paper_relevance": spec}),
        settings=SimpleNamespace(judge_timeout_s=0.1),
    )
    case = ReplyCase("paper_relevance", "0.3.1", fixture)
    with pytest.raises(AssertionError) as failed:
        verdict_on(session, case, fixture.replies)  # type: ignore[arg-type]
    assert str(failed.value).startswith(
        f"RF-01 (reply fixture): {team}:judge_hangs gave no verdict within 0.3 s "
        '(3 x --judge-timeout 0.1) on the replies ["{}"]'
    ), failed.value
