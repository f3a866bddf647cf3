"""Report folders, built once at the end of a run, then written or checked against the disk.

Every report file is computed from the folder's merged results alone (plus the judge's spec
and planted set), so a partial run still yields a complete report, `python -m judges report`
rebuilds the same bytes without judging, and a replay of unchanged inputs rewrites every
file byte for byte. What differs between runs (time, session, durations, package versions)
is in `.run.json` beside the report, which git ignores, and in the terminal summary.

`check()` is the lock-file check CI wants: it names every file this run would change and
writes nothing.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from judges.calls.credentials import scrub
from judges.core.naming import report_dir
from judges.core.results import JudgementRow
from judges.core.spec import JudgeSpec, load_catalog
from judges.reports.model.data import (
    COMPARISON_MD,
    INDEX_HTML,
    REPORT_JSON,
    RESULTS_FILE,
    FolderReport,
)
from judges.reports.model.folders import Results, ResultsMissing, build_folder
from judges.reports.model.metadata import RUN_FILE, RunMetadata
from judges.reports.model.reply_checks import (
    REPLY_FIXTURES_FILE,
    ReplyCheck,
    checks_text,
    merged_checks,
    read_checks,
)
from judges.reports.render.files import render_files
from judges.reports.render.overview import render_overview, version_key
from judges.stats.estimates.memo import Memo
from judges.storage.files import atomic_write_text
from judges.verdicts.inputs import Sources, load_sources


@dataclass(frozen=True)
class ReportSet:
    """The report folders of a run and the bytes due on disk, before and after writing.

    Iterating yields the paths of every file due (results files included).
    """

    reports: Path
    folders: tuple[FolderReport, ...]
    files: Mapping[Path, str]  # every file due, by path
    stale: tuple[Path, ...]  # files no longer due (a comparison.md without a previous version)
    meta: RunMetadata
    changed: tuple[Path, ...] = ()  # files that write() wrote or removed
    differing: tuple[Path, ...] = ()  # files that check() found different from what is due
    checked: bool = False

    def __iter__(self) -> Iterator[Path]:
        return iter(self.files)

    def _differing(self) -> tuple[Path, ...]:
        due = [path for path, text in self.files.items() if _bytes(path) != text.encode("utf-8")]
        return tuple(due + [path for path in self.stale if path.exists()])

    def write(self) -> ReportSet:
        """Write the files whose bytes differ, remove stale ones, and write each `.run.json`."""
        changed = self._differing()
        for path in changed:
            if path in self.files:
                atomic_write_text(path, self.files[path])
            else:
                path.unlink(missing_ok=True)
        for folder in self.folders:
            where = report_dir(self.reports, folder.judge, folder.version)
            atomic_write_text(where / RUN_FILE, self.meta.json_text())
        return replace(self, changed=changed)

    def check(self) -> ReportSet:
        """Compare the files due with the disk; write nothing."""
        return replace(self, checked=True, differing=self._differing())


def _bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _build_set(
    results: Results,
    targets: Sequence[tuple[str, str]],
    catalog: Mapping[str, JudgeSpec],
    planted_root: Path,
    memo: Memo | None = None,
    reply_checks: Mapping[tuple[str, str], Sequence[ReplyCheck]] | None = None,
) -> tuple[tuple[FolderReport, ...], dict[Path, str], tuple[Path, ...]]:
    """The folder reports of `targets`, their files by path, and the stale files.
    `reply_checks`: this run's reply-fixture outcomes, over those on disk."""
    cache: dict[str, Sources] = {}
    folders: list[FolderReport] = []
    files: dict[Path, str] = {}
    stale: list[Path] = []
    for judge, version in targets:
        if judge not in cache:
            cache[judge] = replace(load_sources(judge, catalog, planted_root), memo=memo)
        folder = build_folder(results, judge, version, cache[judge])
        where = report_dir(results.reports, judge, version)
        new = (reply_checks or {}).get((judge, version), ())
        checks = merged_checks(read_checks(where), new)
        if checks:
            folder = replace(folder, reply_checks=checks)
            files[where / REPLY_FIXTURES_FILE] = scrub(checks_text(checks))
        rendered = render_files(folder)
        # Rows are scrubbed when made; this is the last net before anything reaches disk.
        files |= {where / name: scrub(text) for name, text in rendered.items()}
        if COMPARISON_MD not in rendered:
            stale.append(where / COMPARISON_MD)
        folders.append(folder)
    return tuple(folders), files, tuple(stale)


def _overview(reports: Path, files: Mapping[Path, str]) -> dict[Path, str]:
    """reports/index.html from every folder's report.json: this run's, else the disk's."""
    found: dict[tuple[str, str], str] = {}
    if reports.is_dir():
        for path in reports.glob(f"*/*/{REPORT_JSON}"):
            found[(path.parent.parent.name, path.parent.name)] = path.read_text(encoding="utf-8")
    for path, text in files.items():
        if path.name == REPORT_JSON:
            found[(path.parent.parent.name, path.parent.name)] = text
    if not found:
        return {}
    order = sorted(found, key=lambda key: (key[0], version_key(key[1])))
    page = render_overview([json.loads(found[key]) for key in order])
    return {reports / INDEX_HTML: scrub(page)}


def session_reports(
    rows: Sequence[JudgementRow],
    reports: Path,
    planted_root: Path,
    catalog: Mapping[str, JudgeSpec],
    session_id: str | None = None,
    recorded_baselines: Mapping[tuple[str, str], list[JudgementRow]] | None = None,
    memo: Memo | None = None,
    reply_checks: Mapping[tuple[str, str], Sequence[ReplyCheck]] | None = None,
) -> ReportSet:
    """A session's rows merged into each results file, and the reports they affect.

    A version's successor is rebuilt too when it has results: its comparison reads this
    version's rows. `recorded_baselines`: (judge, version) -> the baseline's main run (and
    retest run, its second draw) as the session replayed them. `memo`: the session's
    statistics, which its tests may have computed already. `reply_checks`: (judge,
    version) -> the outcomes of its reply fixtures in this session. Nothing is written until
    `write()`.
    """
    started = time.perf_counter()
    results = Results(reports, recorded=dict(recorded_baselines or {}))
    by_folder: dict[tuple[str, str], list[JudgementRow]] = {}
    for row in rows:
        by_folder.setdefault((row.judge, row.prompt_version), []).append(row)
    for (judge, version), mine in sorted(by_folder.items()):
        results.merge(judge, version, mine)
    targets = sorted(by_folder)
    for judge, version in sorted(by_folder):
        following = results.neighbour(judge, version, catalog.get(judge), +1)
        if (
            following is not None
            and (judge, following) not in targets
            and results.exists(judge, following)
        ):
            targets.append((judge, following))
    for judge, version in sorted(reply_checks or {}):  # a run of the reply fixtures alone
        if (judge, version) not in targets and results.exists(judge, version):
            targets.append((judge, version))
    folders, files, stale = _build_set(
        results, sorted(targets), catalog, planted_root, memo, reply_checks
    )
    files |= _overview(reports, files)
    merged = {results.path(j, v): results.merged[(j, v)] for j, v in sorted(by_folder)}
    meta = RunMetadata.collect(
        "pytest session",
        session_id,
        {
            # Workers judge concurrently, so this is call time, not wall time.
            "judge calls (sum of latencies)": math.fsum(row.latency_s for row in rows),
            "report build": time.perf_counter() - started,
        },
    )
    return ReportSet(reports, folders, merged | files, stale, meta)


def write_results(rows: Sequence[JudgementRow], reports: Path) -> list[Path]:
    """A session's rows merged into each version's results.jsonl and written at once
    (atomically, only where the bytes change): what a session must not lose, on disk before
    its reports are built, which take far longer and may be interrupted. Returns the files."""
    results = Results(reports)
    for judge, version in sorted({(row.judge, row.prompt_version) for row in rows}):
        mine = [row for row in rows if (row.judge, row.prompt_version) == (judge, version)]
        results.merge(judge, version, mine)
    paths = []
    for (judge, version), text in sorted(results.merged.items()):
        path = results.path(judge, version)
        if _bytes(path) != text.encode("utf-8"):
            atomic_write_text(path, text)
        paths.append(path)
    return paths


def disk_reports(
    reports: Path,
    planted_root: Path,
    judge: str | None = None,
    catalog: Mapping[str, JudgeSpec] | None = None,
) -> ReportSet:
    """Every report of the results files on disk, for one judge or all; nothing written."""
    started = time.perf_counter()
    pattern = f"{judge or '*'}/*/{RESULTS_FILE}"
    found = sorted(reports.glob(pattern)) if reports.is_dir() else []
    if not found:
        raise ResultsMissing(reports / pattern)
    targets = [(p.parent.parent.name, p.parent.name) for p in found]
    catalog = load_catalog() if catalog is None else catalog
    folders, files, stale = _build_set(Results(reports), targets, catalog, planted_root)
    files |= _overview(reports, files)
    meta = RunMetadata.collect(
        "python -m judges report", None, {"report build": time.perf_counter() - started}
    )
    return ReportSet(reports, folders, files, stale, meta)


def rebuild_reports(
    reports: Path,
    planted_root: Path,
    judge: str | None = None,
    catalog: Mapping[str, JudgeSpec] | None = None,
) -> ReportSet:
    """Rebuild every report file from the results files on disk, for one judge or all."""
    return disk_reports(reports, planted_root, judge, catalog).write()
