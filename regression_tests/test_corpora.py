"""The corpora under planted_sets/corpora, replayed offline and checked against what is
committed: a judged corpus's judgements reproduce from its cassettes, and every corpus
report is up to date with its corpus. Neither writes a file (`--check`)."""

import json
from pathlib import Path

import pytest

from judges.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "planted_sets" / "corpora"
REPORTS = ROOT / "reports" / "corpora"
CASSETTES = ROOT / "cassettes" / "corpora"
JUDGED = sorted(p.parent.name for p in CORPORA.glob("*/corpus.toml") if ".judged]" in p.read_text())
# A project without corpora has nothing to check here: skipped, with the folder it looked for.
pytestmark = pytest.mark.skipif(not CORPORA.is_dir(), reason=f"no corpora: {CORPORA} absent")


@pytest.mark.parametrize("name", JUDGED)
def test_a_judged_corpus_replays_to_its_committed_judgements(name, capsys):
    code = main(["corpus", "judge", name, "--check", "--corpora", str(CORPORA),
                 "--cassettes", str(CASSETTES)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    assert "matches its cassettes" in captured.out


def test_every_corpus_report_is_up_to_date(capsys):
    code = main(["corpus", "report", "--check", "--corpora", str(CORPORA),
                 "--reports", str(REPORTS)])  # fmt: skip
    assert code == 0, capsys.readouterr().err[-2000:]


@pytest.mark.parametrize("name", JUDGED)
def test_a_judged_corpus_report_shows_each_part(name):
    report = (REPORTS / name / "corpus_report.md").read_text(encoding="utf-8")
    for part in ("better than (Holm)", "P(first)", "## Judge change:", "## Test-retest",
                 "## PPI++", "flagged"):  # fmt: skip
        assert part in report, part
    queue = (REPORTS / name / "review_queue.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in queue]
    assert all(row["reason"] for row in rows)
