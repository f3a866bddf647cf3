"""SME labels: the human scores a judge is calibrated against, one JSON object a line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judges.storage.files import json_lines

__all__ = ["SmeLabel", "SmeLabelError", "load_sme_labels"]


class SmeLabelError(ValueError):
    """An SME label file is malformed; the message names file and line."""


class SmeLabel(BaseModel):
    """One human label of one item; score fields (e.g. core_total) are extra fields."""

    model_config = ConfigDict(extra="allow", frozen=True)

    item_id: str = Field(min_length=1)
    labeller: str = Field(min_length=1)
    method: str
    note: str = ""

    @property
    def scores(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def load_sme_labels(path: Path | str) -> list[SmeLabel]:
    """Every label of a JSONL file, one object a line; blank lines are allowed."""
    path = Path(path)
    labels: list[SmeLabel] = []
    seen: dict[tuple[str, str], int] = {}
    for number, raw in json_lines(path, SmeLabelError):
        if not isinstance(raw, dict):
            raise SmeLabelError(
                f"{path}:{number}: expected a JSON object, got {type(raw).__name__}"
            )
        try:
            label = SmeLabel.model_validate(raw)
        except ValidationError as error:
            problems = "; ".join(
                f"field {'.'.join(str(p) for p in e['loc']) or '<label>'!r}: {e['msg']}"
                for e in error.errors(include_url=False)
            )
            raise SmeLabelError(f"{path}:{number}: {problems}") from None
        key = (label.item_id, label.labeller)
        if key in seen:
            raise SmeLabelError(
                f"{path}:{number}: item {label.item_id!r} by {label.labeller!r} already "
                f"labelled on line {seen[key]}"
            )
        seen[key] = number
        labels.append(label)
    return labels
