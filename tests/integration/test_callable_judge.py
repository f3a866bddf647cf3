"""A team's judge callable that calls twice per judgement, through two HTTP libraries (the
OpenAI SDK for the grade, `requests` for a cross-check): both requests recorded in one
cassette and replayed offline; an edited cross-check under an unchanged version fails
naming what changed; a dead server stops the recording at once."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
import yaml

from judges.core.spec import load_catalog

from ._support import FAKE_KEY, FakeJudge, Received, forget_modules, write_team_judge
from ._walkthrough import INNER_OPTIONS

PACKAGE = "team_checked"
TEAM_MODULE = """
import json
import os

import requests
from openai import OpenAI

JUDGE_PROMPT_VERSION = "1.0"
CHECK = "Does the grade follow from the answer? Reply yes or no."


def judge(answer: str) -> dict:
    client = OpenAI(max_retries=0)
    graded = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": f"Grade 0-3: {answer}"}]
    )
    score = json.loads(graded.choices[0].message.content)["score"]
    checked = requests.post(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        json={"model": "gpt-4o-mini",
              "messages": [{"role": "user", "content": f"{CHECK} {answer} -> {score}"}]},
        headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
        timeout=10,
    ).json()
    agrees = "yes" in checked["choices"][0]["message"]["content"].lower()
    return {"score": score, "checked": agrees}
"""
ANSWERS = {
    "AC-01": ("wrong-total", "The total is 12 (it is 21).", False),
    "AC-02": ("wrong-unit", "It weighs 3 metres.", False),
    "AC-03": ("right-total", "The total is 21.", True),
    "AC-04": ("right-unit", "It weighs 3 kilograms.", True),
}


def items() -> str:
    lines = []
    for item_id, (slug, answer, control) in ANSWERS.items():
        expect = {"field": "score", "op": ">=" if control else "<=", "value": 2 if control else 1}
        lines.append(
            {"id": item_id, "slug": slug, "judge": "checked", "control": control,
             "category": "control" if control else "wrong_fact", "inputs": {"answer": answer},
             "expect": [expect], "provenance": {"source": "hand"}}
        )  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


def grader(received: Received) -> str:
    """Grades an answer by whether it was planted right; agrees with every grade."""
    prompt = received.body["messages"][-1]["content"]
    if prompt.startswith("Does the grade"):
        return "yes"
    answer = prompt.removeprefix("Grade 0-3: ")
    right = any(a == answer and control for _, a, control in ANSWERS.values())
    return json.dumps({"score": 3 if right else 0})


@pytest.fixture
def checked(repository: Path, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_team_judge(
        repository, PACKAGE, "checked", TEAM_MODULE,
        {"planted_sets/checked/items.jsonl": items()},
    )  # fmt: skip
    fake_judge.content = grader
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return repository


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    forget_modules(PACKAGE)
    load_catalog.cache_clear()  # an edited module is read again, as a new process would
    return pytester.runpytest_inprocess(*INNER_OPTIONS, *args)


def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens


def test_both_calls_record_and_replay_and_an_edited_one_is_named(
    checked: Path, pytester: pytest.Pytester, fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    recorded = run(pytester, "--record")
    assert recorded.ret == 0, recorded.stdout.str()[-2000:]
    assert len(fake_judge.calls) == 2 * len(ANSWERS)  # the grade and the cross-check
    cassettes = sorted((checked / "cassettes" / "checked" / "1.0").rglob("*.yaml"))
    assert len(cassettes) == len(ANSWERS)
    for path in cassettes:
        text = path.read_text(encoding="utf-8")
        sent = [i["request"] for i in yaml.safe_load(text)["interactions"]]
        prompts = [json.loads(r["body"])["messages"][0]["content"] for r in sent]
        assert prompts[0].startswith("Grade 0-3: ") and prompts[1].startswith("Does the grade")
        assert FAKE_KEY not in text and "Bearer" not in text
    recorded.stdout.fnmatch_lines(["openai:gpt-4o-mini: 8 calls, 800 input + 160 output*"])

    offline(monkeypatch)
    replayed = run(pytester, "--snapshot-update")  # the verdict table has no snapshot yet
    assert replayed.ret == 0, replayed.stdout.str()[-2000:]
    rows = (checked / "reports" / "checked" / "1.0" / "results.jsonl").read_text()
    assert all(json.loads(line)["verdict"]["checked"] is True for line in rows.splitlines())

    module = checked / PACKAGE / "judge.py"
    module.write_text(module.read_text().replace("Reply yes or no.", "Answer yes or no."))
    edited = run(pytester, "-k", "AC-01 and planted")
    assert edited.ret == 1
    output = edited.stdout.str()
    assert (
        "cassettes/checked/1.0/openai-gpt-4o-mini/AC-01-wrong-total.yaml does not match the request"
        in output
    )
    changed = re.search(r"\(in the request, (.*)\)\.", output)
    assert changed is not None, output[-2000:]
    # The cross-check, not the grade that matched before it: the closest unplayed request.
    assert changed.group(1).startswith(
        'messages[0].content: recorded ..."follow from the answer? Reply yes or no.'
    ), changed.group(1)
    assert 'now ..."follow from the answer? Answer yes or no.' in changed.group(1)


def test_a_dead_server_stops_the_recording_at_once(
    checked: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:  # a port the system gave, then closed: nothing listens
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", dead)
    result = run(pytester, "--record")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output[-2000:]
    (line,) = [text for text in output.splitlines() if "judges record: stopped after" in text]
    assert f"the server {PACKAGE}.judge:judge calls (openai:gpt-4o-mini)" in line, line
    assert "Connection refused" in line, line
    assert "set the URL and key its client reads" in output  # not the embedded judge's
    done = int(line.split("stopped after ")[1].split(" of ")[0])
    assert done == 2 < len(ANSWERS), line  # two in a row, not one per item
