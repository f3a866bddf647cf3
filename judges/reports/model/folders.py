"""The results files of a reports folder, `<reports>/<judge>/<version>/results.jsonl`.

`results.jsonl` holds every judgement merged into the folder. Rows of a session replace rows
with the same key and other rows are kept, so a `-k` run never erases what an earlier full
run wrote. A session's merged rows are held in memory over the files on disk until the
reports are written (or only checked), so both read the same rows.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judges.core.naming import report_dir
from judges.core.results import (
    JudgementRow,
    ResultsRead,
    jsonl_text,
    parse_results,
    read_results,
)
from judges.core.spec import JudgeSpec, load_catalog, version_key
from judges.reports.model.build import build_report
from judges.reports.model.data import RESULTS_FILE, FolderReport
from judges.stats.regression.comparison import Comparison
from judges.verdicts.figures import dimensions_of, version_comparisons
from judges.verdicts.inputs import Sources


def record_command(judge: str, version: str) -> str:
    """The command that judges one prompt version: what has a cassette is replayed, the rest
    recorded live."""
    return f"python -m pytest --record=missing -k {shlex.quote(f'{judge}-{version}')}"


class ResultsMissing(FileNotFoundError):
    """A results file a report needs does not exist yet; the message says how to write it."""

    def __init__(self, path: Path, judge: str | None = None, version: str | None = None) -> None:
        how = (
            f"judge it first: `{record_command(judge, version)}`"
            if judge is not None and version is not None
            else "run `pytest` first to judge and write it"
        )
        super().__init__(f"no results file {path}: {how}")
        self.path = path


class UnknownVersion(ValueError):
    """A version asked for by name that the judge has no prompt for."""


def merge_rows(existing: list[JudgementRow], new: list[JudgementRow]) -> list[JudgementRow]:
    merged = {row.key: row for row in existing}
    merged.update({row.key: row for row in new})
    return sorted(merged.values(), key=lambda r: r.key)


@dataclass
class Results:
    """Results files on disk, with a session's merged files (their text) over them."""

    reports: Path
    merged: dict[tuple[str, str], str] = field(default_factory=dict)
    # Baseline runs replayed from their cassettes by a test session: regression gates read
    # these, never another copy in the report folder (which `--report-dir` may point away).
    recorded: dict[tuple[str, str], list[JudgementRow]] = field(default_factory=dict)

    def path(self, judge: str, version: str) -> Path:
        return report_dir(self.reports, judge, version) / RESULTS_FILE

    def merge(self, judge: str, version: str, rows: list[JudgementRow]) -> None:
        """Merge a session's rows into a folder's results, in memory."""
        path = self.path(judge, version)
        existing = read_results(path) if path.is_file() else ResultsRead([], [])
        kept = [line.text for line in existing.damaged]
        self.merged[(judge, version)] = jsonl_text(merge_rows(existing.rows, rows), kept)

    def exists(self, judge: str, version: str) -> bool:
        return (judge, version) in self.merged or self.path(judge, version).is_file()

    def read(self, judge: str, version: str) -> ResultsRead:
        """A folder's rows, and its damaged lines (with their file and line number)."""
        path = self.path(judge, version)
        # Merged rows go through their JSON text, exactly as a later rebuild reads them.
        if (judge, version) in self.merged:
            return parse_results(path, self.merged[(judge, version)])
        if not path.is_file():
            raise ResultsMissing(path, judge, version)
        return read_results(path)

    def rows(self, judge: str, version: str) -> list[JudgementRow]:
        return self.read(judge, version).rows

    def baseline_rows(self, judge: str, version: str) -> list[JudgementRow] | None:
        """A baseline version's rows (main run, and retest where recorded): as the session
        replayed them, else from its results file."""
        if (judge, version) in self.recorded:
            return self.recorded[(judge, version)]
        return self.rows(judge, version) if self.exists(judge, version) else None

    def versions(self, judge: str) -> list[str]:
        folder = self.reports / judge
        found = {p.name for p in folder.iterdir() if (p / RESULTS_FILE).is_file()}
        found |= {version for j, version in self.merged if j == judge}
        try:
            return sorted(found, key=version_key)
        except ValueError:
            return sorted(found)

    def neighbour(self, judge: str, version: str, spec: JudgeSpec | None, step: int) -> str | None:
        """The previous (step -1) or next (step +1) prompt version of a judge."""
        if spec is not None and version in spec.versions:
            ordered = spec.versions
        else:
            ordered = self.versions(judge) if (self.reports / judge).is_dir() else []
        if version not in ordered:
            return None
        index = ordered.index(version) + step
        return ordered[index] if 0 <= index < len(ordered) else None


def build_folder(results: Results, judge: str, version: str, sources: Sources) -> FolderReport:
    """The report of `<reports>/<judge>/<version>/` from its results (which must exist)."""
    found = results.read(judge, version)
    previous_version = results.neighbour(judge, version, sources.spec, -1)
    previous = None
    if previous_version is not None:
        there = results.exists(judge, previous_version)
        previous = (previous_version, results.rows(judge, previous_version) if there else None)
    named = {g.baseline for g in (sources.planted.gates if sources.planted else {}).values()}
    # A version that is its own baseline answers to the pins accepted before it.
    named |= {v for _, v in (sources.planted.pins if sources.planted else {})}
    found_baselines = {
        b: results.baseline_rows(judge, b)
        for b in sorted(b for b in named if b is not None and b != version)
    }
    baselines = {b: rows for b, rows in found_baselines.items() if rows is not None}
    return build_report(
        judge, version, found.rows, sources, previous, found.damaged, baselines=baselines
    )


def load_comparison(
    reports: Path,
    judge: str,
    before: str,
    after: str,
    catalog: Mapping[str, JudgeSpec] | None = None,
) -> list[Comparison]:
    """Prompt version `before` against `after` of one judge, from their results files.
    A version the judge does not have is refused: no command could record it."""
    spec = (load_catalog() if catalog is None else catalog).get(judge)
    for version in (before, after):
        if spec is not None and version not in spec.versions:
            raise UnknownVersion(
                f"{judge} has no prompt version {version} (its versions: "
                f"{', '.join(spec.versions)}; a version is a prompt file in {spec.root})"
            )
    results = Results(reports)
    rows: dict[str, Sequence[JudgementRow]] = {v: results.rows(judge, v) for v in (before, after)}
    dimensions = dimensions_of(spec, rows[after])
    pairs = (before, rows[before]), (after, rows[after])
    return list(version_comparisons(judge, *pairs, dimensions).values())
