"""A team's judge callable that never returns, and one that returns late: each turns into an
explicit `transport` row after its time (3 x --judge-timeout), the session goes on, and what
the late one sends after its time lands in no cassette, not even the one of the judgement
in flight when it sends (vcrpy patches the HTTP libraries for the whole process)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from judges.core.spec import load_catalog

from ._support import FAKE_KEY, FakeJudge, Received, forget_modules, write_team_judge
from ._walkthrough import INNER_OPTIONS

PACKAGE = "team_slow"
# The late judge sends once the next judgement is in flight, and that one waits until the
# late request was sent: the late request meets an open cassette, on record and replay.
TEAM_MODULE = """
import threading

from openai import OpenAI

JUDGE_PROMPT_VERSION = "1.0"
next_in_flight = threading.Event()
late_sent = threading.Event()


def grade(answer: str) -> int:
    client = OpenAI(max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": f"Grade: {answer}"}]
    )
    return int(reply.choices[0].message.content)


def judge(answer: str) -> dict:
    if answer == "never":
        threading.Event().wait()  # hangs for good
    if answer == "late":
        next_in_flight.wait(60)  # long past its time
        try:
            return {"score": grade(answer)}
        finally:
            late_sent.set()
    next_in_flight.set()
    late_sent.wait(60)
    return {"score": grade(answer)}
"""
ANSWERS = {"SL-01": "never", "SL-02": "late", "SL-03": "good", "SL-04": "fine"}
TIMEOUT_S = 1.0


def items() -> str:
    lines = [
        {"id": item_id, "slug": answer, "judge": "slow", "control": True, "category": "control",
         "inputs": {"answer": answer}, "expect": [{"field": "score", "op": ">=", "value": 2}],
         "provenance": {"source": "hand"}}
        for item_id, answer in ANSWERS.items()
    ]  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.fixture
def slow(repository: Path, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_team_judge(
        repository, PACKAGE, "slow", TEAM_MODULE, {"planted_sets/slow/items.jsonl": items()}
    )
    fake_judge.content = lambda received: "3"
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return repository


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    forget_modules(PACKAGE)  # its events start unset, as in a new process
    load_catalog.cache_clear()
    return pytester.runpytest_inprocess(*INNER_OPTIONS, *args)


def _sent(received: list[Received]) -> list[str]:
    return [r.body["messages"][0]["content"] for r in received]


def _rows(root: Path) -> dict[str, dict[str, object]]:
    text = (root / "reports" / "slow" / "1.0" / "results.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    return {str(row["item_id"]): row for row in rows if row["run"] == "main"}


def test_a_hung_and_a_late_callable_become_error_rows_and_nothing_late_is_written(
    slow: Path, pytester: pytest.Pytester, fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    started = time.monotonic()
    recorded = run(pytester, "--record", "--judge-timeout", str(TIMEOUT_S))
    output = recorded.stdout.str()
    assert time.monotonic() - started < 60, "a hung callable held the session"
    # The late request was sent while SL-03's judgement was in flight, before SL-03's own.
    assert _sent(fake_judge.calls)[:2] == ["Grade: late", "Grade: good"], _sent(fake_judge.calls)
    rows = _rows(slow)
    for item_id in ("SL-01", "SL-02"):
        row = rows[item_id]
        assert row["status"] == "transport", row
        assert "team_slow.judge:judge gave no verdict within 3 s (3 x --judge-timeout 1)" in str(
            row["error"]
        )
        assert "nothing it sends from now on is recorded or answered" in str(row["error"])
    assert rows["SL-03"]["verdict"] == {"score": 3} and rows["SL-04"]["verdict"] == {"score": 3}
    assert "gave no verdict within 3 s" in output
    cassettes = sorted((slow / "cassettes" / "slow" / "1.0").rglob("*.yaml"))
    assert [p.name for p in cassettes] == ["SL-03-good.yaml", "SL-04-fine.yaml"], cassettes
    for path in cassettes:
        text = path.read_text(encoding="utf-8")
        assert "Grade: late" not in text and text.count("Grade: ") == 1, path

    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    replayed = run(pytester, "--judge-timeout", str(TIMEOUT_S), "-k", "planted")
    assert replayed.ret == 1, replayed.stdout.str()[-3000:]  # the two error rows fail
    replayed.assert_outcomes(passed=2, failed=2)
    again = _rows(slow)
    assert [again[i]["status"] for i in sorted(again)] == ["transport", "transport", "ok", "ok"]
    assert sorted(p.name for p in (slow / "cassettes").rglob("*.yaml")) == [
        "SL-03-good.yaml", "SL-04-fine.yaml",
    ]  # fmt: skip
