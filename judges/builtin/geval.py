"""Verdict model of the G-Eval summary judge: four dimensions, one judge call each."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, computed_field

from judges.core.parsing import reply_as

DIMENSIONS = ("faithfulness", "coverage", "coherence", "fluency")


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    transcript: str = Field(min_length=1)
    summary: str = Field(min_length=1)

    def prompt_fields(self) -> dict[str, str]:
        return {"transcript": self.transcript, "summary": self.summary}


class DimensionReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    score: int = Field(ge=1, le=5)
    rationale: str


def reply_model(prompt_version: str, facet: str | None) -> type[BaseModel]:
    if facet not in DIMENSIONS:
        raise ValueError(f"geval has no dimension {facet!r}; it has {DIMENSIONS}")
    return DimensionReply


class GEvalScore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    faithfulness: int = Field(ge=1, le=5)
    coverage: int = Field(ge=1, le=5)
    coherence: int = Field(ge=1, le=5)
    fluency: int = Field(ge=1, le=5)
    rationales: dict[str, str]
    judge_prompt_version: str
    raw: dict[str, str] = Field(description="each dimension's reply, byte for byte")

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented mypy gap
    @property
    def overall(self) -> float:
        return round(sum(getattr(self, d) for d in DIMENSIONS) / len(DIMENSIONS), 4)


def build_verdict(
    replies: dict[str | None, tuple[BaseModel, str]], inputs: Inputs, prompt_version: str
) -> GEvalScore:
    scores = {dim: reply_as(replies, dim, DimensionReply) for dim in DIMENSIONS}
    return GEvalScore(
        **{dim: reply.score for dim, reply in scores.items()},
        rationales={dim: reply.rationale for dim, reply in scores.items()},
        judge_prompt_version=prompt_version,
        raw={dim: replies[dim][1] for dim in DIMENSIONS},
    )
