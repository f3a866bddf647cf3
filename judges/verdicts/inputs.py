"""What a verdict needs besides its rows: the judge's spec, planted set, SME labels and
reading list, each file read once here so that `stats` reads none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from judges.core.spec import JudgeSpec
from judges.sets.folder import ITEMS_FILE, SetFolder
from judges.sets.items import PlantedSetError
from judges.sets.planted import PlantedSet, load_planted_set
from judges.sets.reading_list import ReadingList, load_reading_list
from judges.sets.sme import SmeLabel, SmeLabelError, load_sme_labels
from judges.stats.estimates.memo import Memo
from judges.stats.fitness.judge import SetFacts


@dataclass(frozen=True)
class Sources:
    """What a verdict needs besides its rows; each part may be missing, and a note says so."""

    spec: JudgeSpec | None = None
    planted: PlantedSet | None = None
    planted_root: str = "planted_sets"  # as shown in the report, never an absolute path
    sme_labels: tuple[SmeLabel, ...] | None = None
    notes: tuple[str, ...] = ()
    # The session's statistics, shared with its tests (judges.stats.estimates.memo); None: compute.
    memo: Memo | None = None
    reading_list: ReadingList | None = None  # the set's reading list, when it names one
    # The cassette folder, read only for the server a version lacking a run was recorded on.
    cassettes: Path | None = None

    def facts(self, version: str) -> SetFacts | None:
        """The set as the chance tests see it under `version`; None without a planted set."""
        if self.planted is None:
            return None
        return set_facts(self.planted, version, self.sme_labels, self.reading_list)


def set_facts(
    planted: PlantedSet,
    version: str,
    sme_labels: Sequence[SmeLabel] | None = None,
    reading_list: ReadingList | None = None,
) -> SetFacts:
    """What the chance tests read of a planted set under `version`: its items, the SME
    labels where set.toml calibrates this version, and the reading list's grades."""
    calibrated = sme_labels if version in planted.run_versions("sme") else None
    listed = reading_list is not None and bool(planted.reading_list)
    return SetFacts(
        items={item.id: item for item in planted.items},
        sme_labels=calibrated,
        reading_list_labels=reading_list.labels if reading_list else None,
        reading_list_candidates=reading_list_candidates(planted) if listed else None,
    )


def reading_list_candidates(planted: PlantedSet) -> dict[str, str]:
    """Each reading-list item's candidate id (the item judges one candidate)."""
    return {item.id: item.inputs["document"]["id"] for item in planted.reading_list}


def load_sources(judge: str, catalog: Mapping[str, JudgeSpec], planted_root: Path) -> Sources:
    """The judge's spec, planted set and SME labels, as far as they load."""
    shown = planted_root.name or "planted_sets"
    spec = catalog.get(judge)
    if spec is None:
        return Sources(
            planted_root=shown,
            notes=(f"judge {judge!r} is not in the catalog: no dimensions, gates or planted set",),
        )
    if not SetFolder(planted_root, judge).items_path.is_file():
        note = f"no planted set {shown}/{judge}/{ITEMS_FILE}: no gates or accepted misses"
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
    reading_list = None
    if planted.config.reading_list is not None:
        # load_planted_set has read it already (its items), so it reads again cleanly.
        reading_list = load_reading_list(planted.path / planted.config.reading_list)
    cassettes = planted_root.parent / "cassettes"  # the project's, beside planted_sets/
    return Sources(
        spec, planted, shown, labels, tuple(notes), reading_list=reading_list, cassettes=cassettes
    )
