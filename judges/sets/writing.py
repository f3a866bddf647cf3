"""The model-written generators' prompts, as judges whose verdict is the new text.

judges/sets/writers/<generator>/judge.toml   the writer's system message and sampling
judges/sets/writers/<generator>/<version>.md the generation prompt, one file per version

Each writer is loaded as a judge (`judges.core.spec.load_judge`), so its prompt has a
version and a hash like any judge prompt, and it is called through the same runner,
cassettes and cost ledger as the judges (judges.cli.plant_writer). This module is the
writers' verdict module: what a writer is shown (`Inputs`) and what it answers (`Written`).
A published prompt file is never edited: a change is a new version file.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judges.core.spec import JudgeSpec, load_catalog, version_key

WRITERS_ROOT = Path(__file__).parent / "writers"
# A written text may be as long as a long answer; the bound keeps a local grammar's string
# open that long (an unbounded string gets a short default, judges.calls.backends).
MAX_WRITTEN = 20_000


class Inputs(BaseModel):
    """What a writer is shown: the row's text to rewrite and its other inputs as context."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1)
    context: str
    aim: str = ""  # rubric_level: the dimension, the level and the judge's own instructions

    def prompt_fields(self) -> dict[str, str]:
        return {"text": self.text, "context": self.context, "aim": self.aim}


class Written(BaseModel):
    """A writer's reply: the new text and what it changed, in its words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1, max_length=MAX_WRITTEN)
    change: str = Field(min_length=1, max_length=400)


def reply_model(prompt_version: str, facet: str | None) -> type[BaseModel]:
    return Written


def build_verdict(
    replies: dict[str | None, tuple[BaseModel, str]], inputs: Inputs, prompt_version: str
) -> Written:
    reply, _ = replies[None]
    assert isinstance(reply, Written)
    return reply


def context_of(inputs: Mapping[str, Any], field: str) -> str:
    """The row's other inputs, each under its name: what the rewrite must stay true to."""
    return "\n\n".join(
        f"### {name}\n\n{value if isinstance(value, str) else repr(value)}"
        for name, value in inputs.items()
        if name != field
    )


@cache
def writers() -> dict[str, JudgeSpec]:
    """Every model-written generator's writer, by generator name."""
    return load_catalog(WRITERS_ROOT)


def newest_version(spec: JudgeSpec) -> str:
    return max(spec.prompts, key=version_key)
