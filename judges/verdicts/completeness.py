"""What a version's recording lacks: items set.toml asks for, runs its judge has.

Both make the verdict INCOMPLETE, never PASS: a PASS on a version whose noise floor was
never measured would say more than the recording shows.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from judges.calls.backends import ModelRef, is_imported
from judges.calls.cassette_files import recorded_base_url
from judges.core.results import JudgementRow
from judges.sets.enrolment import Run, judge_runs
from judges.sets.folder import SET_FILE
from judges.sets.items import PlantedSetError
from judges.sets.planted import PlantedSet
from judges.sets.probes import NOISE_RUN, ProbeSet, load_recipe, run_name
from judges.sets.reading_list import RUN as READING_LIST_RUN


# INCOMPLETE's reasons, the same everywhere: the recording lacks items set.toml asks for,
# or the version lacks runs its judge has (a restricting list, or a run not recorded).
def missing_reason(missing: int, runs: Sequence[str] = ()) -> str:
    reasons = []
    if missing:
        reasons.append(f"{missing} item{'s' * (missing != 1)} {SET_FILE} asks for not judged")
    if runs:
        names = sorted({run.split(" ", 1)[0] for run in runs})
        reasons.append(f"lacks the {', '.join(names)} run{'s' * (len(names) != 1)} of its judge")
    return "; ".join(reasons)


def missing_items(
    asked: Sequence[str], main: Sequence[JudgementRow], notes: list[str]
) -> tuple[str, ...]:
    """Items set.toml asks the main run to judge (every planted item unless it names fewer)
    without a row (a `-k` run), named in a note."""
    missing = tuple(sorted(set(asked) - {row.item_id for row in main}))
    if missing:
        shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
        notes.append(
            f"{len(missing)} of the {len(asked)} items {SET_FILE} asks for have no main-run row "
            f"({shown}): statistics cover the rows there are; run the full suite to complete"
        )
    return missing


def record_missing(judge: str, version: str, model: str, cassettes: Path | None) -> str:
    """The command that records what a version lacks, runnable as printed: it names the
    model, and the server the version's cassettes were recorded on (`--judge-base-url`; none
    for the embedded judge or a hosted API), which a command without them would not call."""
    words = ["pytest", "--record=missing", "--judge-model", model]
    server = None
    if cassettes is not None:
        folder = cassettes / judge / version / ModelRef.parse(model).slug
        recorded = sorted(folder.rglob("*.yaml")) if folder.is_dir() else []
        server = recorded_base_url(recorded[0]) if recorded else None
    if server:
        words += ["--judge-base-url", server]
    return shlex.join([*words, "-k", f"{judge}-{version}"])


def missing_runs(
    planted: PlantedSet | None,
    version: str,
    model: str,
    rows: Sequence[JudgementRow],
    folder_rows: Sequence[JudgementRow],
    notes: list[str],
    cassettes: Path | None = None,
) -> tuple[str, ...]:
    """The runs of the judge this version lacks: kept from it by a list, or not recorded.
    Each is named in a note with its fix (`record_missing`, with the version's recorded
    server from `cassettes`). A released model (`imported:`) is never called, so only its
    main run is asked for."""
    if planted is None or is_imported(model):
        return ()
    lacking: list[str] = []
    for run in judge_runs(planted, _probes(planted)):
        if not run.covers(version):
            lacking.append(run.lacking(version))
        elif not _recorded(run, planted, model, rows, folder_rows):
            command = record_missing(planted.judge, version, model, cassettes)
            lacking.append(f"{run.name} (no rows: record it with `{command}`)")
    for reason in lacking:
        notes.append(f"prompt {version} lacks the run {reason}")
    return tuple(lacking)


def _probes(planted: PlantedSet) -> ProbeSet | None:
    """The probes.toml restriction only: the probe items are the tests' concern."""
    try:
        recipe = load_recipe(planted.folder.probes_path)
    except PlantedSetError:
        return None  # the probe section's note says why
    if recipe is None:
        return None
    return ProbeSet(planted.judge, planted.path, recipe.score, (), recipe.versions)


def _recorded(
    run: Run,
    planted: PlantedSet,
    model: str,
    rows: Sequence[JudgementRow],
    folder_rows: Sequence[JudgementRow],
) -> bool:
    if run.name == "sme":
        return True  # calibrated on the main run's rows
    if run.name == "panel":
        panel = planted.config.panel
        cross = (panel.model if panel else None) or model
        return any(row.run == "panel" and row.model == cross for row in folder_rows)
    if run.name == "reading_list":
        return any(row.run == READING_LIST_RUN for row in rows)
    if run.name == "probes":
        return any(row.run.startswith(run_name("")) and row.run != NOISE_RUN for row in rows)
    return any(row.run == run.name for row in rows)  # noise, retest
