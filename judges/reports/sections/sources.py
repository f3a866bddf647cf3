"""What a report needs besides its rows: the judge's spec, planted set and SME labels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judges.core.spec import JudgeSpec
from judges.sets.items import PlantedSetError
from judges.sets.planted import PlantedSet, load_planted_set
from judges.stats.estimates.memo import Memo
from judges.stats.reliability.gates import SmeLabel, SmeLabelError, load_sme_labels


@dataclass(frozen=True)
class Sources:
    """What a report needs besides its rows; each part may be missing, and a note says so."""

    spec: JudgeSpec | None = None
    planted: PlantedSet | None = None
    planted_root: str = "planted_sets"  # as shown in the report, never an absolute path
    sme_labels: tuple[SmeLabel, ...] | None = None
    notes: tuple[str, ...] = ()
    # The session's statistics, shared with its tests (judges.stats.estimates.memo); None: compute.
    memo: Memo | None = None


def load_sources(judge: str, catalog: Mapping[str, JudgeSpec], planted_root: Path) -> Sources:
    """The judge's spec, planted set and SME labels, as far as they load."""
    shown = planted_root.name or "planted_sets"
    spec = catalog.get(judge)
    if spec is None:
        return Sources(
            planted_root=shown,
            notes=(f"judge {judge!r} is not in the catalog: no dimensions, gates or planted set",),
        )
    if not (planted_root / judge / "items.jsonl").is_file():
        note = f"no planted set {shown}/{judge}/items.jsonl: no gates or accepted misses"
        return Sources(spec, planted_root=shown, notes=(note,))
    try:
        planted = load_planted_set(planted_root, spec)
    except PlantedSetError as error:
        # Absolute paths would make the bytes depend on where the build ran.
        message = str(error).replace(str(planted_root), shown)
        return Sources(spec, planted_root=shown, notes=(f"planted set not loaded: {message}",))
    labels: tuple[SmeLabel, ...] | None = None
    notes: list[str] = []
    if planted.config.sme_labels:
        path = planted_root / "sme" / planted.config.sme_labels
        try:
            labels = tuple(load_sme_labels(path))
        except (OSError, SmeLabelError) as error:
            notes.append(f"SME labels not loaded: {str(error).replace(str(planted_root), shown)}")
    return Sources(spec, planted, shown, labels, tuple(notes))
