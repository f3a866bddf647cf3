"""The second model's check of a candidate: does it differ from its source row in a way
that matters? A defect should; an invariance candidate should not.

judges/sets/confirmer/confirm/judge.toml, <version>.md   its system message, sampling, prompt

Loaded as a judge and called through the judge runner and cassettes, as the writers are
(judges.sets.writing); this is its verdict module. `python -m judges plant
--confirm-model` asks it about every candidate but the controls and shows a disagreement
in the review.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from judges.core.spec import JudgeSpec, load_judge

CONFIRM_ROOT = Path(__file__).parent / "confirmer" / "confirm"


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    original: str = Field(min_length=1)
    candidate: str = Field(min_length=1)
    context: str

    def prompt_fields(self) -> dict[str, str]:
        return {"original": self.original, "candidate": self.candidate, "context": self.context}


class Checked(BaseModel):
    """The second model's answer: whether the candidate differs in a way that matters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    differs: bool
    reason: str = Field(min_length=1, max_length=400)


def reply_model(prompt_version: str, facet: str | None) -> type[BaseModel]:
    return Checked


def build_verdict(
    replies: dict[str | None, tuple[BaseModel, str]], inputs: Inputs, prompt_version: str
) -> Checked:
    reply, _ = replies[None]
    assert isinstance(reply, Checked)
    return reply


@cache
def confirmer() -> JudgeSpec:
    return load_judge(CONFIRM_ROOT)
