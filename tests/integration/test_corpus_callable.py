"""`python -m judges corpus judge` with a team's judge callable: each judgement's requests (the
OpenAI SDK's grade and a cross-check sent with `requests`) recorded in its cassette against
the fake judge on 127.0.0.1, replayed offline with no key, and a replay that sends less than
was recorded refused, as the pytest session does."""

from __future__ import annotations

import _socket
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from judges.cli.main import main
from judges.core.spec import load_catalog

from ._support import FAKE_KEY, FakeJudge, Received, forget_modules, write_team_judge

PACKAGE = "team_corpus"
TEAM_MODULE = """
import json
import os

import requests
from openai import OpenAI

JUDGE_PROMPT_VERSION = "1.0"
CROSS_CHECK = True


def judge(question: str, answer: str) -> dict:
    client = OpenAI(api_key=os.environ["TEAM_JUDGE_KEY"], max_retries=0)
    graded = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": f"Grade 0-9: {question} -> {answer}"}],
    )
    score = json.loads(graded.choices[0].message.content)["score"]
    if not CROSS_CHECK:
        return {"score": score, "checked": None}
    checked = requests.post(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        json={"model": "gpt-4o-mini",
              "messages": [{"role": "user", "content": f"Is {score} right for {answer}?"}]},
        headers={"Authorization": "Bearer " + os.environ["TEAM_JUDGE_KEY"]},
        timeout=10,
    ).json()
    return {"score": score, "checked": checked["choices"][0]["message"]["content"] == "yes"}
"""
ANSWERS = {"good": "Nominal in cash.", "poor": "POOR: it always repays."}
MANIFEST = """name = "team"
source = "written for this test"
licence = "unknown"

[scale]
low = 0
high = 9
step = 1

[judges.team]
description = "the team's callable on the fake judge"

[judges.team.judged]
judge = "checked"
version = "1.0"
model = "openai:gpt-4o-mini"
score = "score"
output = "answer"
"""


def grader(received: Received) -> str:
    prompt = received.body["messages"][-1]["content"]
    if prompt.startswith("Is "):
        return "yes"
    return json.dumps({"score": 2 if "POOR" in prompt else 8})


@pytest.fixture
def team_corpus(
    tmp_path: Path, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[str]]:
    monkeypatch.setattr(socket.socket, "connect", _socket.socket.connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _socket.socket.connect_ex)
    monkeypatch.chdir(tmp_path)
    items = [{"id": f"Q{i}", "inputs": {"question": f"What does note {i} pay?"}} for i in (1, 2)]
    outputs = [{"system": s, "item": f"Q{i}", "output": a}
               for s, a in ANSWERS.items() for i in (1, 2)]  # fmt: skip
    corpus = "planted_sets/corpora/team"
    write_team_judge(
        tmp_path, PACKAGE, "checked", TEAM_MODULE,
        {
            f"{corpus}/corpus.toml": MANIFEST,
            f"{corpus}/items.jsonl": "".join(json.dumps(i) + "\n" for i in items),
            f"{corpus}/outputs.jsonl": "".join(json.dumps(o) + "\n" for o in outputs),
        },
        suite=False,
    )  # fmt: skip
    fake_judge.content = grader
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    monkeypatch.setenv("TEAM_JUDGE_KEY", FAKE_KEY)  # the team's own variable: no OPENAI_API_KEY
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _forget_team_module()
    return tmp_path, ["--cassettes", str(tmp_path / "cassettes")]


def _forget_team_module() -> None:
    forget_modules(PACKAGE)
    load_catalog.cache_clear()  # an edited module is read again, as a new process would


def _judgements(root: Path) -> list[dict[str, Any]]:
    text = (root / "planted_sets" / "corpora" / "team" / "judgements.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_a_callable_judge_records_every_request_and_replays_offline(
    team_corpus: tuple[Path, list[str]], fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    root, args = team_corpus
    assert main(["corpus", "judge", "team", "--record", *args]) == 0, capsys.readouterr()
    assert len(fake_judge.calls) == 2 * len(ANSWERS) * 2  # the grade and the cross-check
    rows = _judgements(root)
    assert sorted((r["system"], r["score"]) for r in rows) == [
        ("good", 8), ("good", 8), ("poor", 2), ("poor", 2),
    ]  # fmt: skip
    cassettes = sorted((root / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 4 and cassettes[0].parent.parent.parent.name == "openai-gpt-4o-mini"
    for path in cassettes:
        text = path.read_text(encoding="utf-8")
        sent = [json.loads(i["request"]["body"]) for i in yaml.safe_load(text)["interactions"]]
        assert [m["messages"][0]["content"][:3] for m in sent] == ["Gra", "Is "], path
        assert FAKE_KEY not in text and "Bearer" not in text

    # Offline: the team's code runs against the cassettes alone.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    calls = len(fake_judge.calls)
    capsys.readouterr()
    assert main(["corpus", "judge", "team", "--check", *args]) == 0, capsys.readouterr()
    assert len(fake_judge.calls) == calls

    # A replay that sends less than was recorded (the cross-check gone) is refused.
    module = root / PACKAGE / "judge.py"
    module.write_text(module.read_text().replace("CROSS_CHECK = True", "CROSS_CHECK = False"))
    _forget_team_module()
    capsys.readouterr()
    assert main(["corpus", "judge", "team", "--check", *args]) == 2
    err = capsys.readouterr().err
    assert "it holds 2 recorded requests and the judge sent 1 of them" in err, err
    assert "python -m judges corpus judge team --record" in err, err


def test_a_callable_judge_s_entry_names_its_baseline_model(
    team_corpus: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, args = team_corpus
    manifest = root / "planted_sets" / "corpora" / "team" / "corpus.toml"
    manifest.write_text(MANIFEST.replace("openai:gpt-4o-mini", "openai:gpt-4o"))
    assert main(["corpus", "judge", "team", "--record", *args]) == 2
    err = capsys.readouterr().err
    assert f"{manifest}: [judges.team.judged] names model 'openai:gpt-4o'" in err, err
    assert "its baseline_model 'openai:gpt-4o-mini'; name that model there" in err, err
