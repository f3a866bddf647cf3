"""`corpus.toml`: what a corpus is, where it came from, and how its scores read.

A corpus names its licence even when there is none to name (`licence = "unknown"`, shown in
every report, never invented), its judges (each with the reference its scores are relative
to, when there is one) and its scale: the range of a score, how a score becomes a verdict
(for agreement and the review queue) and the factor it is shown with.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

MANIFEST_FILE = "corpus.toml"


class CorpusError(ValueError):
    """A corpus file that cannot be read as documented: names the file, the row and the fix."""


class Scale(BaseModel):
    """A score's range and reading. `verdict = "side"`: above, at or below `midpoint` (a
    preference against a reference: win, tie, loss); `verdict = "level"`: the score rounded
    to the nearest `step` (a rubric's levels)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "score"
    low: float
    high: float
    verdict: Literal["side", "level"] = "level"
    # Every number finite: NaN compares false with every score, Infinity overflows.
    midpoint: float | None = Field(default=None, allow_inf_nan=False)
    step: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    # Shown as score x factor (100: a percentage).
    factor: float = Field(default=1.0, gt=0, le=1e6, allow_inf_nan=False)
    higher_is_better: bool = True
    # A judgement below this is a flag (a failed output).
    flag_below: float | None = Field(default=None, allow_inf_nan=False)

    @model_validator(mode="after")
    def _consistent(self) -> Scale:
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"low < high, both finite (got low={self.low}, high={self.high})")
        if self.verdict == "side" and self.midpoint is None:
            raise ValueError('verdict = "side" needs a midpoint (a tie), e.g. midpoint = 0.5')
        if self.verdict == "level" and self.step is None:
            raise ValueError('verdict = "level" needs a step (one level), e.g. step = 1')
        span = f"[{self.low:g}, {self.high:g}]"
        if self.midpoint is not None and not self.low < self.midpoint < self.high:
            raise ValueError(
                f"midpoint = {self.midpoint:g} is not inside the scale {span}: a tie sits "
                "between a loss and a win, strictly between low and high"
            )
        if self.step is not None and self.step > self.high - self.low:
            raise ValueError(
                f"step = {self.step:g} is wider than the scale {span}: one level is at most "
                "high - low"
            )
        if self.flag_below is not None and not self.low < self.flag_below <= self.high:
            raise ValueError(
                f"flag_below = {self.flag_below:g} flags no score or every score on {span}; "
                "give a value above low and at most high"
            )
        return self

    def contains(self, score: float) -> bool:
        return self.low <= score <= self.high


class Judged(BaseModel):
    """`[judges.<name>.judged]`: this project judges the corpus's outputs itself (`python -m
    judges corpus judge`), one cassette per judgement, as it judges its planted sets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str = Field(min_length=1)  # a judge under judges/prompts
    version: str = Field(min_length=1)  # its prompt version
    model: str = Field(pattern=r"^[a-z]+:.+$")  # e.g. local:smollm2-135m
    score: str = Field(min_length=1)  # the verdict's numeric field that is the corpus score
    output: str = Field(min_length=1)  # the judge input a system's output fills
    runs: int = Field(default=1, ge=1, le=2)  # 2: a second, independent run (test-retest)


class JudgeEntry(BaseModel):
    """`[judges.<name>]`: a judge (a prompt version and model, or a released configuration)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    # The system this judge's scores are relative to (pairwise against a reference); two
    # judges with different references differ in judge and reference together.
    reference: str | None = None
    judged: Judged | None = None  # None: the judgements are imported, not judged here


class Comparison(BaseModel):
    """What the report compares and how it decides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    before: str | None = None  # default: the first two judges, in manifest order
    after: str | None = None
    # A judge may replace another when the lower bound of verdict agreement reaches this.
    substitution_agreement: float = Field(default=0.75, gt=0, le=1)
    # A system is contested when the two judges' means differ by more (in score units).
    contested_margin: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class CorpusManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    source: str
    licence: str = Field(min_length=1)  # "unknown" when the source states none
    scale: Scale
    judges: dict[str, JudgeEntry] = Field(min_length=1)
    compare: Comparison = Comparison()
    seed: int = 0

    @model_validator(mode="after")
    def _a_folder_name(self) -> CorpusManifest:
        if not self.name.strip("."):
            raise ValueError(
                f"name {self.name!r} is not a folder name (it would lead out of the cassette "
                "folder); name the corpus with letters, digits, '_', '-' or '.'"
            )
        return self

    def contested_margin(self) -> float:
        """In score units; by default a twentieth of the scale's range."""
        margin = self.compare.contested_margin
        return margin if margin is not None else (self.scale.high - self.scale.low) / 20


def load_manifest(folder: Path) -> CorpusManifest:
    path = folder / MANIFEST_FILE
    if not path.is_file():
        raise CorpusError(
            f"{path}: no {MANIFEST_FILE}; a corpus folder starts with one (see "
            "'The format' in `python -m judges docs corpus`)"
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return CorpusManifest.model_validate(data)
    except tomllib.TOMLDecodeError as error:
        raise CorpusError(f"{path}: not TOML ({error})") from None
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in error.errors()
        )
        raise CorpusError(f"{path}: {problems}") from None
