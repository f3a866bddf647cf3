"""Verdict model of the product-identity judge (prompt versions 0.2, 0.3, 0.3.1, ...).

From 0.3 on the judge names both products and sets `product_identity_match`; a `False`
flag caps `factual_accuracy` at 1 in `JudgeScore` itself, whatever the judge wrote. A
pre-0.3 result has the flag `None`, which is never read as `True`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from judges.core.rules import cap_factual_accuracy
from judges.core.spec import version_key

Score = Field(ge=0, le=3)


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str = Field(min_length=1)
    reference: str = Field(min_length=1)
    answer: str = Field(min_length=1)

    def prompt_fields(self) -> dict[str, str]:
        return {"question": self.question, "reference": self.reference, "answer": self.answer}


class ReplyV02(BaseModel):
    """What a 0.2 judge returns: scores only."""

    model_config = ConfigDict(extra="ignore")

    factual_accuracy: int = Score
    completeness: int = Score
    causal_reasoning: int = Score
    rationale: str


class ReplyV03(BaseModel):
    """0.3: Step 0 sets the identity flag before scoring."""

    model_config = ConfigDict(extra="ignore")

    product_identity_match: bool
    factual_accuracy: int = Score
    completeness: int = Score
    causal_reasoning: int = Score
    rationale: str


class ReplyV031(BaseModel):
    """0.3.1 on: both products are named before the flag is set."""

    model_config = ConfigDict(extra="ignore")

    reference_product: str
    answer_product: str
    product_identity_match: bool
    factual_accuracy: int = Score
    completeness: int = Score
    causal_reasoning: int = Score
    rationale: str


def reply_model(prompt_version: str, facet: str | None = None) -> type[BaseModel]:
    if version_key(prompt_version) < (0, 3):
        return ReplyV02
    if version_key(prompt_version) < (0, 3, 1):
        return ReplyV03
    return ReplyV031


class JudgeScore(BaseModel):
    """A product-identity verdict. The cap is applied here, so no caller can forget it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    factual_accuracy: int = Score
    factual_accuracy_as_judged: int = Score
    completeness: int = Score
    causal_reasoning: int = Score
    product_identity_match: bool | None = None
    reference_product: str | None = None
    answer_product: str | None = None
    judge_prompt_version: str
    rationale: str = ""
    raw: str = Field(description="the judge's reply, byte for byte")

    @model_validator(mode="before")
    @classmethod
    def _keep_what_the_judge_wrote(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # Derived fields: a stored value is recomputed, never trusted.
        data.pop("core_total", None)
        data.pop("capped", None)
        data.setdefault("factual_accuracy_as_judged", data.get("factual_accuracy"))
        return data

    @model_validator(mode="after")
    def _apply_identity_cap(self) -> JudgeScore:
        # After validation: a stored verdict read back with "false" or 3.0 is bool and int
        # here (judge replies themselves are validated strictly, see core/parsing.py).
        capped = cap_factual_accuracy(self.factual_accuracy_as_judged, self.product_identity_match)
        object.__setattr__(self, "factual_accuracy", capped)
        return self

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented mypy gap
    @property
    def core_total(self) -> int:
        return self.factual_accuracy + self.completeness + self.causal_reasoning

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented mypy gap
    @property
    def capped(self) -> bool:
        return self.factual_accuracy != self.factual_accuracy_as_judged


def build_verdict(
    replies: dict[str | None, tuple[BaseModel, str]], inputs: Inputs, prompt_version: str
) -> JudgeScore:
    reply, raw = replies[None]
    return JudgeScore(**reply.model_dump(), judge_prompt_version=prompt_version, raw=raw)
