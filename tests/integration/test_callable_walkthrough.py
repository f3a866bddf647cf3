"""docs/your-own-judge.md, "Your judge function as it is", run as printed.

The page's files in an empty git repository: a team's judge function with its own OpenAI
client, its own message and an exact-name match, under the harness through `judge.toml`'s
`callable`. Recorded against the fake server on 127.0.0.1 (a model that echoes one
control's criterion in lower case), replayed offline with no key, refused as a baseline
for the control it would bury; the reply fixture's property fails with the smallest
breaking reply, then the page's fix, as version 0.3.2, records, is accepted and replays
green.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judges.core.spec import load_catalog

from ._support import FAKE_KEY, FakeJudge, Received, forget_modules
from ._walkthrough import INNER_OPTIONS, command

DOC = Path(__file__).resolve().parents[2] / "docs" / "your-own-judge.md"
TEAM_PACKAGE = "team_judges"
DRIFTS = "IMPALA"  # the control whose criterion the fake model echoes in lower case


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("## Your judge function as it is", 1)[1].split("\n## ", 1)[0]


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", section(), re.S)


def commands(index: int) -> list[str]:
    return [line for line in blocks("bash")[index].splitlines() if line.strip()]


def fixed_module(module: str) -> str:
    """The team's module with the page's fix: its `name_key`, the two statements it
    prints, and the new version."""
    fix = blocks("python")[2]
    statements = re.findall(r"`(by_key = .*?|kept = .*?)`", section())
    assert len(statements) == 2, statements
    exact = "    kept = {name: scores[name] for name in criteria if name in scores}"
    line = next(ln for ln in module.splitlines() if ln.startswith(exact))
    module = module.replace(line, "\n".join(f"    {s}" for s in statements))
    module = module.replace('JUDGE_PROMPT_VERSION = "0.3.1"', 'JUDGE_PROMPT_VERSION = "0.3.2"')
    head, _, body = module.partition("\nimport json\n")
    return f"{head}\nimport json\n{fix}\n{body}"


def relevance_model(received: Received) -> str:
    """Scores 3 for the on-topic documents and 0 otherwise, echoing each criterion as
    asked, except on the one control where it lower-cases them."""
    prompt = received.body["messages"][-1]["content"]
    document = prompt.split("Document: ", 1)[1].split("\n", 1)[0]
    asked = prompt.split("on each criterion: ", 1)[1].split(".\n", 1)[0].split(", ")
    on_topic = any(name in document for name in ("IMPALA", "Ape-X", "SEED RL", "R2D2"))
    names = [n.lower() for n in asked] if DRIFTS in document else asked
    return json.dumps({"criteria": {name: 3 if on_topic else 0 for name in names}})


def forget_team_modules() -> None:
    """An in-process run imports the team's module once, and the catalogue keeps the judge
    it loaded: an edited module must be read again, as a new process would."""
    forget_modules(TEAM_PACKAGE)
    load_catalog.cache_clear()


def run(pytester: pytest.Pytester, line: str) -> pytest.RunResult:
    argv = line.split()
    assert argv[:3] == ["python", "-m", "pytest"], line
    forget_team_modules()
    return pytester.runpytest_inprocess(*INNER_OPTIONS, *argv[3:])


def test_the_callable_walkthrough_runs_as_printed(
    repository: Path,
    pytester: pytest.Pytester,
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    python, toml, (items, replies), ini = (
        blocks("python"),
        blocks("toml"),
        blocks("json"),
        blocks("ini"),
    )
    files = {
        f"{TEAM_PACKAGE}/__init__.py": "",
        f"{TEAM_PACKAGE}/relevance.py": python[0],
        "judge_prompts/paper_relevance/judge.toml": toml[0],
        "planted_sets/paper_relevance/items.jsonl": items,
        "planted_sets/paper_relevance/replies.jsonl": replies,
        "pytest.ini": ini[0],
        "judge_tests/test_judges.py": python[1],
    }
    for name, text in files.items():
        path = repository / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    fake_judge.content = relevance_model
    first, second = commands(0), commands(1)
    assert first == [
        "python -m pytest --record",
        "python -m pytest",
        "python -m judges baseline paper_relevance --accept 0.3.1",
    ]
    assert second == [
        "python -m pytest --record",
        "python -m judges baseline paper_relevance --accept 0.3.2",
        "python -m pytest --snapshot-update",
        "python -m pytest",
        "python -m judges report --check",
    ]

    # Record: the team's own request, one per item, to the server its client reads.
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    recorded = run(pytester, first[0])
    assert len(fake_judge.calls) == 10
    request = fake_judge.received[0].body
    assert set(request) == {"model", "messages", "temperature"}  # no schema, no system message
    assert [m["role"] for m in request["messages"]] == ["user"]
    recorded.stdout.fnmatch_lines(["*PC-01 (control): expected score >= 2*returned score=1.5*"])
    # What the team's calls used, from each reply's usage: the spend lines and the ledger.
    recorded.stdout.fnmatch_lines(["openai:gpt-4o-mini: 10 calls, 1000 input + 200 output*"])
    assert recorded.ret == 1
    cassettes = sorted((repository / "cassettes" / "paper_relevance" / "0.3.1").rglob("*.yaml"))
    assert len(cassettes) == 10 and cassettes[0].parent.name == "openai-gpt-4o-mini"
    assert not any(FAKE_KEY in path.read_text(encoding="utf-8") for path in cassettes)

    # Replay, offline and with no key: the control, the fixture and its property fail.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    calls = len(fake_judge.calls)
    replayed = run(pytester, first[1])
    assert len(fake_judge.calls) == calls
    failed = set(re.findall(r"^FAILED (\S+)", replayed.stdout.str(), re.M))
    base = "judge_tests/test_judges.py::"
    assert {
        f"{base}test_planted_item[paper_relevance-0.3.1-PC-01-on-topic-1]",
        f"{base}test_reply_fixture[paper_relevance-0.3.1-RF-01-criterion-case-drift]",
        f"{base}test_reply_properties[paper_relevance-0.3.1-RF-01-criterion-case-drift]",
    } <= failed, failed
    # The smallest reply that breaks it, as the page shows it: one trailing space.
    replayed.stdout.fnmatch_lines(
        ["*changed its verdict when the reply spelled the item's names differently*",
         '*reply:    ?"{\\"criteria\\": {\\"distributed rl\\": 3, \\"method \\": 3}}"?',
         '*verdict:  {"score": 0.0, "dropped": 2}', '*original: {"score": 1.5, "dropped": 1}']
    )  # fmt: skip

    # The report lists the fixture's checks apart from the planted statistics.
    folder = repository / "reports" / "paper_relevance" / "0.3.1"
    shown = (folder / "report.md").read_text(encoding="utf-8")
    section = shown.split("## Reply fixtures (no statistic)", 1)[1].split("\n## ", 1)[0]
    assert "1 reply fixtures, 2 checks, 2 failed." in section, section
    assert "| RF-01 | control | expectations | FAILED | RF-01 (control, reply fixture): " in section
    assert "| RF-01 | control | property | FAILED | RF-01 (reply fixture): " in section
    rows = (folder / "results.jsonl").read_text(encoding="utf-8")
    assert "RF-01" not in rows  # no result row: no statistic counts it
    assert "reply_fixtures.jsonl" in {p.name for p in folder.iterdir()}

    # Acceptance names the control it would bury, and writes nothing.
    code, out = command(first[2].split()[3:])
    assert code == 1, out
    assert "PC-01: expected score >= 2; returned score=1.5" in out
    assert '--accept-control-miss "<why>"' in out
    assert not (repository / "planted_sets" / "paper_relevance" / "gates.toml").exists()

    # The page's fix, as 0.3.2: recorded, accepted, green offline.
    team = repository / TEAM_PACKAGE / "relevance.py"
    team.write_text(fixed_module(python[0]), encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert run(pytester, second[0]).ret == 0
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    forget_team_modules()
    code, out = command(second[1].split()[3:])
    assert code == 0, out
    assert "fitness: paper_relevance 0.3.2 on openai:gpt-4o-mini: FIT" in out
    assert run(pytester, second[2]).ret == 0
    green = run(pytester, second[3])
    assert green.ret == 0, green.stdout.str()[-3000:]
    # 10 items, the detection gates, fitness, the verdict table, the fixture, its property.
    green.assert_outcomes(passed=15)
    fixed = (repository / "reports" / "paper_relevance" / "0.3.2" / "report.md").read_text()
    assert "1 reply fixtures, 2 checks, 0 failed." in fixed
    assert "| RF-01 | control | property | PASSED |  |" in fixed
    code, out = command(second[4].split()[3:])
    assert code == 0, out

    # 0.3.3: 0.3.2 is retired, and its committed results are the regression reference.
    assert commands(2) == ["python -m pytest --record", "python -m pytest"]
    team.write_text(team.read_text().replace('"0.3.2"', '"0.3.3"'), encoding="utf-8")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert run(pytester, commands(2)[0]).ret == 0
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    newer = run(pytester, commands(2)[1])
    report = repository / "reports" / "paper_relevance" / "0.3.3" / "report.md"
    assert "| regression.detection vs prompt 0.3.2 main run |" in report.read_text()
    # The verdict table's snapshot is 0.3.2's: 0.3.3 has none until --snapshot-update.
    assert set(re.findall(r"^FAILED (\S+)", newer.stdout.str(), re.M)) == {
        "judge_tests/test_judges.py::test_verdict_table[paper_relevance-0.3.3]"
    }
