"""`report --check` and `corpus report` answer "unchanged" from a fingerprint of what they
read and wrote, and only while none of it changed: an edited input or report, another
option, another package version each mean a full build."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import time
from pathlib import Path

import pytest

from judges.cli.main import main
from judges.storage.unchanged import Remembered, fingerprint

ROOT = Path(__file__).resolve().parents[1]


def test_the_fingerprint_follows_every_file_and_option(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    (inputs / "judge").mkdir(parents=True)
    results = inputs / "judge" / "results.jsonl"
    results.write_text('{"met": true}\n')
    (inputs / ".run.json").write_text("{}")  # a run's own metadata: not an input
    first = fingerprint([inputs], tmp_path, ["report", "--check"])
    assert fingerprint([inputs], tmp_path, ["report", "--check"]) == first

    (inputs / ".run.json").write_text('{"session": 2}')
    assert fingerprint([inputs], tmp_path, ["report", "--check"]) == first
    assert fingerprint([inputs], tmp_path, ["report", "--check", "--judge=x"]) != first
    time.sleep(0.01)
    results.write_text('{"met": false}')  # even of the same size
    assert fingerprint([inputs], tmp_path, ["report", "--check"]) != first
    changed = fingerprint([inputs], tmp_path, ["report", "--check"])
    (inputs / "judge" / "gates.toml").write_text("")  # a file added
    assert fingerprint([inputs], tmp_path, ["report", "--check"]) != changed


def test_an_answer_is_given_back_only_for_its_fingerprint(tmp_path: Path) -> None:
    remembered = Remembered.of("report --check", tmp_path, ["report", "--check"])
    assert remembered.answer("abc") is None  # nothing remembered: build
    remembered.keep("abc", ["report check: 3 files match what this run produces"])
    answer = remembered.answer("abc")
    assert answer is not None and answer.lines == (
        "report check: 3 files match what this run produces",
    )
    assert remembered.answer("abd") is None
    remembered.path.write_text("{not json")  # a damaged cache is a full build, not an error
    assert remembered.answer("abc") is None
    other = Remembered.of("report --check", tmp_path, ["report", "--check", "--judge=x"])
    assert other.path != remembered.path


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


def test_corpus_report_says_unchanged_from_the_fingerprint_until_a_judgement_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpora = tmp_path / "planted_sets" / "corpora"
    shutil.copytree(ROOT / "planted_sets" / "corpora" / "product_answers", corpora / "c")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.chdir(tmp_path)
    folders = ["--corpora", str(corpora), "--reports", str(tmp_path / "reports")]

    code, built = _run("corpus", "report", *folders)
    assert code == 0 and "wrote " in built and "nothing changed" not in built
    code, again = _run("corpus", "report", *folders)
    assert code == 0 and again.startswith("python -m judges corpus report: nothing changed")
    report = tmp_path / "reports" / "c" / "corpus_report.md"
    assert f"unchanged {report}" in again
    code, checked = _run("corpus", "report", "--check", *folders)
    assert code == 0 and "corpus report files match their corpora" in checked

    judgements = corpora / "c" / "judgements.jsonl"
    rows = [json.loads(line) for line in judgements.read_text().splitlines()]
    rows[0]["score"] = 0 if rows[0]["score"] else 6  # one judgement changed
    judgements.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, stale = _run("corpus", "report", "--check", *folders)
    assert code == 1 and "nothing changed" not in stale  # built, and found different
    code, rebuilt = _run("corpus", "report", *folders)
    assert code == 0 and f"wrote {report}" in rebuilt

    report.write_text(report.read_text() + "edited by hand\n")
    code, edited = _run("corpus", "report", "--check", *folders)
    assert code == 1 and "nothing changed" not in edited  # an edited report is caught
