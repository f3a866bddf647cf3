"""What a run was asked to do: the record mode, the settings from the command line, and
how each kind of run over a planted set judges (`RunPlan`).

Settings are frozen; a live session replaces them once it knows its server
(`judges.pytest_plugin.live`), and `JudgesSession.settings` hands the new ones to its parts.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from judges.calls.backends import ModelRef
from judges.core.runner import DEFAULT_TIMEOUT_S
from judges.core.spec import Sampling
from judges.sets.items import PlantedItem


class RecordMode(enum.Enum):
    NONE = "none"  # replay only; network blocked
    ALL = "all"  # live calls; every selected cassette is recorded afresh
    MISSING = "missing"  # live calls only where no cassette exists yet


@dataclass(frozen=True)
class RunPlan:
    """One kind of run over a planted set (main, noise, retest, panel, reading_list)."""

    run: str
    versions: tuple[str, ...]
    items: tuple[PlantedItem, ...]
    repeats: int = 1
    draw_offset: int = 0
    sampling: Sampling | None = None
    model: ModelRef | None = None  # a panel's cross-check may be another model
    label: str = ""
    # A version judged another number of times (a retest's draws, set per version).
    version_repeats: Mapping[str, int] = field(default_factory=dict)

    def repeats_for(self, version: str) -> int:
        """How many times one item of this version is judged in its cassette."""
        return self.version_repeats.get(version, self.repeats)


@dataclass(frozen=True)
class Settings:
    rootdir: Path
    record: RecordMode = RecordMode.NONE
    models: tuple[ModelRef, ...] = ()
    base_url: str | None = None
    cost_cap_usd: float | None = None
    price_files: tuple[Path, ...] = ()
    cassettes: Path = Path("cassettes")
    planted_sets: Path = Path("planted_sets")
    prompts: Path | None = None  # judge definitions; None: the built-in judges
    reports: Path = Path("reports")
    noise_repeats: int | None = None
    rerecord_options: tuple[str, ...] = ()  # the judge options a re-record command repeats
    # What the live server says of itself (model hash, build, CPU): part of each fingerprint.
    server_fingerprint: dict[str, str] = field(default_factory=dict)
    judge_timeout_s: float = DEFAULT_TIMEOUT_S
    batch: bool = (
        False  # live calls go through the providers' batch APIs (pytest_plugin.batch_phase)
    )
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    rerecord_baseline: bool = False  # --rerecord-baseline: replace an accepted baseline's cassettes

    @property
    def live(self) -> bool:
        return self.record is not RecordMode.NONE

    @property
    def scratch(self) -> Path:
        return self.rootdir / ".judges-tmp"
