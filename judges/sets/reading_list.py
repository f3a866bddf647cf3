"""The survey reading list: an expert's graded candidates for one query, judged as items.

`planted_sets/<judge>/reading_list.json` (named by `reading_list` in the set's `set.toml`)
holds the query, its weighted criteria and the candidates with the expert's grade (4
essential, 3 relevant, 2 tool or method, 1 background, 0 excluded: a hard negative) and
citation count. Each candidate becomes a planted item `RD-<nn>` of the run `reading_list`
(its position in the file, its candidate id as slug), so it is recorded, replayed and
reported like every other judgement; the run is then scored as a ranking, not per item.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from judges.core.results import Expectation
from judges.sets.items import PlantedItem, PlantedSetError, Provenance
from judges.storage.files import read_json

TIERS = {4: "essential", 3: "relevant", 2: "method", 1: "background", 0: "hard_negative"}
RUN = "reading_list"


class Candidate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=32)
    title: str = Field(min_length=1)
    text: str = ""  # an abstract, when the list has one; titles alone are judged otherwise
    label: StrictInt = Field(ge=0, le=4)
    citations: StrictInt = Field(ge=0)


class ReadingList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    topic: str = ""
    query: str = Field(min_length=1)
    criteria: tuple[dict[str, Any], ...] = Field(min_length=1)
    candidates: tuple[Candidate, ...] = Field(min_length=1)

    @field_validator("candidates")
    @classmethod
    def _distinct_ids(cls, candidates: tuple[Candidate, ...]) -> tuple[Candidate, ...]:
        seen: set[str] = set()
        for candidate in candidates:
            if candidate.id in seen:
                raise ValueError(f"candidate id {candidate.id!r} appears twice; ids are unique")
            seen.add(candidate.id)
        return candidates

    @property
    def labels(self) -> dict[str, int]:
        return {c.id: c.label for c in self.candidates}


def load_reading_list(path: Path) -> ReadingList:
    """The reading list, validated; a bad file names itself, the field and the fix."""
    raw = read_json(path, PlantedSetError)
    try:
        return ReadingList.model_validate(raw)
    except ValidationError as error:
        problems = [
            f"field {'.'.join(str(p) for p in e['loc']) or '<file>'!r}: {e['msg']}"
            for e in error.errors(include_url=False)
        ]
        raise PlantedSetError(
            f"{path}: " + "; ".join(problems) + " (candidates need id, title, label 0-4 and "
            "citations; criteria need name and weight)"
        ) from None


def reading_list_items(reading_list: ReadingList, judge: str) -> list[PlantedItem]:
    """One planted item per candidate. The expectation is only that the judge answers:
    the expert's grade is scored over the whole ranking, never against one verdict."""
    width = max(2, len(str(len(reading_list.candidates))))
    items = []
    for position, candidate in enumerate(reading_list.candidates, start=1):
        items.append(
            PlantedItem(
                id=f"RD-{position:0{width}d}",
                slug=re.sub(r"[^a-z0-9]+", "-", candidate.id).strip("-")[:40],
                judge=judge,
                category=TIERS[candidate.label],
                inputs={
                    "query": reading_list.query,
                    "criteria": list(reading_list.criteria),
                    "document": {
                        "id": candidate.id,
                        "title": candidate.title,
                        "text": candidate.text,
                    },
                },
                expect=(Expectation(field="status", op="==", value="ok"),),
                provenance=Provenance(
                    source="hand",
                    note=f"reading-list candidate {candidate.id}, expert grade "
                    f"{candidate.label}, {candidate.citations} citations",
                ),
            )
        )
    return items
