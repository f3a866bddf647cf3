"""A recording session never replaces an accepted baseline's cassettes unless told by name.

The baseline is what every later prompt version is compared with; re-recording it silently
(as the `--record=all` a stale cassette suggests would) moves the reference under the team's
feet. `--rerecord-baseline` does it on purpose, and then the team must see what moved: the
new main run against the previous one, item by item (McNemar on detection, the verdicts
that changed). That line goes on the baseline's pin (accepted.toml `rerecorded`), where
every later report and `python -m judges baseline` show it, and to the terminal.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judges.core.naming import Case
from judges.core.results import JudgementRow
from judges.pytest_plugin.options import OPTION_RERECORD_BASELINE as OPTION
from judges.reports.format import p_is
from judges.sets.folder import PINS_FILE
from judges.sets.pins import Pin, note_rerecorded
from judges.sets.planted import PlantedSet
from judges.storage.restoring import restore_hint


class BaselineGuard:
    """Which cassettes a recording session must leave alone, and what it left or replaced."""

    def __init__(self, allow: bool, reports: Path | None = None) -> None:
        self.allow = allow
        self.reports = reports  # where the accepted recording's results say what it holds
        # (judge, version, model) -> its cassettes kept, replaced on purpose, or added (the
        # judgements of items or runs that came after acceptance: nothing replaced)
        self.kept: dict[tuple[str, str, str], set[Path]] = {}
        self.replaced: dict[tuple[str, str, str], set[Path]] = {}
        self.added: dict[tuple[str, str, str], set[Path]] = {}
        self._accepted: dict[tuple[str, str, str], frozenset[tuple[str, str]] | None] = {}
        # folder -> whether it held a recording when this session first looked: a cassette
        # this session wrote there does not turn the rest of a new run's folder into gaps.
        self._recorded_before: dict[Path, bool] = {}

    @staticmethod
    def pinned(pins: Mapping[tuple[str, str], Pin], case: Case) -> bool:
        return (str(case.model), case.version) in pins

    def new_to_baseline(self, case: Case, run: str) -> bool:
        """Whether the accepted recording holds no judgement of this item in this run, as its
        results say: the item, or its place in the run, came after acceptance (a grown set,
        a noise item added). Without results to read, nothing is known to be new."""
        key = (case.judge, case.version, str(case.model))
        if key not in self._accepted:
            self._accepted[key] = _recorded_judgements(self.reports, *key)
        accepted = self._accepted[key]
        return accepted is not None and (case.item_id, run) not in accepted

    def keeps(self, pins: Mapping[tuple[str, str], Pin], case: Case, run: str, path: Path) -> bool:
        """Whether recording `path` must be refused: it would replace the accepted baseline's
        cassette, or fill a gap in its recorded folder (a deleted cassette). A judgement the
        accepted recording never held (an item added to the set since), or a folder with no
        recording before this session (a run the baseline never had, such as a noise run
        enrolled after acceptance, or another --cassette-dir), replaces nothing."""
        if not self.pinned(pins, case):
            return False
        key = (case.judge, case.version, str(case.model))
        if not path.is_file() and self.new_to_baseline(case, run):
            self.added.setdefault(key, set()).add(path)
            return False
        folder = path.parent
        if folder not in self._recorded_before:
            self._recorded_before[folder] = any(folder.glob("*.yaml"))
        recorded = path.is_file() or self._recorded_before[folder]
        if not recorded:
            return False
        if self.allow:
            self.replaced.setdefault(key, set()).add(path)
            return False
        self.kept.setdefault(key, set()).add(path)
        return True

    def lines(self) -> list[str]:
        """The terminal summary's account of the accepted baselines this session touched."""
        lines = [
            f"kept {len(paths)} cassette(s) of the accepted baseline {judge} prompt {version} on "
            f"{model}: "
            f"--record never replaces an accepted baseline (pinned in {PINS_FILE}); to "
            f"re-record it on purpose add {OPTION}, or record the change as a new version"
            for (judge, version, model), paths in sorted(self.kept.items())
        ]
        lines += [
            f"re-recorded {len(paths)} cassette(s) of the accepted baseline {judge} prompt "
            f"{version} on "
            f"{model} ({OPTION}): what changed is `git diff -- reports/{judge}/{version}/` "
            "once the replay has rewritten its report"
            for (judge, version, model), paths in sorted(self.replaced.items())
        ]
        lines += [
            f"recorded {len(paths)} judgement(s) new to the accepted baseline {judge} prompt "
            f"{version} on {model}: items or runs added to its set since it was accepted; "
            "nothing it held was replaced"
            for (judge, version, model), paths in sorted(self.added.items())
        ]
        return lines


def _recorded_judgements(
    reports: Path | None, judge: str, version: str, model: str
) -> frozenset[tuple[str, str]] | None:
    """The (item, run) pairs of a version's results on disk for one model: the accepted
    recording, as its last replay wrote it. None when there is no results file to read."""
    from judges.reports.model.folders import Results, ResultsMissing

    if reports is None:
        return None
    try:
        rows = Results(reports).rows(judge, version)
    except ResultsMissing:
        return None
    return frozenset((row.item_id, row.run) for row in rows if row.model == model)


def missing_hint(
    pins: Mapping[tuple[str, str], Pin],
    case: Case,
    path: Path | str,
    guard: BaselineGuard,
    run: str,
) -> str:
    """For a replay miss of an accepted baseline: what to restore instead of re-recording.
    None for a judgement its recording never held: recording it is the fix, as anywhere."""
    if not BaselineGuard.pinned(pins, case):
        return ""
    if guard.new_to_baseline(case, run):
        return ""
    return (
        f"\nPrompt {case.version} is the accepted baseline on {case.model}: its recording is "
        "kept, not re-recorded. Restore the cassette ("
        + restore_hint([Path(path)], "from a copy of the accepted recording")
        + f") and the item or settings it was recorded with; or re-record the baseline on "
        f"purpose with {OPTION}."
    )


def rerecorded_text(previous: Sequence[JudgementRow], new: Sequence[JudgementRow]) -> str:
    """The new main run against the previous recording of the same items, in one line."""
    from judges.stats.estimates.floors import detected
    from judges.stats.regression.gates import PairedCounts, detection_regression

    old = {row.item_id: row for row in previous if row.run == "main" and row.repeat == 0}
    now = [row for row in new if row.run == "main" and row.repeat == 0 and row.item_id in old]
    if not now:
        return "no item of the previous main run was re-recorded"
    before = [old[row.item_id] for row in now]
    gate = detection_regression(before, now, "the previous recording")
    defects = [row for row in now if not row.control]
    caught_before = sum(detected(old[row.item_id]) for row in defects)
    caught_now = sum(detected(row) for row in defects)
    changed = sum(old[row.item_id].verdict != row.verdict for row in now)
    counts = gate.result
    flips = (
        f"{counts.worse} caught->missed, {counts.better} missed->caught, one-sided McNemar "
        f"{p_is(counts.p_value, 'mid-p')}"
        if isinstance(counts, PairedCounts) and gate.decides
        else gate.why
    )
    return (
        f"detection {caught_before}/{len(defects)} -> {caught_now}/{len(defects)} on the same "
        f"items ({flips}); {changed} of {len(now)} main-run verdicts changed"
    )


def compare_with_previous(session: Any) -> list[str]:
    """A `--record --rerecord-baseline` session's accepted baselines against the results on
    disk, which are still the previous recording's until its reports are written."""
    settings = session.settings
    if not (settings.rerecord_baseline and settings.live):
        return []
    return note_rerecorded_baselines(
        session.gathered.rows, session.catalogue.planted_sets, settings.reports, settings.cassettes
    )


def note_rerecorded_baselines(
    rows: Sequence[JudgementRow],
    planted_sets: dict[str, PlantedSet],
    reports: Path,
    cassettes: Path | None = None,
) -> list[str]:
    """For each accepted baseline this `--rerecord-baseline` session judged: compare with the
    results on disk (the previous recording), note it on the pin (and pin the new
    recording's cassettes), and return the lines."""
    from judges.reports.model.folders import Results, ResultsMissing

    today = datetime.date.today().isoformat()
    results = Results(reports)
    lines = []
    keys = sorted({(row.judge, row.prompt_version, row.model) for row in rows})
    for judge, version, model in keys:
        planted = planted_sets.get(judge)
        if planted is None or (model, version) not in planted.pins:
            continue
        try:
            previous = [row for row in results.rows(judge, version) if row.model == model]
        except ResultsMissing:
            continue  # nothing to compare with: a first recording into another report dir
        key = (judge, version, model)
        mine = [row for row in rows if (row.judge, row.prompt_version, row.model) == key]
        text = f"{today} with --rerecord-baseline: " + rerecorded_text(previous, mine)
        note_rerecorded(planted.path, model, version, text, cassettes)
        lines.append(f"accepted baseline {judge} prompt {version} on {model} re-recorded {text}")
    return lines
