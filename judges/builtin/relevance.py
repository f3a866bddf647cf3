"""Verdict model of the per-criterion relevance judge (asta-bench's scorer, made whole).

Criterion names are matched as a person reads them (Unicode NFKC, invisible format
characters dropped, case, `_` versus space and white space ignored; hyphens kept), on both
sides: the membership check and the weight look-up go through the same
`match_criteria`. A criterion the judge did not return makes the verdict `incomplete`
(never a silent drop, never a KeyError); an extra one is ignored and reported.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judges.calls.backends import strict_schema
from judges.core.rules import (
    RELEVANCE_POINTS,
    check_distinct_criteria,
    match_criteria,
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
    model_config = ConfigDict(extra="ignore")

    name: str
    relevance: Label
    evidence: str


class RelevanceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    criteria: list[CriterionReply]


def reply_model(prompt_version: str, facet: str | None = None) -> type[BaseModel]:
    return RelevanceReply


def request_schema(prompt_version: str, facet: str | None, inputs: Inputs) -> dict[str, Any]:
    """The reply schema narrowed to this query: one entry per criterion, in the given order.

    asta-bench's seed names the sturdier alternative to matching echoed names: a list
    indexed by the input order. A grammar-constrained judge can then neither invent, drop
    nor repeat a criterion; a judge without a grammar still can, and `match_criteria`
    handles whatever names it sends.
    """
    schema = strict_schema(RelevanceReply.model_json_schema())
    criteria = schema["properties"]["criteria"]
    entry = criteria.pop("items")
    criteria["prefixItems"] = [
        entry | {"properties": entry["properties"] | {"name": {"const": c.name}}}
        for c in inputs.criteria
    ]
    criteria["items"] = False
    criteria["minItems"] = criteria["maxItems"] = len(inputs.criteria)
    return schema


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
    reply, raw = replies[None]
    judgements, missing, extra, score, level = score_judgements(
        inputs.criteria,
        reply.criteria,  # type: ignore[attr-defined]
    )
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
