"""The finale's inputs: its TOML configuration, the qualifier runs and the episodes.

Everything here is read once and validated; a bad file raises `FinaleError` naming the file,
the line and what it needs.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judges.calls.backends import ModelRef
from judges.core.naming import NAME_LIMIT
from judges.storage.files import (
    DuplicateKey,
    duplicate_key_message,
    jsonl_lines,
    read_json,
    strict_json_loads,
)

__all__ = [
    "CROSS",
    "PRIMARY",
    "ROLES",
    "Candidate",
    "Episode",
    "FinaleConfig",
    "FinaleError",
    "Stratum",
    "load_candidates",
    "load_config",
    "load_episodes",
]

PRIMARY = "primary"
CROSS = "cross"
ROLES = (PRIMARY, CROSS)
_EPISODE_KEYS = ("episode_id", "transcript")
_PREDICTION_KEYS = ("episode_id", "summary")


class FinaleError(ValueError):
    """The finale cannot run as configured; the message names the file or the setting."""


# --------------------------------------------------------------------------- configuration


class Stratum(BaseModel):
    """A deployment tier: a run joins it when any of `match` occurs in the run's name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    match: tuple[str, ...] = Field(min_length=1)

    @field_validator("match")
    @classmethod
    def _no_empty_substring(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not part for part in value):
            raise ValueError("an empty substring would match every run")
        return value


class FinaleConfig(BaseModel):
    """The contents of a finale TOML file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tag: str = "finale"
    strata: tuple[Stratum, ...] = Field(min_length=1)
    top_per_stratum: int = Field(default=3, ge=1)
    floor_ratio: float = Field(default=0.8, gt=0, le=1)
    global_cap: int = Field(default=12, ge=1)
    qualifier_metric: str = Field(default="rougeL_f1", min_length=1)
    candidates: str = "candidates"
    episodes: str = "episodes.jsonl"
    judge: str = "geval"
    prompt_version: str | None = None  # None: the judge's latest version
    primary_model: str = "local:smollm2-135m"
    primary_label: str = ""
    cross_model: str = "local:smollm2-135m"
    cross_temperature: float = Field(default=0.0, ge=0, le=2)
    cross_label: str = ""
    cross_top_per_stratum: int = Field(default=2, ge=0)
    contested_threshold: float = Field(default=0.5, ge=0)
    cost_cap_usd: float | None = Field(default=50.0, gt=0)

    @field_validator("strata")
    @classmethod
    def _unique_names(cls, value: tuple[Stratum, ...]) -> tuple[Stratum, ...]:
        names = [s.name for s in value]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise ValueError(f"stratum names must be unique; repeated: {doubled}")
        return value

    @field_validator("primary_model", "cross_model")
    @classmethod
    def _model_ref(cls, value: str) -> str:
        ModelRef.parse(value)  # BackendError is a ValueError: pydantic reports it
        return value

    @property
    def primary(self) -> ModelRef:
        return ModelRef.parse(self.primary_model)

    @property
    def cross(self) -> ModelRef:
        return ModelRef.parse(self.cross_model)

    def with_cost_cap(self, cap_usd: float | None) -> FinaleConfig:
        """A copy with another cap, validated like the file's own."""
        return FinaleConfig.model_validate({**self.model_dump(), "cost_cap_usd": cap_usd})


def load_config(path: Path) -> FinaleConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return FinaleConfig.model_validate(data)
    except OSError as error:
        raise FinaleError(f"{path}: cannot read the finale config: {error}") from None
    except (tomllib.TOMLDecodeError, ValidationError) as error:
        raise FinaleError(f"{path}: {error}") from None


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True, eq=False)
class Candidate:
    """One qualifier run: its metrics and its summary of each episode."""

    run: str
    metrics: Mapping[str, Any]
    summaries: Mapping[str, str]

    def metric(self, name: str) -> float | None:
        """A numeric metric; a dotted name (`vs_reference.rougeL_f1`) walks nested tables."""
        value: Any = self.metrics
        for part in name.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            return None
        return float(value)


@dataclass(frozen=True)
class Episode:
    episode_id: str
    transcript: str


def _jsonl(path: Path, keys: tuple[str, ...]) -> list[dict[str, str]]:
    """Objects with exactly these non-empty string fields, one a line."""
    try:
        lines = jsonl_lines(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise FinaleError(f"{path}: {error}") from None
    records: list[dict[str, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = strict_json_loads(line)
        except DuplicateKey as duplicate:
            raise FinaleError(duplicate_key_message(path, duplicate, number)) from None
        except ValueError as error:
            raise FinaleError(f"{path}:{number}: not JSON: {error}") from None
        if not isinstance(record, dict) or any(
            not isinstance(record.get(key), str) or not record[key].strip() for key in keys
        ):
            raise FinaleError(f"{path}:{number}: needs non-empty string fields {list(keys)}")
        if len(record[keys[0]]) > NAME_LIMIT:  # it names a cassette file
            raise FinaleError(
                f"{path}:{number}: {keys[0]} is {len(record[keys[0]])} characters long, over the "
                f"limit of {NAME_LIMIT} (it names a cassette file)"
            )
        records.append({key: record[key] for key in keys})
    ids = [r[keys[0]] for r in records]
    doubled = sorted({i for i in ids if ids.count(i) > 1})
    if doubled:
        raise FinaleError(f"{path}: {keys[0]} repeated: {doubled}")
    return records


def load_episodes(path: Path) -> list[Episode]:
    """`{"episode_id", "transcript"}` per line, in file order."""
    episodes = [Episode(r["episode_id"], r["transcript"]) for r in _jsonl(path, _EPISODE_KEYS)]
    if not episodes:
        raise FinaleError(f"{path}: no episodes")
    return episodes


def load_candidates(folder: Path) -> list[Candidate]:
    """Every `<folder>/<run>/metrics.json` (+ optional predictions.jsonl), by run name."""
    if not folder.is_dir():
        raise FinaleError(f"{folder}: no candidates folder")
    candidates: list[Candidate] = []
    for run_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        metrics_path = run_dir / "metrics.json"
        if not metrics_path.is_file():
            continue
        if len(run_dir.name) > NAME_LIMIT:  # it names a cassette folder
            raise FinaleError(
                f"{run_dir}: a candidate run's folder name is at most {NAME_LIMIT} characters "
                f"long (it names a cassette folder); this one has {len(run_dir.name)}"
            )
        metrics = read_json(metrics_path, FinaleError)
        if not isinstance(metrics, dict):
            raise FinaleError(f"{metrics_path}: must hold a JSON object of metrics")
        predictions = run_dir / "predictions.jsonl"
        summaries = (
            {r["episode_id"]: r["summary"] for r in _jsonl(predictions, _PREDICTION_KEYS)}
            if predictions.is_file()
            else {}
        )
        candidates.append(Candidate(run_dir.name, metrics, summaries))
    if not candidates:
        raise FinaleError(f"{folder}: no <run>/metrics.json")
    return candidates
