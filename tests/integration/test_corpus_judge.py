"""`python -m judges corpus judge`: a corpus's outputs judged through record/replay against
the fake judge on 127.0.0.1, as a user runs it: record, replay offline, resume, misses."""

from __future__ import annotations

import _socket
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main

from ._support import FAKE_KEY, FakeJudge, Received, product_identity_verdict

QUESTION = "What does a barrier reverse convertible pay at maturity?"
REFERENCE = "Nominal in cash unless the barrier was touched and the final fixing is below strike."
ANSWERS = {
    "good": "Cash at nominal unless the barrier was touched and it closes below the strike.",
    "mixup": "MIXUP: a capital-protected note always repays the nominal.",
    "broken": "BROKEN: the judge cannot read this one.",
}


def _manifest() -> str:
    return """name = "tiny"
source = "written for this test"
licence = "unknown"

[scale]
low = 0
high = 9
step = 1

[judges.new]
description = "product_identity 0.3 on the fake judge"

[judges.new.judged]
judge = "product_identity"
version = "0.3"
model = "local:fake-judge"
score = "core_total"
output = "answer"
runs = 2
"""


def _write_corpus(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "corpus.toml").write_text(_manifest())
    items = [{"id": f"Q{i}", "inputs": {"question": QUESTION, "reference": REFERENCE}}
             for i in (1, 2, 3)]  # fmt: skip
    outputs = [{"system": system, "item": f"Q{i}", "output": answer}
               for system, answer in ANSWERS.items() for i in (1, 2, 3)]  # fmt: skip
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (folder / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))


def _reply(received: Received) -> str:
    prompt = received.body["messages"][-1]["content"]
    if "BROKEN" in prompt:
        return "no JSON here at all"
    verdict: dict[str, Any] = product_identity_verdict(1 if "MIXUP" in prompt else 3, "fake")
    return json.dumps(verdict)


@pytest.fixture
def corpus(
    tmp_path: Path, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[str]]:
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", FAKE_KEY)
    monkeypatch.setattr(socket.socket, "connect", _socket.socket.connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _socket.socket.connect_ex)
    monkeypatch.chdir(tmp_path)
    fake_judge.content = _reply
    _write_corpus(tmp_path / "corpora" / "tiny")
    args = ["--corpora", str(tmp_path / "corpora"), "--cassettes", str(tmp_path / "cassettes")]
    return tmp_path, args


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
