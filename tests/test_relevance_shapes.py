"""The relevance judge's reply shapes and the request schema each prompt version asks for.

Replies: the positional list (prompt 1.0), asta-bench's list of named entries and an object
keyed by criterion name. Evidence is optional and `relevant_snippet` is the same field.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judges.builtin.relevance import (
    Criterion,
    Inputs,
    RelevanceReply,
    build_verdict,
    request_schema,
)
from judges.calls.backends import (
    AnthropicBackend,
    JudgeRequest,
    LocalBackend,
    ModelRef,
    OpenAIBackend,
    bound_strings,
    without_tuples,
)
from judges.core import rules
from judges.core.parsing import InvalidReply, parse_reply
from judges.core.spec import SpecError, load_catalog, load_judge

LABELS = tuple(rules.RELEVANCE_POINTS)
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789éüñ"
DOCUMENT = {"id": "doc-1", "title": "A paper", "text": "Some text."}

words = st.text(alphabet=_LETTERS, min_size=1, max_size=8)
names = st.lists(words, min_size=1, max_size=4).map(" ".join)


@st.composite
def variant_of(draw: st.DrawFn, name: str) -> str:
    """The same name with case, `_`/space and surrounding white space changed."""
    out = [
        draw(st.sampled_from([" ", "_", "  ", "\t"]))
        if char == " "
        else (char.upper() if draw(st.booleans()) else char.lower())
        for char in name
    ]
    pad = st.text(alphabet=" \t\n", max_size=2)
    return draw(pad) + "".join(out) + draw(pad)


@st.composite
def judged_criteria(draw: st.DrawFn) -> tuple[tuple[Criterion, ...], list[str], list[str]]:
    required = draw(
        st.lists(names, min_size=1, max_size=5, unique_by=rules.normalise_criterion_name)
    )
    weights = st.floats(min_value=0.01, max_value=1.0, allow_nan=False)
    criteria = tuple(Criterion(name=n, weight=draw(weights)) for n in required)
    labels = [draw(st.sampled_from(LABELS)) for _ in criteria]
    quotes = [draw(st.text(max_size=12)) for _ in criteria]
    return criteria, labels, quotes


@st.composite
def entry_body(draw: st.DrawFn, label: str, quote: str) -> dict[str, Any]:
    """`relevance` plus the quote under `evidence`, `relevant_snippet`, both, or neither."""
    style = draw(st.sampled_from(["evidence", "relevant_snippet", "both", "none"]))
    body: dict[str, Any] = {"relevance": label}
    if style in ("evidence", "both"):
        body["evidence"] = quote
    if style in ("relevant_snippet", "both"):
        body["relevant_snippet"] = quote
    return body


def inputs_for(criteria: tuple[Criterion, ...]) -> Inputs:
    return Inputs(query="a query", criteria=criteria, document=DOCUMENT)


def scored(reply: dict[str, Any], inputs: Inputs) -> dict[str, Any]:
    """Parse a reply as the runner does and keep what scoring produced (not the raw text)."""
    text = json.dumps(reply)
    verdict = build_verdict({None: (parse_reply(text, RelevanceReply), text)}, inputs, "1.1")
    out = verdict.model_dump(exclude={"raw", "judgements", "extra"})
    out["labels"] = [(j.criterion, j.relevance, j.points) for j in verdict.judgements]
    return out


@given(data=st.data(), case=judged_criteria())
def test_all_three_shapes_score_identically(data: st.DataObject, case) -> None:
    criteria, labels, quotes = case
    inputs = inputs_for(criteria)
    triples = list(zip(criteria, labels, quotes, strict=True))
    positional = {
        "criteria": [{"name": c.name, "relevance": lab, "evidence": q} for c, lab, q in triples]
    }
    named_entries = [
        {"name": data.draw(variant_of(c.name))} | data.draw(entry_body(lab, q))
        for c, lab, q in triples
    ]
    named = {"criteria": data.draw(st.permutations(named_entries))}
    keyed_pairs = [
        (data.draw(variant_of(c.name)), data.draw(entry_body(lab, q))) for c, lab, q in triples
    ]
    keyed = {"criteria": dict(data.draw(st.permutations(keyed_pairs)))}
    reference = scored(positional, inputs)
    assert reference["status"] == "ok" and reference["missing"] == ()
    assert scored(named, inputs) == reference
    assert scored(keyed, inputs) == reference


@given(case=judged_criteria(), drop=st.integers(min_value=0, max_value=4))
def test_a_criterion_missing_from_the_keyed_object_is_incomplete(case, drop: int) -> None:
    criteria, labels, _ = case
    keep = {c.name: {"relevance": lab} for c, lab in zip(criteria, labels, strict=True)}
    dropped = criteria[drop % len(criteria)].name
    del keep[dropped]
    result = scored({"criteria": keep}, inputs_for(criteria))
    assert result["status"] == "incomplete" and result["missing"] == (dropped,)
    assert result["score"] is None and result["level"] is None


@pytest.mark.parametrize(
    "criteria",
    [
        [{"name": "distributed RL", "relevance": "Highly Relevant"}],
        {"distributed RL": {"relevance": "Highly Relevant", "relevant_snippet": ""}},
    ],
    ids=["named", "keyed"],
)
def test_an_unknown_label_is_an_error_naming_it(criteria: Any) -> None:
    with pytest.raises(InvalidReply) as error:
        parse_reply(json.dumps({"criteria": criteria}), RelevanceReply)
    assert "label outside the allowed set" in str(error.value)
    assert "Highly Relevant" in str(error.value)


@pytest.mark.parametrize(
    ("criteria", "message"),
    [
        ({"a": {"relevance": "Not Relevant", "evidence": "x", "relevant_snippet": "y"}}, "differ"),
        ({"a": "Not Relevant"}, "expected an object"),
        ({"a": {"name": "b", "relevance": "Not Relevant"}}, "key and name must agree"),
        ([{"name": "a", "evidence": ""}], "missing field"),
        ("a: relevant", "wrong type"),
    ],
)
def test_malformed_replies_say_what_is_wrong(criteria: Any, message: str) -> None:
    with pytest.raises(InvalidReply) as error:
        parse_reply(json.dumps({"criteria": criteria}), RelevanceReply)
    assert message in str(error.value)


def test_a_keyed_entry_may_echo_its_name_in_another_spelling() -> None:
    reply = parse_reply(
        '{"criteria": {"Distributed RL": {"name": "distributed_rl", "relevance": "Not Relevant"}}}',
        RelevanceReply,
    )
    assert reply.criteria[0].name == "Distributed RL" and reply.criteria[0].evidence == ""


# --------------------------------------------------------------------------- request schemas

INPUTS = Inputs(
    query="q",
    criteria=(
        Criterion(name="distributed RL", weight=0.5),
        Criterion(name="off-policy correction (V-trace, IS)", weight=0.5),
    ),
    document=DOCUMENT,
)
_ENTRY = {
    "relevance": {"enum": list(LABELS), "type": "string"},
    "evidence": {"type": "string"},
}


def test_the_positional_schema_of_1_0_is_unchanged() -> None:
    """Prompt 1.0's cassettes match on the request body: its schema must stay byte-equal."""
    entry = {"required": ["name", "relevance", "evidence"], "type": "object"}
    expected = {
        "properties": {
            "criteria": {
                "type": "array",
                "prefixItems": [
                    {"properties": {"name": {"const": c.name}} | _ENTRY, **entry}
                    | {"additionalProperties": False}
                    for c in INPUTS.criteria
                ],
                "items": False,
                "minItems": 2,
                "maxItems": 2,
            }
        },
        "required": ["criteria"],
        "type": "object",
        "additionalProperties": False,
    }
    spec = load_catalog()["relevance"]
    assert spec.config.reply_shapes["1.0"] == "positional"
    assert json.dumps(spec.request_schema("1.0", None, INPUTS), sort_keys=True) == json.dumps(
        expected, sort_keys=True
    )


def test_the_keyed_schema_requires_every_criterion_by_name() -> None:
    spec = load_catalog()["relevance"]
    assert spec.config.reply_shapes["1.1"] == "keyed"
    criteria = spec.request_schema("1.1", None, INPUTS)["properties"]["criteria"]
    assert criteria["type"] == "object" and criteria["additionalProperties"] is False
    assert criteria["required"] == [c.name for c in INPUTS.criteria]
    assert set(criteria["properties"]) == set(criteria["required"])
    for entry in criteria["properties"].values():
        assert entry["required"] == ["relevance", "evidence"] and "name" not in entry["properties"]


def test_the_named_schema_offers_only_the_criterion_names() -> None:
    criteria = request_schema("9", None, INPUTS, shape="named")["properties"]["criteria"]
    assert criteria["items"]["properties"]["name"]["enum"] == [c.name for c in INPUTS.criteria]
    assert criteria["minItems"] == criteria["maxItems"] == 2


def test_every_backend_sends_the_declared_shape() -> None:
    """OpenAI and Anthropic get the schema without tuples, a local server with bounded strings:
    the keyed object reaches all three unchanged in shape."""
    schema = load_catalog()["relevance"].request_schema("1.1", None, INPUTS)
    assert without_tuples(schema) == schema
    request = type("R", (), {"schema_name": "relevance_verdict", "schema": schema})()
    hosted = OpenAIBackend._response_format(None, request)  # type: ignore[arg-type]
    assert hosted["json_schema"]["schema"]["properties"]["criteria"]["type"] == "object"
    local = LocalBackend._response_format(None, request)  # type: ignore[arg-type]
    assert local["schema"] == bound_strings(schema)
    evidence = local["schema"]["properties"]["criteria"]["properties"]["distributed RL"]
    assert evidence["properties"]["evidence"]["maxLength"] == 160
    sent: dict[str, Any] = {}

    class Messages:
        def create(self, **kwargs: Any) -> Any:
            sent.update(kwargs)
            usage = SimpleNamespace(input_tokens=1, output_tokens=1)
            text = SimpleNamespace(type="text", text="{}")
            return SimpleNamespace(content=[text], stop_reason="end_turn", usage=usage)

    client = SimpleNamespace(messages=Messages())
    backend = AnthropicBackend(ModelRef.parse("anthropic:claude-x"), client)
    backend.complete(JudgeRequest("s", "p", "relevance_verdict", schema, 10))
    assert sent["output_config"]["format"]["schema"] == schema


def test_an_unknown_shape_names_the_fix() -> None:
    with pytest.raises(ValueError, match=r"reply_shapes in judges/prompts/relevance/judge\.toml"):
        request_schema("1.1", None, INPUTS, shape="tuple")


def test_reply_shapes_must_name_existing_versions(tmp_path: Path) -> None:
    root = tmp_path / "relevance"
    root.mkdir()
    (root / "1.0.md").write_text("{{query}}", encoding="utf-8")
    (root / "judge.toml").write_text(
        'name = "relevance"\nmodule = "judges.builtin.relevance"\n'
        'baseline_model = "local:m"\n[reply_shapes]\n"2.0" = "keyed"\n',
        encoding="utf-8",
    )
    with pytest.raises(SpecError, match=r"reply_shapes names prompt versions \['2.0'\]"):
        load_judge(root)


def test_a_shape_without_a_schema_hook_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "geval"
    (root / "1.0").mkdir(parents=True)
    (root / "1.0" / "a.md").write_text("x", encoding="utf-8")
    (root / "judge.toml").write_text(
        'name = "geval"\nmodule = "judges.builtin.product_identity"\nfacets = ["a"]\n'
        'baseline_model = "local:m"\n[reply_shapes]\n"1.0" = "keyed"\n',
        encoding="utf-8",
    )
    spec = load_judge(root)
    with pytest.raises(SpecError, match="has no request_schema"):
        spec.request_schema("1.0", "a", None)  # type: ignore[arg-type]


NULL_EVIDENCE = [
    {"criteria": [{"name": "a", "relevance": "Somewhat Relevant", "relevant_snippet": None}]},
    {"criteria": [{"name": "a", "relevance": "Somewhat Relevant", "evidence": None}]},
    {"criteria": {"a": {"relevance": "Somewhat Relevant", "evidence": None}}},
    {"criteria": {"a": {"relevance": "Somewhat Relevant", "relevant_snippet": None}}},
    {"criteria": [{"name": "a", "relevance": "Somewhat Relevant", "evidence": None,
                   "relevant_snippet": None}]},
]  # fmt: skip
WRAPPINGS = [
    "{}",
    "Here is my verdict:\n```json\n{}\n```\nI hope this helps.",
    "```\n{}\n```",
    "Sure. {} That is all.",
]


@pytest.mark.parametrize("wrapping", WRAPPINGS)
@pytest.mark.parametrize("reply", NULL_EVIDENCE)
def test_null_evidence_reads_as_no_evidence(reply: dict[str, Any], wrapping: str) -> None:
    text = wrapping.replace("{}", json.dumps(reply, indent=1))
    (entry,) = parse_reply(text, RelevanceReply).criteria
    assert (entry.name, entry.relevance, entry.evidence) == ("a", "Somewhat Relevant", "")


def test_null_beside_a_quote_takes_the_quote_and_two_quotes_must_agree() -> None:
    entry = {"name": "a", "relevance": "Somewhat Relevant", "evidence": None}
    quoted = {"criteria": [entry | {"relevant_snippet": "a quote"}]}
    assert parse_reply(json.dumps(quoted), RelevanceReply).criteria[0].evidence == "a quote"
    differing = {"criteria": [entry | {"evidence": "one", "relevant_snippet": "two"}]}
    with pytest.raises(InvalidReply, match="they differ"):
        parse_reply(json.dumps(differing), RelevanceReply)
