"""Replies are validated strictly; `coerce = true` converts and records every conversion."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from pydantic import BaseModel

from judges.builtin import geval, product_identity, relevance
from judges.core.parsing import InvalidReply, parse_reply, parse_reply_coercing
from judges.core.spec import JudgeSpec
from judges.reports.sections.coercions import coercion_line
from judges.verdicts.figures import coercions
from tests._scripted_judge import CATALOG, GOOD, Script, run

# JSON spelling -> what lax validation makes of it.
INTEGERS = {'"3"': 3, '" 2 "': 2, '"2.0"': 2, "1e0": 1, "true": 1}
TRUTHY = {'"yes"': True, '"on"': True, '"t"': True, "1": True}
FALSY = {'"no"': False, "0": False}
PRODUCT_MODELS = {v: product_identity.reply_model(v) for v in ("0.2", "0.3", "0.3.1")}


def reply_text(judge_name: str, field: str, json_value: str) -> str:
    """A good reply of the judge with one field spelled as `json_value`."""
    good = copy.deepcopy(GOOD[judge_name])
    target = good["criteria"][0] if judge_name == "relevance" else good
    target[field] = "__VALUE__"
    return json.dumps(good).replace('"__VALUE__"', json_value)


INTEGER_CASES = [
    pytest.param("product_identity", model, field, text, value, id=f"pi-{v}-{field}-{text}")
    for v, model in PRODUCT_MODELS.items()
    for field in ("factual_accuracy", "completeness", "causal_reasoning")
    for text, value in INTEGERS.items()
] + [
    pytest.param("geval", geval.DimensionReply, "score", text, value, id=f"geval-score-{text}")
    for text, value in INTEGERS.items()
]
FLAG_CASES = [
    pytest.param(model, text, value, id=f"pi-{v}-{text}")
    for v, model in PRODUCT_MODELS.items()
    if v != "0.2"
    for text, value in (TRUTHY | FALSY).items()
]


@pytest.mark.parametrize(("judge_name", "model", "field", "text", "value"), INTEGER_CASES)
def test_an_integer_is_a_json_integer(
    judge_name: str, model: type[BaseModel], field: str, text: str, value: int
) -> None:
    reply = reply_text(judge_name, field, text)
    with pytest.raises(InvalidReply) as caught:
        parse_reply(reply, model)
    assert caught.value.problems[0].startswith(f"{field}: wrong type")
    parsed, coerced = parse_reply_coercing(reply, model)
    assert getattr(parsed, field) == value and type(getattr(parsed, field)) is int
    assert coerced == [f"{field}: {json.loads(text)!r} -> {value!r}"]


@pytest.mark.parametrize(("model", "text", "value"), FLAG_CASES)
def test_a_flag_is_a_json_boolean(model: type[BaseModel], text: str, value: bool) -> None:
    reply = reply_text("product_identity", "product_identity_match", text)
    with pytest.raises(InvalidReply) as caught:
        parse_reply(reply, model)
    assert caught.value.problems[0].startswith("product_identity_match: wrong type")
    parsed, coerced = parse_reply_coercing(reply, model)
    assert parsed.product_identity_match is value  # type: ignore[attr-defined]
    assert coerced == [f"product_identity_match: {json.loads(text)!r} -> {value!r}"]


@pytest.mark.parametrize("text", [*INTEGERS, *TRUTHY, *FALSY])
@pytest.mark.parametrize("field", ["name", "relevance", "evidence"])
def test_relevance_labels_and_names_are_never_coerced(field: str, text: str) -> None:
    reply = reply_text("relevance", field, text)
    if json.loads(text).__class__ is str and field != "relevance":
        # A string is a string: "yes" is a valid name or evidence, in both modes.
        assert parse_reply_coercing(reply, relevance.RelevanceReply)[1] == []
        return
    for parse in (parse_reply, parse_reply_coercing):
        with pytest.raises(InvalidReply) as caught:
            parse(reply, relevance.RelevanceReply)
        assert caught.value.problems[0].startswith(f"criteria.0.{field}: ")


def test_a_good_reply_has_no_coercions() -> None:
    for judge_name, model in (("geval", geval.DimensionReply), ("relevance", None)):
        model = model or relevance.RelevanceReply
        assert parse_reply_coercing(json.dumps(GOOD[judge_name]), model)[1] == []


# --------------------------------------------------------------------------- on the row


def lenient(spec: JudgeSpec) -> JudgeSpec:
    return dataclasses.replace(spec, config=spec.config.model_copy(update={"coerce": True}))


def judged(judge_name: str, reply: str, *, coerce: bool, facet: str | None = None) -> Any:
    script = Script(judge_name, {facet: [(reply, False)]})
    spec = CATALOG[judge_name]
    CATALOG[judge_name] = lenient(spec) if coerce else spec
    try:
        row, _ = run(judge_name, "openai", script)
    finally:
        CATALOG[judge_name] = spec
    return row


def test_strict_by_default_a_coercible_reply_is_an_error_row() -> None:
    row = judged("product_identity", reply_text("product_identity", "factual_accuracy", '"3"'),
                 coerce=False)  # fmt: skip
    assert row.status == "unparseable"
    assert "factual_accuracy: wrong type" in row.error
    assert row.coerced == [] and "coerced" not in row.dump()


def test_lenient_rows_record_each_coercion_and_the_cap_still_applies() -> None:
    text = reply_text("product_identity", "product_identity_match", '"no"')
    row = judged("product_identity", text, coerce=True)
    assert row.status == "ok"
    assert row.coerced == ["product_identity_match: 'no' -> False"]
    assert row.dump()["coerced"] == row.coerced
    assert row.verdict["factual_accuracy"] == 1 and row.verdict["capped"] is True


def test_lenient_coercions_of_a_faceted_judge_name_the_facet() -> None:
    row = judged("geval", reply_text("geval", "score", '"4"'), coerce=True, facet="coverage")
    assert row.status == "ok"
    assert row.coerced == ["coverage.score: '4' -> 4"]
    assert row.verdict["coverage"] == 4


# --------------------------------------------------------------------------- in the report


def test_the_report_line_counts_coercions_per_field() -> None:
    strict = judged("geval", json.dumps(GOOD["geval"]), coerce=True)
    drifted = judged("geval", reply_text("geval", "score", '"4"'), coerce=True, facet="coverage")
    line = coercion_line(coercions([strict, drifted, drifted]), lenient=True)
    assert line is not None
    assert line.startswith("Lenient parsing (coerce = true): 2/3 judgements needed a conversion")
    assert "(coverage.score 2)" in line
    assert coercion_line(coercions([strict]), lenient=True) == (
        "Lenient parsing (coerce = true): no reply needed a conversion (n=1)."
    )
    assert coercion_line(coercions([strict]), lenient=False) is None
