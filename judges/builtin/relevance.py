"""Verdict model of the per-criterion relevance judge (asta-bench's scorer, made whole).

Criterion names are matched as a person reads them (Unicode NFKC, invisible format
characters dropped, case, `_` versus space and white space ignored; hyphens kept), on both
sides: the membership check and the weight look-up go through the same
`match_criteria`. A criterion the judge did not return makes the verdict `incomplete`
(never a silent drop, never a KeyError); an extra one is ignored and reported.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judges.core.parsing import reply_as
from judges.core.rules import (
    RELEVANCE_POINTS,
    check_distinct_criteria,
    match_criteria,
    normalise_criterion_name,
    score_to_level,
    weighted_score,
)

Label = Literal["Perfectly Relevant", "Somewhat Relevant", "Not Relevant"]


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    weight: float = Field(gt=0, le=1)


class Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    title: str
    text: str


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str = Field(min_length=1)
    criteria: tuple[Criterion, ...] = Field(min_length=1)
    document: Document

    @field_validator("criteria")
    @classmethod
    def _names_stay_distinct(cls, criteria: tuple[Criterion, ...]) -> tuple[Criterion, ...]:
        check_distinct_criteria(c.name for c in criteria)
        return criteria

    def prompt_fields(self) -> dict[str, str]:
        criteria = "\n".join(
            f"- {c.name} (weight {c.weight:g}): {c.description}".rstrip(": ") for c in self.criteria
        )
        document = f"{self.document.title}\n\n{self.document.text}"
        return {"query": self.query, "criteria": criteria, "document": document}


class CriterionReply(BaseModel):
    """One criterion's judgement. `relevant_snippet` (asta-bench) and `evidence` are one field,
    and it is optional: a label without a quote is still a label."""

    model_config = ConfigDict(extra="ignore")

    name: str
    relevance: Label
    evidence: str = ""

    @model_validator(mode="before")
    @classmethod
    def _one_evidence_field(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        # null is how most judges say "no quote": the same as leaving the field out.
        given = {
            key: data[key] for key in ("evidence", "relevant_snippet") if data.get(key) is not None
        }
        if len(given) == 2 and given["evidence"] != given["relevant_snippet"]:
            raise ValueError(
                "both 'evidence' and 'relevant_snippet' are given and they differ; they are "
                "the same field, send one"
            )
        rest = {k: v for k, v in data.items() if k not in ("evidence", "relevant_snippet")}
        return rest | ({"evidence": next(iter(given.values()))} if given else {})


class RelevanceReply(BaseModel):
    """Both reply shapes real judges send, as one list of named entries.

    `{"criteria": [{"name": ..., ...}]}` (asta-bench) is taken as it is;
    `{"criteria": {"<name>": {...}}}` becomes the same list, each key the entry's name. Names
    are matched later by `match_criteria`, never by position.
    """

    model_config = ConfigDict(extra="ignore")

    criteria: list[CriterionReply]

    @field_validator("criteria", mode="before")
    @classmethod
    def _keyed_to_named(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        entries = []
        for name, entry in value.items():
            if not isinstance(entry, dict):
                raise ValueError(
                    f"criterion {name!r}: expected an object with 'relevance' and optional "
                    f"'evidence', got {type(entry).__name__}"
                )
            echoed = entry.get("name", name)
            if not isinstance(echoed, str) or normalise_criterion_name(
                echoed
            ) != normalise_criterion_name(name):
                raise ValueError(
                    f"criterion keyed {name!r} names itself {echoed!r}; key and name must agree"
                )
            entries.append(entry | {"name": name})
        return entries


def reply_model(prompt_version: str, facet: str | None = None) -> type[BaseModel]:
    return RelevanceReply


# The shapes a prompt version may ask for, declared per version in judge.toml `reply_shapes`.
REPLY_SHAPES = ("positional", "named", "keyed")
_LABEL_SCHEMA = {"enum": list(get_args(Label)), "type": "string"}


def _entry_schema(name: dict[str, Any] | None) -> dict[str, Any]:
    properties = ({"name": name} if name is not None else {}) | {
        "relevance": dict(_LABEL_SCHEMA),
        "evidence": {"type": "string"},
    }
    return {
        "properties": properties,
        "required": list(properties),
        "type": "object",
        "additionalProperties": False,
    }


def request_schema(
    prompt_version: str, facet: str | None, inputs: Inputs, shape: str = "positional"
) -> dict[str, Any]:
    """The reply schema narrowed to this query, in the shape the prompt version asks for.

    - `positional`: one entry per criterion, in the given order, each name a constant (the
      sturdier alternative asta-bench's seed names). A grammar-constrained judge can then
      neither invent, drop nor repeat a criterion.
    - `named`: asta-bench's list of named entries, any order, names from the criteria.
    - `keyed`: an object keyed by criterion name, every criterion required.

    A judge without a grammar can still send any of them; `match_criteria` handles the names.
    """
    names = [c.name for c in inputs.criteria]
    if shape == "positional":
        criteria: dict[str, Any] = {
            "type": "array",
            "prefixItems": [_entry_schema({"const": name}) for name in names],
            "items": False,
        }
    elif shape == "named":
        criteria = {"type": "array", "items": _entry_schema({"enum": names, "type": "string"})}
    elif shape == "keyed":
        return _envelope(
            {
                "type": "object",
                "properties": {name: _entry_schema(None) for name in names},
                "required": names,
                "additionalProperties": False,
            }
        )
    else:
        raise ValueError(
            f"relevance prompt {prompt_version}: reply shape {shape!r} is not one of "
            f"{', '.join(REPLY_SHAPES)}; fix reply_shapes in judges/prompts/relevance/judge.toml"
        )
    return _envelope(criteria | {"minItems": len(names), "maxItems": len(names)})


def _envelope(criteria: dict[str, Any]) -> dict[str, Any]:
    return {
        "properties": {"criteria": criteria},
        "required": ["criteria"],
        "type": "object",
        "additionalProperties": False,
    }


class CriterionJudgement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion: str
    judged_name: str
    relevance: Label
    points: int
    weight: float
    evidence: str


class RelevanceVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    document_id: str
    judgements: tuple[CriterionJudgement, ...]
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    score: float | None
    level: int | None
    status: Literal["ok", "incomplete"]
    judge_prompt_version: str
    raw: str


def score_judgements(
    criteria: tuple[Criterion, ...], judged: list[CriterionReply]
) -> tuple[list[CriterionJudgement], list[str], list[str], float | None, int | None]:
    """The deterministic half of the judge: match names, weigh, level."""
    matched, missing, extra = match_criteria((c.name for c in criteria), (j.name for j in judged))
    first_by_name: dict[str, CriterionReply] = {}
    for reply in judged:
        first_by_name.setdefault(reply.name, reply)
    judgements = [
        CriterionJudgement(
            criterion=c.name,
            judged_name=matched[c.name],
            relevance=first_by_name[matched[c.name]].relevance,
            points=RELEVANCE_POINTS[first_by_name[matched[c.name]].relevance],
            weight=c.weight,
            evidence=first_by_name[matched[c.name]].evidence,
        )
        for c in criteria
        if c.name in matched
    ]
    if missing:
        return judgements, missing, extra, None, None
    score = round(
        weighted_score(
            {j.criterion: j.weight for j in judgements}, {j.criterion: j.points for j in judgements}
        ),
        6,
    )
    # The level comes from the score as reported, so 0.6700000000000002 is level 1, as 0.67 is.
    return judgements, missing, extra, score, score_to_level(score)


def build_verdict(
    replies: dict[str | None, tuple[BaseModel, str]], inputs: Inputs, prompt_version: str
) -> RelevanceVerdict:
    reply, raw = reply_as(replies, None, RelevanceReply), replies[None][1]
    judgements, missing, extra, score, level = score_judgements(inputs.criteria, reply.criteria)
    return RelevanceVerdict(
        document_id=inputs.document.id,
        judgements=tuple(judgements),
        missing=tuple(missing),
        extra=tuple(extra),
        score=score,
        level=level,
        status="incomplete" if missing else "ok",
        judge_prompt_version=prompt_version,
        raw=raw,
    )
