"""`python -m judges corpus judge`: a corpus's outputs judged through record/replay against
the fake judge on 127.0.0.1, as a user runs it: record, replay offline, resume, misses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main

from ._corpus import ANSWERS
from ._support import FAKE_KEY, FakeJudge


def _judgements(root: Path) -> list[dict[str, Any]]:
    text = (root / "corpora" / "tiny" / "judgements.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_record_then_replay_offline_reproduces_every_judgement(
    corpus: tuple[Path, list[str]], fake_judge: FakeJudge, capsys: pytest.CaptureFixture[str]
) -> None:
    root, args = corpus
    record = ["corpus", "judge", "tiny", "--record", "--judge-base-url", fake_judge.url, *args]
    assert main(record) == 0
    rows = _judgements(root)
    # 3 systems x 3 items x 2 runs, each a row: a score, or an explicit error.
    assert len(rows) == 18
    by_system = {s: [r for r in rows if r["system"] == s] for s in ANSWERS}
    assert {r["score"] for r in by_system["good"]} == {7} and not any(
        r["flagged"] for r in by_system["good"]
    )
    # The judge's own flag (no product match) is kept; its cap holds factual accuracy at 1.
    assert {(r["score"], r["flagged"]) for r in by_system["mixup"]} == {(5, True)}
    assert all("unparseable" in r["error"] and "score" not in r for r in by_system["broken"])
    assert {r["run"] for r in rows} == {0, 1}
    calls = len(fake_judge.calls)

    capsys.readouterr()
    assert main(["corpus", "judge", "tiny", "--check", *args]) == 0
    assert "matches its cassettes" in capsys.readouterr().out
    assert len(fake_judge.calls) == calls  # the replay sent nothing

    cassettes = list((root / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 18
    assert not [p for p in cassettes if FAKE_KEY in p.read_text()]

    reports = root / "reports"
    assert main(["corpus", "report", "tiny", "--corpora", args[1], "--reports", str(reports)]) == 0
    report = (reports / "tiny" / "corpus_report.md").read_text()
    assert "## Test-retest" in report and "flagged" in report and "error rows" in report


def test_a_second_record_keeps_what_is_recorded_and_records_only_the_missing(
    corpus: tuple[Path, list[str]], fake_judge: FakeJudge, capsys: pytest.CaptureFixture[str]
) -> None:
    root, args = corpus
    record = ["corpus", "judge", "tiny", "--record", "--judge-base-url", fake_judge.url, *args]
    assert main(record) == 0
    first = _judgements(root)
    # An interrupted recording leaves some cassettes: the same command goes on from there.
    missing = sorted((root / "cassettes").rglob("*.yaml"))[:2]
    for path in missing:
        path.unlink()
    fake_judge.received.clear()
    capsys.readouterr()
    assert main(record) == 0
    assert "16 of 18 judgements already recorded: replaying" in capsys.readouterr().err
    assert 2 <= len(fake_judge.calls) <= 2 * 3  # the two missing (an unparseable one retries)
    assert _judgements(root) == first


def test_a_replay_without_a_cassette_says_how_to_record(
    corpus: tuple[Path, list[str]], fake_judge: FakeJudge, capsys: pytest.CaptureFixture[str]
) -> None:
    root, args = corpus
    capsys.readouterr()
    assert main(["corpus", "judge", "tiny", *args]) == 2
    err = capsys.readouterr().err
    assert "python -m judges corpus judge tiny --record" in err
    assert not (root / "corpora" / "tiny" / "judgements.jsonl").exists()
    assert not fake_judge.calls


def test_an_unknown_judge_or_version_is_refused_naming_the_manifest(
    corpus: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, args = corpus
    manifest = root / "corpora" / "tiny" / "corpus.toml"
    manifest.write_text(manifest.read_text().replace('version = "0.3"', 'version = "9.9"'))
    capsys.readouterr()
    assert main(["corpus", "judge", "tiny", *args]) == 2
    err = capsys.readouterr().err
    assert "corpus.toml" in err and "'9.9'" in err and "0.3" in err


def test_a_record_with_every_cassette_in_place_starts_no_embedded_judge(
    corpus: tuple[Path, list[str]],
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing to record, nothing started: the second `--record` (no --judge-base-url, so a
    local model would be served by the embedded judge) replays every cassette."""
    import judges.calls.local_server

    root, args = corpus
    record = ["corpus", "judge", "tiny", "--record", *args]
    assert main([*record, "--judge-base-url", fake_judge.url]) == 0
    first, calls = _judgements(root), len(fake_judge.calls)
    started: list[dict[str, Any]] = []

    def start(**kwargs: Any) -> None:
        started.append(kwargs)
        raise judges.calls.local_server.LocalServerError("the embedded judge was started")

    monkeypatch.setattr(judges.calls.local_server, "start_local_server", start)
    assert main(record) == 0
    assert started == [] and len(fake_judge.calls) == calls
    assert _judgements(root) == first

    # One call to make: the embedded judge is wanted (it serves its own model only, so the
    # command stops before starting it, naming --base-url).
    next(iter((root / "cassettes").rglob("*.yaml"))).unlink()
    capsys.readouterr()
    assert main(record) == 2
    assert "the embedded judge serves local:" in capsys.readouterr().err
