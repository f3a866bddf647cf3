"""GitHub Actions output, read from the report model: a step summary and `::error` annotations.

When `GITHUB_STEP_SUMMARY` names a file, a markdown summary is appended to it: one line per
judge, prompt version and model (detection with its Wilson interval, gates passed and
failed, the paired comparison against the previous version with its McNemar p), then every
failed gate with its value. When `GITHUB_ACTIONS` is set, each failed gate is annotated at
the line of `gates.toml` that sets its threshold and each failed planted item at its line
in `items.jsonl`, so the pull request shows them beside the diff.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from judges.reports.format import p_is
from judges.reports.model.data import FolderReport, ModelReport
from judges.reports.model.summary import first_screen
from judges.sets.folder import EXPECTATIONS_FILE, SetFolder
from judges.stats.estimates.floors import Gate
from judges.verdicts.vocabulary import FAIL, NOT_FIT, WORDS

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
ACTIONS_VARIABLE = "GITHUB_ACTIONS"

# `detection[cousin]` -> ("min_detection", "cousin"); `noise_floor.max_sd.x` -> the section.
_TOP_LEVEL = {
    "control_false_positive": "max_control_false_positive",
    "error_rate": "max_error_rate",
}
_TABLE = re.compile(r'^\s*\[\s*"(?P<model>[^"]+)"\s*\.\s*"(?P<version>[^"]+)"\s*\]')


@dataclass(frozen=True)
class Annotation:
    """One workflow command: `::error file=F,line=L,title=T::message`."""

    file: str
    line: int | None
    title: str
    message: str

    def command(self) -> str:
        where = f"file={_property(self.file)}"
        if self.line is not None:
            where += f",line={self.line}"
        return f"::error {where},title={_property(self.title)}::{_data(self.message)}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


# --------------------------------------------------------------------------- the summary


def _comparison(m: ModelReport) -> str:
    c = m.comparison
    if c is None:
        return "-"
    return (
        f"vs {c.before}: {c.detection_before.rate:.2f} -> {c.detection_after.rate:.2f} on "
        f"{c.n_pairs} paired items, {len(c.caught_to_missed)} caught->missed, "
        f"{len(c.missed_to_caught)} missed->caught, two-sided McNemar "
        f"{p_is(c.mcnemar.p_value, why='no discordant pair')}"
    )


def _gates_cell(m: ModelReport) -> str:
    if m.gates_table is None:
        return "no thresholds"
    passed, failed, _ = m.gate_counts
    # A statistic without a threshold is no gate; one with a threshold but no data is.
    unevaluated = sum(g.threshold is not None and g.passed is None for g in m.gates)
    cell = f"{passed} passed, {failed} failed"
    cell += f", {unevaluated} not evaluated" if unevaluated else ""
    return cell + (" :x:" if failed else "")


def _verdict_cell(m: ModelReport) -> str:
    word = m.verdict_word()
    if word == NOT_FIT and m.accept_not_fit:
        return f"{NOT_FIT} (accepted)"
    if word == FAIL and not m.fit and m.accept_not_fit:  # the accepted NOT FIT stays visible
        return f"{FAIL} :x:; {NOT_FIT} (accepted)"
    mark = "" if WORDS[word].passing else " :x:"
    if m.incomplete:  # INCOMPLETE: the same reason as report.md's
        return f"{word}: {m.incomplete_reason()}{mark}"
    return word + mark


def summary_markdown(folders: Iterable[FolderReport]) -> str:
    """The step summary: a table, one row per judge, prompt version and model; failed gates."""
    folders = list(folders)
    lines = [
        "## Judge verdicts",
        "",
        "| judge | prompt | model | verdict | detection (Wilson 95%) | gates "
        "| vs previous version |",
        "|---|---|---|---|---|---|---|",
    ]
    failed: list[str] = []
    for folder in folders:
        for m in folder.models:
            detection = f"{m.all_defects.successes}/{m.all_defects.n} = {m.all_defects}"
            lines.append(
                f"| {folder.judge} | {folder.version} | {m.model} | {_verdict_cell(m)} "
                f"| {detection} | {_gates_cell(m)} | {_comparison(m)} |"
            )
            failed += [
                f"- {folder.judge} {folder.version} on {m.model}: {gate.describe()}"
                for gate in m.gates
                if gate.passed is False
            ]
    lines += ["", "### Why", ""]
    for folder in folders:
        # The verdict and the reason that decides it (the Result line), then the warning.
        screen = first_screen(folder)
        warning = f" **Warning: {screen.warning}.**" if screen.warning else ""
        lines.append(f"- {folder.judge} {folder.version}: **{screen.result()}**.{warning}")
    if failed:
        lines += ["", "### Failed gates", "", *failed]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- annotations


def gate_key(gate: Gate) -> tuple[str, str | None]:
    """The `gates.toml` key that sets a gate's threshold, and its key inside a table."""
    if gate.name.startswith("detection[") and gate.name.endswith("]"):
        return "min_detection", gate.name[len("detection[") : -1]
    if gate.name in _TOP_LEVEL:
        return _TOP_LEVEL[gate.name], None
    section, _, inner = gate.name.partition(".")
    return section, inner or None


def gate_line(path: Path, model: str, version: str, gate: Gate) -> int | None:
    """The 1-based line of `path` that sets the gate's threshold, or its table's header."""
    key, inner = gate_key(gate)
    inside, header = False, None
    assignment = re.compile(rf'^\s*"?{re.escape(key)}"?\s*=')
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        table = _TABLE.match(text)
        if table:
            inside = (table["model"], table["version"]) == (model, version)
            header = number if inside else header
        elif (
            inside
            and assignment.match(text)
            and (inner is None or re.search(rf'(^|[{{,\s])"?{re.escape(inner)}"?\s*=', text))
        ):
            return number
    return header


def item_line(path: Path, item_id: str) -> int | None:
    """The 1-based line of `items.jsonl` holding the item, or None when it is not there."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            found = json.loads(text)
        except ValueError:
            continue
        if isinstance(found, dict) and found.get("id") == item_id:
            return number
    return None


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _gate_annotations(
    folder: FolderReport, m: ModelReport, gates_file: Path, root: Path
) -> list[Annotation]:
    found = []
    for gate in m.gates:
        if gate.passed is not False:
            continue
        line = None
        if gates_file.is_file():
            line = gate_line(gates_file, m.model, m.gates_version or folder.version, gate)
        found.append(
            Annotation(
                _shown(gates_file, root),
                line,
                f"gate failed: {folder.judge} {folder.version}",
                f"{folder.judge} prompt {folder.version} on {m.model}: {gate.describe()}",
            )
        )
    return found


def _item_annotations(
    folder: FolderReport, m: ModelReport, items_file: Path, root: Path
) -> list[Annotation]:
    found = []
    where = f"{folder.judge} prompt {folder.version} on {m.model}"
    lines = {}
    for failure in m.failures:
        if failure.accepted_miss is None:  # an accepted miss is an xfail, not a failure
            row = failure.row
            why = row.error or "expected " + ", ".join(str(e) for e in row.expect)
            lines[row.item_id] = f"{where}: item {row.item_id} ({row.category}) {row.status}: {why}"
    for item_id in m.accepted_met:
        lines[item_id] = (
            f"{where}: item {item_id} is an accepted miss in {EXPECTATIONS_FILE} but the judge "
            f"now meets it (strict xfail): remove it from {EXPECTATIONS_FILE}"
        )
    for item_id, message in lines.items():
        line = item_line(items_file, item_id) if items_file.is_file() else None
        found.append(Annotation(_shown(items_file, root), line, f"planted item {item_id}", message))
    return found


def all_annotations(
    folders: Iterable[FolderReport], planted_root: Path, root: Path
) -> list[Annotation]:
    """Failed gates at their `gates.toml` line, failed planted items at their item's line."""
    found: list[Annotation] = []
    for folder in folders:
        set_dir = planted_root / folder.judge
        for m in folder.models:
            found += _gate_annotations(folder, m, SetFolder.at(set_dir).gates_path, root)
            found += _item_annotations(folder, m, SetFolder.at(set_dir).items_path, root)
    return found


def publish(
    folders: Iterable[FolderReport],
    planted_root: Path,
    root: Path,
    environ: Mapping[str, str] = os.environ,
) -> list[str]:
    """Append the step summary when asked for; return the workflow command lines to print."""
    folders = list(folders)
    lines = []
    summary = environ.get(SUMMARY_VARIABLE)
    if summary:
        try:
            with Path(summary).open("a", encoding="utf-8") as stream:
                stream.write(summary_markdown(folders))
        except OSError as error:  # the gate's verdict stands; say why the summary is missing
            lines.append(f"::warning::could not append the step summary to {summary}: {error}")
    if environ.get(ACTIONS_VARIABLE):
        lines += [a.command() for a in all_annotations(folders, planted_root, root)]
    return lines
