"""Unit tests for judges.calls.backends and judges.core.runner, over the SDKs' own response types.

A fake client (tests/_scripted_judge.py) stands in for `openai.OpenAI` /
`anthropic.Anthropic`: it records the request keyword arguments and returns a
`ChatCompletion` or a `Message` built with the SDK's own pydantic types, so the backends
read exactly the shapes the SDKs hand them.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from judges.builtin.product_identity import ReplyV031
from judges.builtin.relevance import RelevanceReply
from judges.calls.backends import (
    AnthropicBackend,
    BackendError,
    JudgeRequest,
    LocalBackend,
    ModelRef,
    OpenAIBackend,
    Price,
    bound_strings,
    load_prices,
    make_backend,
    price_for,
    strict_schema,
)
from judges.calls.ledger import Ledger
from judges.core.results import Expectation
from judges.core.runner import Call, Subject, judge, seed_for
from tests._scripted_judge import (
    CATALOG,
    FLAVOURS,
    GOOD,
    SUBJECTS,
    Script,
    anthropic_message,
    chat_completion,
    latest,
    run,
)

# --------------------------------------------------------------------------- a request


def request(**changes: Any) -> JudgeRequest:
    values: dict[str, Any] = {
        "system": "You are a judge.",
        "prompt": "Rate this.",
        "schema_name": "geval_coverage",
        "schema": strict_schema(RelevanceReply.model_json_schema()),
        "max_tokens": 200,
        "temperature": 0.3,
        "seed": 7,
    }
    return JudgeRequest(**(values | changes))


# --------------------------------------------------------------------------- backends alone


def test_openai_request_and_response() -> None:
    backend, client = FLAVOURS["openai"].build(lambda kwargs: ('{"a": 1}', False))
    response = backend.complete(request())
    (kwargs,) = client.calls
    assert kwargs["model"] == "gpt-4o-mini"
    assert kwargs["messages"] == [
        {"role": "system", "content": "You are a judge."},
        {"role": "user", "content": "Rate this."},
    ]
    assert kwargs["max_tokens"] == 200
    assert kwargs["temperature"] == 0.3
    assert kwargs["seed"] == 7
    assert kwargs["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "geval_coverage", "schema": request().schema, "strict": True},
    }
    assert (response.text, response.truncated) == ('{"a": 1}', False)
    assert (response.input_tokens, response.output_tokens) == (120, 30)


def test_openai_leaves_out_unset_sampling() -> None:
    backend, client = FLAVOURS["openai"].build(lambda kwargs: ("{}", False))
    backend.complete(request(temperature=None, seed=None))
    assert "temperature" not in client.calls[0]
    assert "seed" not in client.calls[0]


@pytest.mark.parametrize(
    ("finish", "truncated"), [("stop", False), ("length", True), ("content_filter", False)]
)
def test_openai_truncation_from_finish_reason(finish: str, truncated: bool) -> None:
    client = SimpleNamespace(
        chat=SimpleNamespace(
            completions=SimpleNamespace(create=lambda **kw: chat_completion('{"a"', finish))
        )
    )
    response = OpenAIBackend(FLAVOURS["openai"].model, client).complete(request())
    assert response.truncated is truncated


def test_openai_without_content_or_usage() -> None:
    client = SimpleNamespace(
        chat=SimpleNamespace(
            completions=SimpleNamespace(create=lambda **kw: chat_completion(None, usage=None))
        )
    )
    response = OpenAIBackend(FLAVOURS["openai"].model, client).complete(request())
    assert (response.text, response.input_tokens, response.output_tokens) == ("", 0, 0)


def test_local_sends_a_json_object_format_with_bounded_strings() -> None:
    backend, client = FLAVOURS["local"].build(lambda kwargs: ("{}", True))
    sent = request()
    before = copy.deepcopy(sent.schema)
    response = backend.complete(sent)
    fmt = client.calls[0]["response_format"]
    assert fmt["type"] == "json_object"
    assert set(fmt) == {"type", "schema"}
    item = fmt["schema"]["properties"]["criteria"]["items"]["properties"]
    assert fmt["schema"] == bound_strings(sent.schema)
    assert isinstance(item["name"]["maxLength"], int) and item["name"]["maxLength"] > 0
    assert item["evidence"]["maxLength"] == item["name"]["maxLength"]
    assert "maxLength" not in item["relevance"]  # an enum is already bounded
    assert sent.schema == before, "the request's schema must not be changed in place"
    assert client.calls[0]["model"] == "smollm2-135m"
    assert response.truncated is True


def test_bound_strings_keeps_an_explicit_limit() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "maxLength": 10}, "b": {"type": "string"}},
    }
    bounded = bound_strings(schema, limit=50)
    assert bounded["properties"]["a"]["maxLength"] == 10
    assert bounded["properties"]["b"]["maxLength"] == 50


def test_anthropic_request_and_response() -> None:
    backend, client = FLAVOURS["anthropic"].build(lambda kwargs: ('{"a": 1}', False))
    sent = request()
    response = backend.complete(sent)
    (kwargs,) = client.calls
    assert set(kwargs) == {"model", "max_tokens", "system", "messages", "output_config"}
    assert "temperature" not in kwargs  # the 2.x SDK has none
    assert kwargs["system"] == "You are a judge."
    assert kwargs["messages"] == [{"role": "user", "content": "Rate this."}]
    assert kwargs["output_config"] == {"format": {"type": "json_schema", "schema": sent.schema}}
    assert (response.text, response.truncated) == ('{"a": 1}', False)
    assert (response.input_tokens, response.output_tokens) == (120, 30)


@pytest.mark.parametrize(
    ("stop", "truncated"), [("end_turn", False), ("max_tokens", True), ("stop_sequence", False)]
)
def test_anthropic_truncation_from_stop_reason(stop: str, truncated: bool) -> None:
    client = SimpleNamespace(
        messages=SimpleNamespace(create=lambda **kw: anthropic_message('{"a": ', stop))
    )
    response = AnthropicBackend(FLAVOURS["anthropic"].model, client).complete(request())
    assert response.truncated is truncated


def test_anthropic_joins_text_blocks_and_skips_others() -> None:
    blocks = [
        {"type": "thinking", "thinking": "{not the reply}", "signature": "sig"},
        {"type": "text", "text": '{"score": '},
        {"type": "text", "text": "4}"},
    ]
    client = SimpleNamespace(
        messages=SimpleNamespace(create=lambda **kw: anthropic_message("", blocks=blocks))
    )
    response = AnthropicBackend(FLAVOURS["anthropic"].model, client).complete(request())
    assert response.text == '{"score": 4}'


# --------------------------------------------------------------------------- strict_schema


def walk(node: Any):
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def test_strict_schema_inlines_defs_and_closes_objects() -> None:
    original = RelevanceReply.model_json_schema()
    snapshot = copy.deepcopy(original)
    schema = strict_schema(original)
    assert "$defs" in original and original == snapshot
    nodes = [n for n in walk(schema) if isinstance(n, dict)]
    assert not any("$ref" in n or "$defs" in n or "title" in n for n in nodes)
    objects = [n for n in nodes if n.get("type") == "object"]
    assert len(objects) == 2
    assert all(n["additionalProperties"] is False for n in objects)
    item = schema["properties"]["criteria"]["items"]
    assert set(item["properties"]) == {"name", "relevance", "evidence"}
    assert item["properties"]["relevance"]["enum"] == [
        "Perfectly Relevant",
        "Somewhat Relevant",
        "Not Relevant",
    ]


def test_strict_schema_turns_integer_bounds_into_an_enum() -> None:
    schema = strict_schema(ReplyV031.model_json_schema())
    for name in ("factual_accuracy", "completeness", "causal_reasoning"):
        assert schema["properties"][name] == {"type": "integer", "enum": [0, 1, 2, 3]}
    assert schema["properties"]["product_identity_match"] == {"type": "boolean"}
    assert schema["additionalProperties"] is False


def test_strict_schema_keeps_a_one_sided_bound() -> None:
    class Count(BaseModel):
        n: int = 0

    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    assert strict_schema(schema)["properties"]["n"] == {"type": "integer", "minimum": 1}
    assert strict_schema(Count.model_json_schema())["properties"]["n"]["type"] == "integer"


def test_strict_schema_resolves_each_reference_separately() -> None:
    class Part(BaseModel):
        text: str

    class Pair(BaseModel):
        left: Part
        right: Part

    schema = strict_schema(Pair.model_json_schema())
    left, right = schema["properties"]["left"], schema["properties"]["right"]
    assert (
        left
        == right
        == {
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "type": "object",
            "additionalProperties": False,
        }
    )
    assert left is not right


def test_strict_schema_keeps_a_property_named_title() -> None:
    class Cited(BaseModel):
        title: str
        score: int

    schema = strict_schema(Cited.model_json_schema())
    assert set(schema["properties"]) == set(schema["required"]) == {"title", "score"}


# --------------------------------------------------------------------------- models and prices


@pytest.mark.parametrize(
    "text", ["", "gpt-4o", "openai:", ":gpt-4o", "azure:gpt-4o", "OpenAI:gpt-4o", "local"]
)
def test_model_ref_refuses(text: str) -> None:
    with pytest.raises(BackendError, match="must be backend:model"):
        ModelRef.parse(text)


def test_model_ref_parses() -> None:
    ref = ModelRef.parse("local:org/model:q4")
    assert (ref.backend, ref.model) == ("local", "org/model:q4")
    assert str(ref) == "local:org/model:q4"
    assert ref.slug == "local-org_model-q4"
    assert ModelRef.parse("openai:gpt-4o-2024-11-20") == ModelRef("openai", "gpt-4o-2024-11-20")


def test_price_for() -> None:
    prices = load_prices()
    assert price_for(prices, ModelRef.parse("openai:gpt-4o-2024-11-20")) == Price(2.5, 10.0)
    assert price_for(prices, ModelRef.parse("local:never-heard-of-it")) == Price(0.0, 0.0)
    for paid in ("openai:gpt-9", "anthropic:claude-unknown"):
        with pytest.raises(BackendError, match=f"no price for {paid}") as caught:
            price_for(prices, ModelRef.parse(paid))
        assert "--judge-prices" in str(caught.value)
        assert price_for(prices, ModelRef.parse(paid), live=False) == Price(0.0, 0.0)  # replay


def test_price_cost() -> None:
    assert Price(2.5, 10.0).cost(1_000_000, 100_000) == pytest.approx(3.5)
    assert Price(0.0, 0.0).cost(10**9, 10**9) == 0.0


def test_load_prices_later_files_override(tmp_path: Path) -> None:
    first = tmp_path / "a.toml"
    first.write_text(
        '[models."openai:gpt-4o-2024-11-20"]\ninput_per_mtok = 1\noutput_per_mtok = 2\n'
        '[models."openai:my-fine-tune"]\ninput_per_mtok = 3\noutput_per_mtok = 4\n'
    )
    second = tmp_path / "b.toml"
    second.write_text('[models."openai:my-fine-tune"]\ninput_per_mtok = 5\noutput_per_mtok = 6\n')
    prices = load_prices(first, second)
    assert prices["openai:gpt-4o-2024-11-20"] == Price(1.0, 2.0)
    assert prices["openai:my-fine-tune"] == Price(5.0, 6.0)
    assert prices["anthropic:claude-sonnet-4-6"] == load_prices()["anthropic:claude-sonnet-4-6"]
    assert price_for(prices, ModelRef.parse("openai:my-fine-tune")) == Price(5.0, 6.0)


@pytest.mark.parametrize(
    "text",
    [
        '[models."openai:x"]\ninput_per_mtok = 1\n',
        "not toml [",
        '[models."openai:x"]\ninput_per_mtok = "cheap"\noutput_per_mtok = 1\n',
    ],
    ids=["missing-output", "bad-toml", "not-a-number"],
)
def test_load_prices_refuses_a_bad_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(BackendError, match="input_per_mtok and output_per_mtok") as caught:
        load_prices(path)
    assert str(path) in str(caught.value)


def test_load_prices_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"absent\.toml"):
        load_prices(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
    ],
)
def test_make_backend_live_needs_a_key(model: str, variable: str) -> None:
    with pytest.raises(BackendError, match=variable):
        make_backend(ModelRef.parse(model), live=True, environ={"UNRELATED": "x"})
    with pytest.raises(BackendError, match=variable):
        make_backend(ModelRef.parse(model), live=True, environ={variable: ""})


@pytest.mark.parametrize(
    ("model", "kind"),
    [
        ("openai:gpt-4o-mini", OpenAIBackend),
        ("anthropic:claude-sonnet-4-6", AnthropicBackend),
        ("local:smollm2-135m", LocalBackend),
    ],
)
def test_make_backend_builds_each_kind(model: str, kind: type) -> None:
    ref = ModelRef.parse(model)
    replay = make_backend(ref, live=False, environ={})
    assert type(replay) is kind and replay.model == ref
    assert replay.client.max_retries == 0  # replay never retries a cassette miss
    live = make_backend(ref, live=True, environ={"OPENAI_API_KEY": "k1", "ANTHROPIC_API_KEY": "k2"})
    # The runner retries within the judgement's time budget; the SDK never does.
    assert live.client.max_retries == 0


def test_the_anthropic_client_goes_where_anthropic_base_url_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    ref = ModelRef.parse("anthropic:claude-sonnet-4-6")
    default = make_backend(ref, live=False, environ={})
    assert str(default.client.base_url).startswith("https://api.anthropic.com")
    environ = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://gateway.invalid:8"}
    proxied = make_backend(ref, live=True, environ=environ)
    assert str(proxied.client.base_url).startswith("http://gateway.invalid:8")


def test_make_backend_local_defaults() -> None:
    backend = make_backend(ModelRef.parse("local:smollm2-135m"), live=True, environ={})
    assert str(backend.client.base_url).startswith("http://127.0.0.1:8080/v1")
    custom = make_backend(
        ModelRef.parse("local:x"), base_url="http://example.invalid:9/v1", live=False, environ={}
    )
    assert "example.invalid:9" in str(custom.client.base_url)


# --------------------------------------------------------------------------- the runner


def bad_reply(judge_name: str, kind: str) -> tuple[str, bool]:
    """A reply with one parse failure of `kind` (text, cut off?)."""
    good = copy.deepcopy(GOOD[judge_name])
    if kind == "truncated":
        text = json.dumps(good)
        return text[: len(text) // 2], True
    if kind == "no_json":
        return "I think it is quite good overall.", False
    if judge_name == "relevance":
        item = good["criteria"][1]
        if kind == "wrong_type":
            good["criteria"] = "both perfectly relevant"
        elif kind == "missing_field":  # evidence is optional; the label is not
            del item["relevance"]
        elif kind == "bad_label":
            item["relevance"] = "Highly Relevant"
    else:
        score = "factual_accuracy" if judge_name == "product_identity" else "score"
        if kind == "wrong_type":
            good[score] = "high"
        elif kind == "out_of_range":
            good[score] = 9
        elif kind == "missing_field":
            del good["rationale"]
    return json.dumps(good), False


KINDS = {  # failure kind -> (Attempt.error_kind, words in the error)
    "truncated": ("truncated", "before its JSON object closes"),
    "no_json": ("no_json", "no JSON object"),
    "wrong_type": ("invalid", "wrong type"),
    "out_of_range": ("invalid", "out of range"),
    "missing_field": ("invalid", "missing field"),
    "bad_label": ("invalid", "label outside the allowed set"),
}
APPLIES = {
    "product_identity": ["truncated", "no_json", "wrong_type", "out_of_range", "missing_field"],
    "geval": ["truncated", "no_json", "wrong_type", "out_of_range", "missing_field"],
    "relevance": ["truncated", "no_json", "wrong_type", "missing_field", "bad_label"],
}
FAILURE_CASES = [
    pytest.param(j, f, k, id=f"{j}-{f}-{k}") for j in APPLIES for f in FLAVOURS for k in APPLIES[j]
]
FAILING_FACET = {"product_identity": None, "geval": "coverage", "relevance": None}


def facets_of(spec: Any) -> list[str | None]:
    return list(spec.config.facets) or [None]


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("judge_name", SUBJECTS)
@pytest.mark.parametrize(
    "wrap",
    [
        lambda t: t,
        lambda t: f"Here is my verdict:\n{t}\nThanks!",
        lambda t: f"```json\n{t}\n```",
        lambda t: f"Sure.\n```\n{t}\n```",
    ],
    ids=["bare", "prose", "json-fence", "plain-fence"],
)
def test_wrapped_json_is_recovered(judge_name: str, flavour: str, wrap: Callable) -> None:
    spec = CATALOG[judge_name]
    text = wrap(json.dumps(GOOD[judge_name]))
    script = Script(judge_name, {f: [(text, False)] for f in spec.config.facets or (None,)})
    row, client = run(judge_name, flavour, script)
    facets = len(spec.config.facets) or 1
    assert row.status == "ok", row.error
    assert row.met is True
    assert len(client.calls) == row.usage.calls == facets
    assert [a.error for a in row.attempts] == [None] * facets
    # The reply that gave the verdict is stored once, as the verdict's raw.
    assert all(a.text is None for a in row.attempts)
    raw = row.verdict["raw"]
    assert (raw if isinstance(raw, dict) else {None: raw}) == {f: text for f in facets_of(spec)}
    assert (row.usage.input_tokens, row.usage.output_tokens) == (120 * facets, 30 * facets)
    assert row.usage.cost_usd == pytest.approx(facets * Price(1.0, 2.0).cost(120, 30))
    assert row.model == str(FLAVOURS[flavour].model)
    assert (row.judge, row.prompt_version, row.item_id) == (
        judge_name,
        latest(spec),
        SUBJECTS[judge_name].item_id,
    )


@pytest.mark.parametrize(("judge_name", "flavour", "kind"), FAILURE_CASES)
def test_a_failure_every_time_ends_unparseable(judge_name: str, flavour: str, kind: str) -> None:
    spec = CATALOG[judge_name]
    facet = FAILING_FACET[judge_name]
    script = Script(judge_name, {facet: [bad_reply(judge_name, kind)]})
    row, _ = run(judge_name, flavour, script)
    error_kind, words = KINDS[kind]
    assert row.status == "unparseable"
    assert row.verdict is None and row.met is None
    assert f"after {spec.config.max_attempts} attempts" in row.error
    assert words in row.error
    if facet:
        assert f"({facet})" in row.error
    failed = [a for a in row.attempts if a.facet == facet]
    assert [a.attempt for a in failed] == list(range(spec.config.max_attempts))
    assert {a.error_kind for a in failed} == {error_kind}
    assert all(words in a.error for a in failed)
    assert script.calls[facet] == spec.config.max_attempts


@pytest.mark.parametrize(("judge_name", "flavour", "kind"), FAILURE_CASES)
def test_a_failure_then_a_good_reply_is_ok(judge_name: str, flavour: str, kind: str) -> None:
    spec = CATALOG[judge_name]
    facet = FAILING_FACET[judge_name]
    script = Script(
        judge_name, {facet: [bad_reply(judge_name, kind), (json.dumps(GOOD[judge_name]), False)]}
    )
    row, client = run(judge_name, flavour, script)
    assert row.status == "ok", row.error
    retried = [a for a in row.attempts if a.facet == facet]
    assert [(a.attempt, a.error_kind) for a in retried] == [(0, KINDS[kind][0]), (1, None)]
    assert retried[0].text == bad_reply(judge_name, kind)[0]
    assert row.usage.calls == len(client.calls) == (len(spec.config.facets) or 1) + 1


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_geval_retries_only_the_failing_dimension(flavour: str) -> None:
    bad = bad_reply("geval", "out_of_range")
    script = Script("geval", {"coverage": [bad, bad, (json.dumps(GOOD["geval"]), False)]})
    row, client = run("geval", flavour, script)
    assert row.status == "ok", row.error
    assert script.calls == Counter(faithfulness=1, coverage=3, coherence=1, fluency=1)
    assert len(client.calls) == row.usage.calls == 6
    assert [(a.facet, a.attempt, a.error_kind) for a in row.attempts] == [
        ("faithfulness", 0, None),
        ("coverage", 0, "invalid"),
        ("coverage", 1, "invalid"),
        ("coverage", 2, None),
        ("coherence", 0, None),
        ("fluency", 0, None),
    ]
    assert row.verdict["coverage"] == 4


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("judge_name", SUBJECTS)
def test_a_client_error_is_a_transport_row(judge_name: str, flavour: str) -> None:
    script = Script(judge_name, {})
    script.outcomes = {f: [ConnectionError("reset by peer")] for f in script.facet_of.values()}
    row, client = run(judge_name, flavour, script)
    assert row.status == "transport"
    assert row.error == "ConnectionError: reset by peer"
    assert len(client.calls) == 1, "a transport error is not retried by the runner"
    assert row.verdict is None


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_fatal_error_is_raised(flavour: str) -> None:
    class Miss(Exception):
        pass

    script = Script("relevance", {None: [Miss("no recorded response")]})
    with pytest.raises(Miss, match="no recorded response"):
        run("relevance", flavour, script, is_fatal=lambda error: isinstance(error, Miss))


def test_a_fatal_check_does_not_catch_other_errors() -> None:
    script = Script("relevance", {None: [KeyError("other")]})
    row, _ = run("relevance", "openai", script, is_fatal=lambda error: False)
    assert row.status == "transport"


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_relevance_missing_criterion_is_incomplete(flavour: str) -> None:
    only_one = {"criteria": GOOD["relevance"]["criteria"][:1]}
    row, _ = run("relevance", flavour, Script("relevance", {None: [(json.dumps(only_one), False)]}))
    assert row.status == "incomplete"
    assert row.met is False
    assert row.verdict["missing"] == ["distributed RL"]
    assert "distributed RL" in row.error


def test_an_unmet_expectation_is_an_ok_row_with_met_false() -> None:
    reply = {**GOOD["geval"], "score": 1}
    spec = CATALOG["geval"]
    subject = Subject(
        "GE-91",
        "coverage",
        False,
        SUBJECTS["geval"].inputs,
        (Expectation(field="coverage", op=">=", value=3),),
    )
    script = Script("geval", {f: [(json.dumps(reply), False)] for f in spec.config.facets})
    backend, _ = FLAVOURS["openai"].build(script)
    row = judge(spec, "1.0", subject, Call(backend=backend, price=Price(0, 0), live=False))
    assert (row.status, row.met) == ("ok", False)
    assert row.verdict["overall"] == 1.0


def test_sampling_and_seeds_per_attempt() -> None:
    spec = CATALOG["product_identity"]
    bad = bad_reply("product_identity", "no_json")
    script = Script(
        "product_identity", {None: [bad, (json.dumps(GOOD["product_identity"]), False)]}
    )
    row, client = run("product_identity", "openai", script, draw=2)
    sampling = spec.config.sampling
    item = "PE-90" if sampling.seed_per_item else None
    expected = [seed_for(sampling.seed, 2, attempt, item) for attempt in (0, 1)]
    assert [c["seed"] for c in client.calls] == expected
    assert len({c["seed"] for c in client.calls}) == 2
    assert all(c["temperature"] == sampling.temperature for c in client.calls)
    assert all(c["max_tokens"] == sampling.max_tokens for c in client.calls)
    assert client.calls[0]["messages"][0]["content"] == spec.config.system
    schema = client.calls[0]["response_format"]["json_schema"]
    assert schema["name"] == "product_identity_verdict"
    assert schema["schema"] == strict_schema(
        spec.reply_model(latest(spec), None).model_json_schema()
    )
    assert row.status == "ok"


def test_seed_for() -> None:
    assert seed_for(None, 3, 1) is None
    assert seed_for(10, 0, 0) == 10
    assert seed_for(10, 1, 2) != seed_for(10, 2, 1)


def test_seeds_per_item_are_distinct_stable_and_fit_every_backend() -> None:
    items = [f"PE-{i:02d}" for i in range(1, 62)]
    seeds = {
        (item, draw, attempt): seed_for(1234, draw, attempt, item)
        for item in items for draw in (0, 1, 2, 3, 4, 100) for attempt in (0, 1, 2)
    }  # fmt: skip
    assert len(set(seeds.values())) == len(seeds)  # no two calls share random numbers
    assert all(0 <= seed < 2**31 for seed in seeds.values())  # int32 for llama.cpp
    assert seed_for(1234, 0, 0, "PE-01") == seed_for(1234, 0, 0, "PE-01")
    assert seed_for(1234, 0, 0, "PE-01") != seed_for(1235, 0, 0, "PE-01")
    assert seed_for(None, 0, 0, "PE-01") is None


def test_live_calls_are_charged_and_capped(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=1.0)
    script = Script("geval", {})
    replayed, _ = run("geval", "anthropic", script, ledger=ledger)
    assert replayed.status == "ok"
    assert ledger.totals() == {}, "replayed calls cost nothing"

    backend, client = FLAVOURS["anthropic"].build(script)
    spec = CATALOG["geval"]
    # Output costs 1000 USD per million, input nothing: a call costs 0.03 USD (30 tokens out)
    # and reserves its worst case, max_tokens = 160 -> 0.16 USD. A judgement is 4 calls.
    ledger = Ledger(tmp_path / "capped.jsonl", cap_usd=0.30)
    call = Call(backend=backend, price=Price(0.0, 1000.0), live=True, ledger=ledger)
    first = judge(spec, "1.0", SUBJECTS["geval"], call)
    second = judge(spec, "1.0", SUBJECTS["geval"], replace(call, attempts=[]))
    assert first.status == "ok"
    assert second.status == "cost_cap"
    assert "cost cap reached" in second.error
    # A call starts only while spent + 0.16 <= 0.30: calls 1-5 (0.12 spent before the 5th).
    assert len(client.calls) == 5 == ledger.totals()["anthropic:claude-sonnet-4-6"].calls
    assert ledger.spent_usd() == pytest.approx(0.15) and ledger.spent_usd() <= 0.30
    assert ledger.held_usd() == 0.0
    assert first.usage.cost_usd == pytest.approx(0.12)


def test_a_zero_cap_stops_before_any_call(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=0.0)
    backend, client = FLAVOURS["openai"].build(Script("relevance", {}))
    call = Call(backend=backend, price=Price(1.0, 1.0), live=True, ledger=ledger)
    row = judge(CATALOG["relevance"], "1.0", SUBJECTS["relevance"], call)
    assert row.status == "cost_cap"
    assert client.calls == []
