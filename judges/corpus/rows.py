"""The corpus rows, one JSONL file each, and the loader that checks them against each other.

    items.jsonl       {"id", "subset"?, "inputs"}                      every item, once
    outputs.jsonl     {"system", "item", "output"}                     optional: what was judged
    judgements.jsonl  {"system", "item", "judge", "run"?, "score", "flagged"?}  or "error"
    labels.jsonl      {"system", "item", "score"}                      optional: gold on a subset
    published.jsonl   {"judge", "system", "statistic", "value", "as"?} optional: published figures

Nothing is dropped: a judgement without a score is an error row, counted in the report; a
row naming an unknown item, system or judge, a score off the scale or a string for a number
is refused with the file, the line and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
)

from judges.corpus.manifest import CorpusError, CorpusManifest, load_manifest
from judges.storage.files import json_lines

ITEMS_FILE = "items.jsonl"
OUTPUTS_FILE = "outputs.jsonl"
JUDGEMENTS_FILE = "judgements.jsonl"
LABELS_FILE = "labels.jsonl"
PUBLISHED_FILE = "published.jsonl"

# What a published row may state, computed from the judgements by `published.py`.
Statistic = Literal[
    "mean", "standard_error", "n_total", "n_above", "n_below", "n_at", "discrete_mean"
]
_NAME = Field(min_length=1, max_length=200)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


R = TypeVar("R", bound=_Row)


class CorpusItem(_Row):
    id: str = _NAME
    subset: str = ""
    inputs: dict[str, Any] = {}


class SystemOutput(_Row):
    system: str = _NAME
    item: str = _NAME
    output: str


class Judgement(_Row):
    system: str = _NAME
    item: str = _NAME
    judge: str = _NAME
    run: StrictInt = Field(default=0, ge=0)
    score: StrictFloat | StrictInt | None = None
    error: str | None = None
    raw: str | None = None
    flagged: StrictBool | None = None  # the judge's own flag (a product mix-up), when it has one


class Label(_Row):
    system: str = _NAME
    item: str = _NAME
    score: StrictFloat | StrictInt


class PublishedFigure(_Row):
    judge: str = _NAME
    system: str = _NAME
    statistic: Statistic
    # A figure a release printed: finite (JSON's NaN and Infinity are no published value).
    value: StrictFloat | StrictInt = Field(allow_inf_nan=False)
    published_as: str = ""  # the release's own name for it (win_rate, n_wins, ...)


@dataclass(frozen=True)
class SummarisedJudgements:
    """The judgements as the columnar store summarised them (store.py, engine.py), in place
    of one object per row: their counts, the systems in first-seen order, and the
    (judge, run) -> table.ScoreMatrix the statistics take."""

    judgements: int
    errors: int
    systems: tuple[str, ...]
    matrices: Mapping[tuple[str, int], Any]


@dataclass(frozen=True)
class Corpus:
    folder: Path
    manifest: CorpusManifest
    items: tuple[CorpusItem, ...]
    outputs: tuple[SystemOutput, ...]
    judgements: tuple[Judgement, ...]  # empty when `summarised` holds them
    labels: tuple[Label, ...]
    published: tuple[PublishedFigure, ...]
    summarised: SummarisedJudgements | None = None

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system judged or labelled, in first-seen order."""
        if self.summarised is not None:
            seen = dict.fromkeys(self.summarised.systems)
        else:
            seen = dict.fromkeys(j.system for j in self.judgements)
        seen.update(dict.fromkeys(label.system for label in self.labels))
        return tuple(seen)

    @property
    def judgement_count(self) -> int:
        if self.summarised is not None:
            return self.summarised.judgements
        return len(self.judgements)

    @property
    def error_count(self) -> int:
        """Judgements without a score (error rows)."""
        if self.summarised is not None:
            return self.summarised.errors
        return sum(j.score is None for j in self.judgements)


def _rows(path: Path, model: type[R]) -> Iterator[tuple[int, R]]:
    if not path.is_file():
        return
    for line, value in json_lines(path, CorpusError):
        try:
            yield line, model.model_validate(value)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(row)'}: {e['msg']}"
                for e in error.errors()
            )
            raise CorpusError(f"{path}:{line}: {problems}") from None


def _score_problem(score: float, manifest: CorpusManifest) -> str | None:
    if not math.isfinite(score):
        return f"score {score} is not a finite number"
    if not manifest.scale.contains(score):
        scale = manifest.scale
        return (
            f"score {score} is off the scale [{scale.low:g}, {scale.high:g}] (corpus.toml [scale])"
        )
    return None


def load_corpus(folder: Path, *, judged: bool = True, judgements: bool = True) -> Corpus:
    """Read and cross-check a corpus folder; the first problem raises `CorpusError`.
    `judged=False`: a corpus about to be judged may have no judgements yet.
    `judgements=False`: leave judgements.jsonl to the columnar store (store.py)."""
    manifest = load_manifest(folder)
    items: dict[str, CorpusItem] = {}
    for line, item in _rows(folder / ITEMS_FILE, CorpusItem):
        if item.id in items:
            raise CorpusError(f"{folder / ITEMS_FILE}:{line}: item {item.id!r} given twice")
        items[item.id] = item
    if not items:
        raise CorpusError(f"{folder / ITEMS_FILE}: no items; a corpus lists every item it judges")

    def known_item(path: Path, line: int, item: str) -> None:
        if item not in items:
            raise CorpusError(f"{path}:{line}: item {item!r} is not in {ITEMS_FILE}; add it there")

    outputs = []
    answered: dict[tuple[str, str], int] = {}
    for line, output in _rows(folder / OUTPUTS_FILE, SystemOutput):
        known_item(folder / OUTPUTS_FILE, line, output.item)
        if (output.system, output.item) in answered:
            raise CorpusError(
                f"{folder / OUTPUTS_FILE}:{line}: {output.system} on {output.item} already has "
                f"an output at line {answered[output.system, output.item]}; keep one"
            )
        answered[output.system, output.item] = line
        outputs.append(output)

    path = folder / JUDGEMENTS_FILE
    rows: list[Judgement] = []
    seen: dict[tuple[str, str, str, int], int] = {}
    for line, row in _rows(path, Judgement) if judgements else ():
        known_item(path, line, row.item)
        if row.judge not in manifest.judges:
            raise CorpusError(
                f"{path}:{line}: judge {row.judge!r} is not in corpus.toml; add "
                f"[judges.{row.judge!r}] there (known: {', '.join(manifest.judges)})"
            )
        if (row.score is None) == (row.error is None):
            raise CorpusError(
                f"{path}:{line}: a judgement has a score or an error, exactly one of them"
            )
        if row.score is not None and (problem := _score_problem(float(row.score), manifest)):
            raise CorpusError(f"{path}:{line}: {problem}")
        key = (row.system, row.item, row.judge, row.run)
        if key in seen:
            raise CorpusError(
                f"{path}:{line}: {row.system} on {row.item} by {row.judge} run {row.run} "
                f"already judged at line {seen[key]}; give a repeat its own run number"
            )
        seen[key] = line
        rows.append(row)
    if judged and judgements and not rows:
        judge_it = any(entry.judged for entry in manifest.judges.values())
        raise CorpusError(
            f"{path}: no judgements; nothing to summarise"
            + (f" (judge it first: python -m judges corpus judge {manifest.name})"
               if judge_it else "")
        )  # fmt: skip

    labels: list[Label] = []
    labelled: set[tuple[str, str]] = set()
    for line, label in _rows(folder / LABELS_FILE, Label):
        known_item(folder / LABELS_FILE, line, label.item)
        if problem := _score_problem(float(label.score), manifest):
            raise CorpusError(f"{folder / LABELS_FILE}:{line}: {problem}")
        if (label.system, label.item) in labelled:
            raise CorpusError(
                f"{folder / LABELS_FILE}:{line}: {label.system} on {label.item} labelled twice"
            )
        labelled.add((label.system, label.item))
        labels.append(label)

    published = []
    for line, figure in _rows(folder / PUBLISHED_FILE, PublishedFigure):
        if figure.judge not in manifest.judges:
            raise CorpusError(
                f"{folder / PUBLISHED_FILE}:{line}: judge {figure.judge!r} is not in corpus.toml"
            )
        published.append(figure)
    return Corpus(
        folder, manifest, tuple(items.values()), tuple(outputs), tuple(rows),
        tuple(labels), tuple(published),
    )  # fmt: skip
