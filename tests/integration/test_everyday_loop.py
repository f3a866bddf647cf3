"""A team's week in a repository made by `judges init`: edit, record, replay, read, accept.

Each step that once went through without a word now says what a user needs (issue cases,
in the order a team meets them): an accepted prompt edited in place stops the run naming
the file; a worse version is refused at acceptance until accepted knowingly, and then its
table holds no floor it fails; the team's floors survive an acceptance; a re-record hint
runs as printed, with the model and base URL of the recording; a control written without
`"control": true` is refused at load, naming the file and line.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from judges.core.spec import load_catalog

from ._support import FakeJudge, Received
from ._walkthrough import (
    INNER_OPTIONS,
    MODEL,
    WALKTHROUGH_KEY,
    command,
    judged_reply,
    scaffold_items,
)

JUDGE = "support_reply"
POLICY = (
    "Refunds: an unused item in its original packaging can be returned within 30 days of "
    "delivery for a refund to the original payment method. Shipping costs are not refunded. "
    "Exchanges for another size or colour are free within 60 days of delivery."
)
QUESTIONS = [
    "I received my jacket 10 days ago and never wore it. Can I get my money back?",
    "My shoes arrived last week and they are unworn. Can I return them for a refund?",
    "The scarf came 3 weeks ago, still in its bag. Can I send it back?",
    "I have not opened the lamp I got 12 days ago. Can I have a refund?",
]


# The grown items' ids follow the scaffold's own (SR-001 ... SR-195).
GROWN_FROM = len(scaffold_items())


def _item(number: int, control: bool) -> dict:
    """A defect states a 90-day window (the policy says 30); a control states it right."""
    question = QUESTIONS[number % len(QUESTIONS)]
    days = 30 if control else 90
    reply = (
        f"Yes: unused items in their original packaging can be returned within {days} days "
        f"of delivery (case {number}), refunded to your original payment method."
    )
    expect = [{"field": "accuracy", "op": "<=", "value": 1}]
    if control:
        expect = [
            {"field": "accuracy", "op": ">=", "value": 2},
            {"field": "helpfulness", "op": ">=", "value": 2},
        ]
    return {
        "id": f"SR-{GROWN_FROM + number:03d}",
        "slug": f"{'control' if control else 'window'}-{number:02d}",
        "judge": JUDGE,
        "category": "control" if control else "wrong_window",
        "control": control,
        "inputs": {"policy": POLICY, "question": question, "reply": reply},
        "expect": expect,
        "provenance": {"source": "hand", "note": "grown for the everyday loop"},
    }


def judge_by_version(received: Received) -> str:
    """1.0 grades the scaffold's items as the walkthrough's judge does and reads the grown
    ones for a wrong window; a prompt marked "(sloppy)" rates half the grown windows accurate
    (cases 9, 13, ... 33): still better than chance, and significantly worse than 1.0."""
    prompt = received.body["messages"][-1]["content"]
    reply = judged_reply(received)
    if reply in WALKTHROUGH_KEY:
        return json.dumps({**WALKTHROUGH_KEY[reply], "rationale": "read"})
    case = re.search(r"\(case (\d+)\)", reply)
    missed = "(sloppy)" in prompt and case is not None and int(case[1]) % 4 == 1
    accuracy = 0 if "90 days" in reply and not missed else 3
    return json.dumps({"accuracy": accuracy, "helpfulness": 3, "rationale": "read"})


@pytest.fixture
def project(repository: Path, pytester: pytest.Pytester, fake_judge: FakeJudge) -> Path:
    """`judges init`, its set grown to 18 window defects and 14 controls, 1.0 recorded and
    replayed, then accepted as the README says."""
    code, out = command(["init", JUDGE, "--model", MODEL])
    assert code == 0, out
    items = repository / "planted_sets" / JUDGE / "items.jsonl"
    grown = [_item(n, control=n % 2 == 0) for n in range(7, 35)]
    with items.open("a", encoding="utf-8") as stream:
        stream.writelines(json.dumps(item) + "\n" for item in grown)
    fake_judge.content = judge_by_version
    record(pytester, fake_judge)
    pytester.runpytest_inprocess(*INNER_OPTIONS)  # the replay writes 1.0's report
    code, out = command(["baseline", JUDGE, "--accept", "1.0"])
    assert code == 0, out
    return repository


def record(pytester: pytest.Pytester, fake_judge: FakeJudge, *args: str) -> pytest.RunResult:
    live = ["--record", "--judge-model", MODEL, "--judge-base-url", fake_judge.url]
    return pytester.runpytest_inprocess(*INNER_OPTIONS, *live, *args)


def prompts(project: Path) -> Path:
    return project / "judge_prompts" / JUDGE


def new_version(project: Path, version: str, marker: str = "") -> None:
    """A new prompt version, by the README's recipe: one file beside the others."""
    text = (prompts(project) / "1.0.md").read_text(encoding="utf-8")
    (prompts(project) / f"{version}.md").write_text(text + marker, encoding="utf-8")
    load_catalog.cache_clear()  # in-process runs share the loaded judges


def gates(project: Path) -> dict:
    path = project / "planted_sets" / JUDGE / "gates.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))[MODEL]


def test_an_accepted_prompt_edited_in_place_stops_the_run(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    accepted = prompts(project) / "1.0.md"
    original = accepted.read_text(encoding="utf-8")
    accepted.write_text(original + "\nBe strict.\n", encoding="utf-8")
    load_catalog.cache_clear()
    calls = len(fake_judge.calls)
    # The README's "re-record" advice cannot overwrite the baseline either: the run stops
    # before any call, naming the file and the fix.
    edited = record(pytester, fake_judge, "--record=all")
    assert edited.ret != 0 and len(fake_judge.calls) == calls
    out = edited.stdout.str() + edited.stderr.str()
    assert f"{accepted}: prompt 1.0 of {JUDGE} is the accepted baseline" in out
    assert "put the change in a new version, e.g. 1.1" in out
    accepted.write_text(original, encoding="utf-8")


def test_a_worse_version_is_refused_then_accepted_knowingly_without_a_failing_floor(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge
) -> None:
    new_version(project, "1.1", "\n(sloppy)\n")
    record(pytester, fake_judge, "-k", f"{JUDGE}-1.1")
    replayed = pytester.runpytest_inprocess(*INNER_OPTIONS)
    # The answer leads: the regression against 1.0 (7 caught->missed), not the floors 1.1
    # also fails or its new failures, in one line of at most 160 characters, the last line
    # of the judges section.
    (line,) = [line for line in replayed.outlines if line.startswith(f"{JUDGE} 1.1: ")]
    assert line.startswith(f"{JUDGE} 1.1: FAIL: regression.detection worse than prompt 1.0 ")
    assert len(line) <= 160, line
    after = replayed.outlines[replayed.outlines.index(line) + 1]
    # The next line opens another section (pytest-syrupy's summary or pytest's own, in the
    # order the plugins registered their hooks): the verdict ends the judges section.
    assert after.startswith(("=", "-")) and after.rstrip().endswith(("=", "-")), after
    report = (project / "reports" / JUDGE / "1.1" / "report.md").read_text(encoding="utf-8")
    assert "**Result: FAIL: regression.detection worse than prompt 1.0 main run (" in report
    assert "gates failed" in report.split("\n")[4]  # the whole verdict, on the next line
    code, out = command(["baseline", JUDGE, "--accept", "1.1"])
    assert code == 1 and "prompt 1.1 is significantly worse than the accepted baseline" in out
    assert "regression: support_reply 1.1 on local:fake-judge: regression.detection" in out
    assert "1.1" not in gates(project)  # nothing written

    # Accepted knowingly: its detection floors, inherited from 1.0, are ones it fails.
    why = "the sloppy wording is what the product team wants"
    code, out = command(["baseline", JUDGE, "--accept", "1.1", "--accept-regression", why])
    assert code == 1 and "fails floors its table would keep" in out
    failing = [line for line in out.splitlines() if line.startswith("floor: ")]
    assert failing and all("support_reply 1.1 on local:fake-judge: " in f for f in failing)
    code, out = command(
        ["baseline", JUDGE, "--accept", "1.1", "--accept-regression", why, "--reset-floors"]
    )
    assert code == 0, out
    table = gates(project)["1.1"]
    assert table["baseline"] == "1.1" and table["accept_regression"] == why
    pytester.runpytest_inprocess(*INNER_OPTIONS)
    report = (project / "reports" / JUDGE / "1.1" / "report.md").read_text(encoding="utf-8")
    assert why in report
    # The new table holds no floor the version fails: its first screen names no gate.
    assert report.startswith("# support_reply, prompt 1.1: PASS"), report[:800]
    inherited = gates(project)["1.0"]["min_detection"]["wrong_window"]  # 1.0's, from both draws
    assert f"min_detection.wrong_window = {inherited:g} dropped (--reset-floors" in out


def test_the_teams_floors_survive_an_acceptance(project: Path) -> None:
    path = project / "planted_sets" / JUDGE / "gates.toml"
    text = path.read_text(encoding="utf-8")
    table = gates(project)["1.0"]
    floors = table.get("min_detection", {})
    assert floors, text  # baseline suggested detection floors from 1.0's own run
    category, floor = next(iter(floors.items()))
    team = round(floor - 0.05, 2)  # the team's own choice, below the suggestion
    path.write_text(text.replace(f"{category} = {floor}", f"{category} = {team}", 1))
    code, out = command(["baseline", JUDGE, "--accept", "1.0"])
    assert code == 0, out
    assert gates(project)["1.0"]["min_detection"][category] == team


def test_a_rerecord_hint_runs_as_printed(
    project: Path, pytester: pytest.Pytester, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_version(project, "1.1")
    record(pytester, fake_judge, "-k", f"{JUDGE}-1.1")
    items = project / "planted_sets" / JUDGE / "items.jsonl"
    lines = items.read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(lines[0])
    first["inputs"]["reply"] += " Thank you."
    items.write_text(json.dumps(first) + "\n" + "".join(lines[1:]), encoding="utf-8")
    stale = pytester.runpytest_inprocess(*INNER_OPTIONS, "-k", f"{JUDGE}-1.1-SR-001")
    # SR-001's main run, its noise floor and its retest: each failed test prints its hint.
    hints = [
        line.split("Re-record it with:", 1)[1]
        for line in stale.outlines
        if "Re-record it with:" in line
    ]
    assert len(set(hints)) == 3, stale.stdout.str()[-3000:]
    for hint in sorted(set(hints)):
        printed = shlex.split(hint)
        assert printed[:2] == ["pytest", "--record=all"]
        assert printed[printed.index("--judge-model") + 1] == MODEL
        assert printed[printed.index("--judge-base-url") + 1] == fake_judge.url
        calls = len(fake_judge.calls)
        # As printed, after `pytest`.
        rerun = pytester.runpytest_inprocess(*INNER_OPTIONS, *printed[1:])
        assert rerun.ret == 0, rerun.stdout.str()[-2000:]
        assert len(fake_judge.calls) > calls
    # Re-recorded as the hints said, the item replays offline again.
    replayed = pytester.runpytest_inprocess(*INNER_OPTIONS, "-k", f"{JUDGE}-1.1-SR-001")
    assert replayed.ret == 0, replayed.stdout.str()[-2000:]


def test_a_control_without_its_flag_is_refused_at_load(
    project: Path, pytester: pytest.Pytester
) -> None:
    items = project / "planted_sets" / JUDGE / "items.jsonl"
    lines = items.read_text(encoding="utf-8").splitlines(keepends=True)
    control = json.loads(lines[0])
    assert control["category"] == "control"
    control["control"] = False
    items.write_text(json.dumps(control) + "\n" + "".join(lines[1:]), encoding="utf-8")
    refused = pytester.runpytest_inprocess(*INNER_OPTIONS)
    out = refused.stdout.str() + refused.stderr.str()
    assert refused.ret != 0
    assert f"{items}:1:" in out and '"control": true' in out
