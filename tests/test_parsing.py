"""Unit tests for judges.core.parsing: from reply text to a reply model or a typed error."""

from __future__ import annotations

import json

import pytest

from judges.builtin.geval import DimensionReply
from judges.builtin.product_identity import ReplyV031
from judges.builtin.relevance import RelevanceReply
from judges.core.parsing import (
    InvalidReply,
    NoJSON,
    ReplyError,
    TruncatedJSON,
    extract_json,
    parse_reply,
)

REPLY = {"score": 4, "rationale": "Covers the roof and the vote."}
REPLY_TEXT = json.dumps(REPLY)
IDENTITY = {
    "reference_product": "barrier reverse convertible",
    "answer_product": "reverse convertible",
    "product_identity_match": False,
    "factual_accuracy": 3,
    "completeness": 2,
    "causal_reasoning": 2,
    "rationale": "Different products.",
}


# --------------------------------------------------------------------------- finding the JSON


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(REPLY_TEXT, id="bare"),
        pytest.param(f"  \n{REPLY_TEXT}\n\n", id="bare-with-white-space"),
        pytest.param(f"Here is my verdict: {REPLY_TEXT} Hope that helps.", id="prose"),
        pytest.param(f"I'd say \"good\".\n{REPLY_TEXT}\nThat's all.", id="prose-with-quotes"),
        pytest.param(f"Sure.\n```json\n{REPLY_TEXT}\n```\nDone.", id="json-fence"),
        pytest.param(f"```\n{REPLY_TEXT}\n```", id="plain-fence"),
        pytest.param(f"```JSON\n{json.dumps(REPLY, indent=2)}\n```", id="upper-fence-indented"),
    ],
)
def test_extract_json_finds_the_object(text: str) -> None:
    assert extract_json(text) == REPLY
    assert parse_reply(text, DimensionReply) == DimensionReply(**REPLY)


def test_braces_and_quotes_inside_strings_do_not_confuse_the_scan() -> None:
    value = {"score": 2, "rationale": 'says "}{" and {nested} then \\ and a } alone'}
    text = f"Verdict follows {json.dumps(value)} end."
    assert extract_json(text) == value


def test_nested_objects_are_one_object() -> None:
    value = {"criteria": [{"name": "a {b}", "relevance": "Not Relevant", "evidence": "}"}]}
    text = f"Prose first. {json.dumps(value)} trailing {{not json}}"
    assert extract_json(text) == value
    assert parse_reply(text, RelevanceReply).criteria[0].name == "a {b}"


def test_the_first_object_wins() -> None:
    text = '{"score": 1, "rationale": "first"} and then {"score": 5, "rationale": "second"}'
    assert extract_json(text)["rationale"] == "first"


def test_a_list_is_not_an_object_but_its_first_object_is_found() -> None:
    assert extract_json(f"[{REPLY_TEXT}]") == REPLY


def test_unicode_survives() -> None:
    value = {"score": 5, "rationale": "Nestlé, Zürich — 7 % p.a. ✓"}
    assert extract_json(json.dumps(value, ensure_ascii=False)) == value


# --------------------------------------------------------------------------- truncated / none

TRUNCATED = REPLY_TEXT[: len(REPLY_TEXT) // 2]


@pytest.mark.parametrize("truncated", [True, False], ids=["finish-length", "no-finish-reason"])
def test_truncated_object(truncated: bool) -> None:
    with pytest.raises(TruncatedJSON, match="before its JSON object closes") as caught:
        extract_json(f"Here you go: {TRUNCATED}", truncated=truncated)
    assert caught.value.kind == "truncated"
    assert ("finish reason length" in str(caught.value)) is truncated
    with pytest.raises(TruncatedJSON):
        parse_reply(TRUNCATED, DimensionReply, truncated=truncated)


def test_truncated_inside_a_fence() -> None:
    with pytest.raises(TruncatedJSON):
        extract_json(f"```json\n{TRUNCATED}", truncated=True)


def test_truncation_flag_without_any_brace_is_still_truncated() -> None:
    with pytest.raises(TruncatedJSON):
        extract_json("The summary is faithful because", truncated=True)


def test_a_complete_object_wins_over_the_truncation_flag() -> None:
    assert extract_json(REPLY_TEXT, truncated=True) == REPLY


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "I cannot judge this summary.",
        "score: 4, rationale: fine",
        "[1, 2, 3]",
        "use {braces} carefully",
    ],
)
def test_no_json(text: str) -> None:
    with pytest.raises(NoJSON, match="no JSON object") as caught:
        extract_json(text)
    assert caught.value.kind == "no_json"
    assert isinstance(caught.value, ReplyError)


def test_no_json_message_previews_the_reply() -> None:
    with pytest.raises(NoJSON) as caught:
        extract_json("word " * 100)
    assert "word word" in str(caught.value)
    assert len(str(caught.value)) < 200


# --------------------------------------------------------------------------- schema problems


def problems(text: str, model) -> list[str]:
    with pytest.raises(InvalidReply) as caught:
        parse_reply(text, model)
    assert caught.value.kind == "invalid"
    assert model.__name__ in str(caught.value)
    for problem in caught.value.problems:
        assert problem in str(caught.value)
    return caught.value.problems


@pytest.mark.parametrize(
    ("change", "field", "kind"),
    [
        pytest.param({"score": "four"}, "score", "wrong type", id="string-for-int"),
        pytest.param({"score": 3.5}, "score", "wrong type", id="fraction-for-int"),
        pytest.param({"score": [4]}, "score", "wrong type", id="list-for-int"),
        pytest.param({"rationale": 7}, "rationale", "wrong type", id="int-for-string"),
        pytest.param({"score": 0}, "score", "out of range", id="below"),
        pytest.param({"score": 6}, "score", "out of range", id="above"),
        pytest.param({"rationale": None}, "rationale", "wrong type", id="null-string"),
    ],
)
def test_invalid_dimension_reply(change: dict, field: str, kind: str) -> None:
    found = problems(json.dumps({**REPLY, **change}), DimensionReply)
    assert len(found) == 1
    assert found[0].startswith(f"{field}: {kind} (")


def test_missing_field() -> None:
    (found,) = problems(json.dumps({"score": 3}), DimensionReply)
    assert found.startswith("rationale: missing field")


def test_every_problem_is_listed() -> None:
    text = json.dumps(
        {
            **IDENTITY,
            "factual_accuracy": 9,
            "product_identity_match": "perhaps",
            "completeness": "most",
        }
        | {"rationale": None}
    )
    text = text.replace('"causal_reasoning": 2, ', "")
    found = problems(text, ReplyV031)
    by_field = {p.split(":", 1)[0]: p for p in found}
    assert by_field["factual_accuracy"].startswith("factual_accuracy: out of range")
    assert by_field["product_identity_match"].startswith("product_identity_match: wrong type")
    assert by_field["completeness"].startswith("completeness: wrong type")
    assert by_field["causal_reasoning"].startswith("causal_reasoning: missing field")
    assert by_field["rationale"].startswith("rationale: wrong type")


def test_label_outside_the_allowed_set() -> None:
    reply = {
        "criteria": [
            {"name": "decoupled workers", "relevance": "Perfectly Relevant", "evidence": ""},
            {"name": "distributed RL", "relevance": "Highly Relevant", "evidence": ""},
        ]
    }
    (found,) = problems(json.dumps(reply), RelevanceReply)
    assert found.startswith("criteria.1.relevance: label outside the allowed set")
    assert "Highly Relevant" in found


def test_nested_missing_field_names_its_path() -> None:
    # The evidence is optional (issue 12); the label is not.
    reply = {"criteria": [{"name": "a", "evidence": "quoted"}]}
    (found,) = problems(json.dumps(reply), RelevanceReply)
    assert found.startswith("criteria.0.relevance: missing field")


def test_wrong_container_type() -> None:
    (found,) = problems(json.dumps({"criteria": "all relevant"}), RelevanceReply)
    assert found.startswith("criteria: wrong type")


def test_an_empty_object_misses_every_field() -> None:
    found = problems("{}", DimensionReply)
    assert {p.split(":")[0] for p in found} == {"score", "rationale"}
    assert all(": missing field" in p for p in found)


def test_extra_fields_are_ignored() -> None:
    reply = parse_reply(json.dumps({**REPLY, "confidence": "high"}), DimensionReply)
    assert reply.score == 4


def test_invalid_reply_inside_prose_is_still_invalid_not_no_json() -> None:
    with pytest.raises(InvalidReply):
        parse_reply(f"Verdict: {json.dumps({**REPLY, 'score': 11})}", DimensionReply)


def test_a_long_bad_value_is_previewed_not_dumped() -> None:
    (found,) = problems(json.dumps({**REPLY, "score": "x" * 500}), DimensionReply)
    assert len(found) < 250
