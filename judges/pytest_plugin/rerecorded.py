"""After `--rerecord-baseline`: what the new recording of an accepted baseline changed.

A baseline is re-recorded only on purpose, and then the team must see what moved: the new
main run against the previous one, item by item (McNemar on detection, the verdicts that
changed). The line goes on the baseline's pin (accepted.toml `rerecorded`), where every
later report and `python -m judges baseline` show it, and to the terminal.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judges.core.results import JudgementRow
from judges.pytest_plugin.session import RecordMode
from judges.reports.model.folders import Results, ResultsMissing
from judges.sets.pins import note_rerecorded
from judges.sets.planted import PlantedSet
from judges.stats.estimates.floors import detected
from judges.stats.regression.gates import detection_regression


def rerecorded_text(previous: Sequence[JudgementRow], new: Sequence[JudgementRow]) -> str:
    """The new main run against the previous recording of the same items, in one line."""
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
        f"mid-p = {counts.p_value:.4f}"
        if counts is not None and gate.decides
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
    if not settings.rerecord_baseline or settings.record is RecordMode.NONE:
        return []
    return note_rerecorded_baselines(session.rows, session.planted_sets, settings.reports)


def note_rerecorded_baselines(
    rows: Sequence[JudgementRow], planted_sets: dict[str, PlantedSet], reports: Path
) -> list[str]:
    """For each accepted baseline this `--rerecord-baseline` session judged: compare with the
    results on disk (the previous recording), note it on the pin, and return the lines."""
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
        note_rerecorded(planted.path, model, version, text)
        lines.append(f"accepted baseline {judge} prompt {version} on {model} re-recorded {text}")
    return lines
