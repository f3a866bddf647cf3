"""Committed reports are a pure function of the cassettes: a replay rewrites them byte for
byte, and `--check-reports` fails naming each file a run would change, writing nothing."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from ._support import ITEMS, JUDGE, FakeJudge, JudgesProject, versions

HINT = "run `python -m pytest regression_tests` and commit the result"


def report_bytes(root: Path) -> dict[str, bytes]:
    """Every file under reports/ but the git-ignored run metadata."""
    files = sorted(p for p in (root / "reports").rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files if p.name != ".run.json"}


def test_replays_rewrite_reports_byte_for_byte_and_the_check_names_edits(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    assert project.run(record="all").ret == pytest.ExitCode.OK
    first = project.run()
    assert first.ret == pytest.ExitCode.OK
    written = report_bytes(project.root)
    assert len(written) >= 4 * len(versions())
    latest = project.root / "reports" / JUDGE / versions()[-1]
    # What differs between runs is in .run.json and the terminal summary only.
    (session_id,) = re.findall(r"^run session id: (\w+)$", first.stdout.str(), flags=re.M)
    assert f'"session_id": "{session_id}"' in (latest / ".run.json").read_text()
    assert not [name for name, data in written.items() if session_id.encode() in data]

    second = project.run(workers="2")
    assert second.ret == pytest.ExitCode.OK
    assert report_bytes(project.root) == written

    # The check passes on untouched reports (here after a `-k` run of one item) and writes
    # nothing; it covers the folders the run touched.
    one_item = ["-k", f"{JUDGE}-{versions()[-1]}-{ITEMS[0]['id']}", "--check-reports"]
    checked = project.run(*one_item)
    assert checked.ret == pytest.ExitCode.OK
    checked.stdout.fnmatch_lines(["report check: * files match what this run produces"])
    checked.assert_outcomes(passed=1)

    edited = latest / "report.md"
    edited.write_bytes(edited.read_bytes().replace(b"| Judge | ", b"| Judge (edited) | "))
    failing = project.run(*one_item)
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    failing.assert_outcomes(passed=1)
    shown = edited.relative_to(project.root)
    failing.stdout.fnmatch_lines([f"{shown} differs from what the cassettes produce; {HINT}"])
    assert b"| Judge (edited) | " in edited.read_bytes()  # --check-reports overwrote nothing
    others = {k: v for k, v in report_bytes(project.root).items() if k != str(shown)}
    assert others == {k: v for k, v in written.items() if k != str(shown)}


def test_an_unchanged_report_check_answers_at_once_and_an_edit_is_still_caught(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    assert project.run(record="all").ret == pytest.ExitCode.OK
    built = project.report("--check")
    assert built.code == 0 and "nothing changed" not in built.out
    started = time.perf_counter()
    again = project.report("--check")
    assert again.code == 0, again.err
    assert again.out.startswith("python -m judges report --check: nothing changed since")
    assert "files match what this run produces" in again.out
    assert time.perf_counter() - started < 5  # the build itself: no statistics computed

    # An edited input: one row of the results the reports are built from.
    results = project.root / "reports" / JUDGE / versions()[-1] / "results.jsonl"
    kept = results.read_bytes()
    rows = [json.loads(line) for line in kept.decode().splitlines()]
    rows[0]["met"] = not rows[0]["met"]
    results.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    stale = project.report("--check")
    assert stale.code == 1 and "nothing changed" not in stale.out
    assert "differs from what the results files produce" in stale.err
    results.write_bytes(kept)
    assert project.report("--check").code == 0

    # An edited report is caught as well.
    report = results.parent / "report.md"
    report.write_bytes(report.read_bytes().replace(b"| Judge | ", b"| Judge (edited) | "))
    edited = project.report("--check")
    assert edited.code == 1 and f"{report.relative_to(project.root)} differs" in edited.err
