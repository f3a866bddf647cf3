"""A planted item: the inputs a judge sees, what it should conclude, and where it came from.

Kept apart from the set loader so that every kind of item source (the planted file, the
reading list, probes) builds items without importing the loader that gathers them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judges.core.results import Expectation
from judges.core.runner import Subject


class PlantedSetError(ValueError):
    """A planted-set file is malformed; the message names file, line, field and the fix."""


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["hand", "generated", "imported"]
    clean_item: str | None = None
    perturbation: str | None = None
    seed: int | None = None
    # Imported items: the release (name and version), its set and the item's index there.
    release: str | None = None
    release_set: str | None = None
    release_index: int | None = None
    # Reviewed candidates (`python -m judges plant`): the candidate, its generator, the real
    # row it came from, who accepted it and when.
    candidate: str | None = None
    generator: str | None = None
    source_row: str | None = None
    reviewer: str | None = None
    reviewed: str | None = None  # the review's date, YYYY-MM-DD
    # A model-written candidate: the model that wrote it, its prompt's version and hash.
    model: str | None = None
    prompt_version: str | None = None
    prompt_hash: str | None = None
    note: str = ""


class PlantedItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Z]{2,4}-\d{2,3}$")
    slug: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=40)
    judge: str
    category: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    control: bool = False
    inputs: dict[str, Any]
    expect: tuple[Expectation, ...] = Field(min_length=1)
    provenance: Provenance

    @property
    def test_id(self) -> str:
        return f"{self.id}-{self.slug}"

    def subject(self) -> Subject:
        return Subject(self.id, self.category, self.control, self.inputs, self.expect)


class ReplyFixture(PlantedItem):
    """A planted item carrying the judge's raw replies, in call order (`replies.jsonl`): a
    callable judge's own code runs on them with no model call. It tests the team's parsing
    and scoring, not the model: it feeds no fitness or regression statistic."""

    replies: tuple[str, ...] = Field(min_length=1)
