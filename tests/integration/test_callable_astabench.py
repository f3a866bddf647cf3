"""The real astabench 0.5.4 relevance judge under the harness, by the docs alone: installed from
the package index into a virtual environment of its own, named in judge.toml as it is
(`load_relevance_judgement`, its inputs mapped by `[arguments]` and validated into its own
`Document` and `RelevanceCriterion` models), never patched or edited. It calls its grader
through Inspect's model API (`inspect_ai.model.get_model`, the OpenAI SDK over httpx), which
the cassettes record against a fake OpenAI-compatible server on 127.0.0.1 whose replies
echo a criterion in lower case ("distributed rl" for "distributed RL"), and replay offline.
Its case-sensitive check drops those documents without a word: the controls miss, a reply
fixture fails, a property fails with the smallest breaking reply, and `baseline --accept`
refuses to bury the dropped controls without a reason."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ._support import FAKE_KEY, FakeJudge, Received
from ._tools import run, tool_python
from ._walkthrough import INNER_OPTIONS

pytestmark = pytest.mark.proof

ASTABENCH = "astabench==0.5.4"
JUDGE = "asta_relevance"
CALLABLE = "astabench.evals.paper_finder.relevance:load_relevance_judgement"
CRITERIA = [
    {"name": "distributed RL", "description": "The paper is about distributed RL.", "weight": 0.5},
    {"name": "method", "description": "The paper proposes a method.", "weight": 0.5},
]
# Document text -> (on topic, the model echoes "distributed RL" in lower case): twelve
# controls, the first two echoed in lower case, against twelve off-topic documents, so
# that the judge is FIT and acceptance stops at the dropped controls themselves.
SYSTEMS = ["IMPALA", "Ape-X", "SEED RL", "R2D2", "A3C", "Gorila", "Agent57", "MuZero",
           "AlphaStar", "OpenAI Five", "Sample Factory", "Acme"]  # fmt: skip
TOPICS = ["cake recipes", "tax rules", "violin history", "tide tables", "rose pruning",
          "a sci-fi novel", "bread baking", "knitting", "bird song", "chess openings",
          "garden ponds", "old maps"]  # fmt: skip
DOCUMENTS = {
    **{f"{name} scales actor-learner training.": (True, n < 2) for n, name in enumerate(SYSTEMS)},
    **{f"A short note on {topic}.": (False, False) for topic in TOPICS},
}
RELEVANT = ["perfectly_relevant_papers", "highly_relevant_papers"]
NOT_RELEVANT = ["not_relevant_papers", "somewhat_relevant_papers"]


def reply(relevance: str, drift: bool) -> str:
    """astabench's reply shape: each criterion by name, its relevance and snippet."""
    names = ["distributed rl" if drift else "distributed RL", "method"]
    criteria = {name: {"relevance": relevance, "relevant_snippet": None} for name in names}
    return json.dumps({"criteria": criteria, "relevance_summary": None})


def grader(received: Received) -> str:
    prompt = received.body["messages"][-1]["content"]
    (document,) = [text for text in DOCUMENTS if text in prompt]
    on_topic, drift = DOCUMENTS[document]
    return reply("Perfectly Relevant" if on_topic else "Not Relevant", drift)


def item(number: int, document: str) -> dict[str, Any]:
    on_topic, _ = DOCUMENTS[document]
    prefix = "AC" if on_topic else "AR"
    return {
        "id": f"{prefix}-{number:02d}", "slug": "on-topic" if on_topic else "off-topic",
        "judge": JUDGE, "category": "control" if on_topic else "off_topic", "control": on_topic,
        "inputs": {"documents": [{"corpus_id": "doc", "markdown": document}],
                   "criteria": CRITERIA},
        "expect": [{"field": "doc", "op": "in", "value": RELEVANT if on_topic else NOT_RELEVANT}],
        "provenance": {"source": "hand"},
    }  # fmt: skip


def fixture(fixture_id: str, drift: bool) -> dict[str, Any]:
    found = item(1, "IMPALA scales actor-learner training.")
    found |= {"id": fixture_id, "slug": "case-drift" if drift else "as-asked"}
    return found | {"replies": [reply("Perfectly Relevant", drift)]}


def lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture(scope="module")
def astabench_python() -> Path:
    return tool_python("astabench-0.5.4", ASTABENCH)


@pytest.fixture
def asta_project(tmp_path: Path) -> Path:
    root = tmp_path / "asta"
    files = {
        f"judge_prompts/{JUDGE}/judge.toml": (
            f'name = "{JUDGE}"\ncallable = "{CALLABLE}"\nversion = "0.5.4"\n'
            'baseline_model = "openai:gpt-4o-2024-11-20"\n'
            "# The drift the seed names: a criterion echoed in another case.\n"
            'reply_properties = ["case"]\n\n'
            '[arguments]\nentities = "documents"\nrelevance_criteria = "criteria"\n'
        ),
        f"planted_sets/{JUDGE}/items.jsonl": lines(
            [item(n, text) for n, text in enumerate(DOCUMENTS, start=1)]
        ),
        f"planted_sets/{JUDGE}/replies.jsonl": lines(
            [fixture("RF-01", drift=True), fixture("RF-02", drift=False)]
        ),
        "pytest.ini": (
            "[pytest]\njudges_prompts = judge_prompts\njudges_planted_sets = planted_sets\n"
            "testpaths = judge_tests\n"
        ),
        "judge_tests/test_judges.py": "from judges.pytest_plugin.suite import *  # noqa: F403\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_astabench_s_relevance_judge_drops_case_drifted_controls_and_is_caught(
    astabench_python: Path, asta_project: Path, fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    root = asta_project
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: no fetch at import
    fake_judge.content = grader
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    recorded = run(astabench_python, "-m", "pytest", *INNER_OPTIONS, "--record", "-k", "planted",
                   cwd=root)  # fmt: skip
    output = recorded.stdout + recorded.stderr
    assert len(fake_judge.calls) == len(DOCUMENTS), output[-3000:]
    sent = fake_judge.calls[0].body
    # astabench's own request: one user message, no system message, no schema.
    assert set(sent) == {"model", "messages"} and sent["model"] == "gpt-4o-2024-11-20", sent
    assert [m["role"] for m in sent["messages"]] == ["user"]
    assert "exactly as given in the provided criteria" in sent["messages"][0]["content"]
    cassettes = sorted((root / "cassettes" / JUDGE / "0.5.4").rglob("*.yaml"))
    assert len(cassettes) == len(DOCUMENTS)
    assert cassettes[0].parent.name == "openai-gpt-4o-2024-11-20"
    assert not any(FAKE_KEY in path.read_text(encoding="utf-8") for path in cassettes)
    assert recorded.returncode == 1, output[-3000:]

    # Replay offline, no key: the dropped controls, the drifted fixture and the property fail.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    calls = len(fake_judge.calls)
    replayed = run(astabench_python, "-m", "pytest", *INNER_OPTIONS, cwd=root)
    output = replayed.stdout + replayed.stderr
    assert len(fake_judge.calls) == calls, "the replay called the server"
    failed = set(re.findall(r"^FAILED (\S+)", replayed.stdout, re.M))
    base = "judge_tests/test_judges.py::"
    assert {
        f"{base}test_planted_item[{JUDGE}-0.5.4-AC-01-on-topic]",
        f"{base}test_planted_item[{JUDGE}-0.5.4-AC-02-on-topic]",
        f"{base}test_reply_fixture[{JUDGE}-0.5.4-RF-01-case-drift]",
        f"{base}test_reply_properties[{JUDGE}-0.5.4-RF-02-as-asked]",
    } <= failed, output[-9000:]
    assert f"{base}test_planted_item[{JUDGE}-0.5.4-AC-03-on-topic]" not in failed
    assert f"{base}test_reply_fixture[{JUDGE}-0.5.4-RF-02-as-asked]" not in failed
    # The document is gone from the verdict: the dropped control and the fixture say so.
    assert re.search(r"AC-01 \(control\): expected doc in .* returned no doc in the verdict \{\}",
                     output), output  # fmt: skip
    assert re.search(r"RF-01 \(control, reply fixture\): expected doc in .*returned \{\}", output)
    # The property's smallest breaking reply: one criterion's case changed, the document gone.
    assert (
        "changed its verdict when the reply spelled the item's names differently (case)" in output
    )
    # One smallest reply, printed once per place that shows the failure (under CI=true,
    # Hypothesis's CI profile repeats the falsifying example).
    (varied,) = set(re.findall(r"reply: +(\[.*\])", output))
    names = list(json.loads(json.loads(varied)[0])["criteria"])
    changed = [n for n in names if n not in ("distributed RL", "method")]
    assert len(changed) == 1 and changed[0].casefold() in ("distributed rl", "method"), names
    assert re.search(r"verdict: +\{\}\n.*original: +\{\"doc\": \"perfectly_relevant_papers\"\}",
                     output), output  # fmt: skip

    # The report lists the reply fixtures apart from the planted statistics.
    report = (root / "reports" / JUDGE / "0.5.4" / "report.md").read_text(encoding="utf-8")
    assert "| RF-01 | control | expectations | FAILED |" in report
    assert "| RF-02 | control | expectations | PASSED |" in report
    assert "| RF-02 | control | property | FAILED |" in report

    # Acceptance refuses to bury the dropped controls, and writes nothing.
    accept = run(astabench_python, "-m", "judges", "baseline", JUDGE, "--accept", "0.5.4",
                 cwd=root)  # fmt: skip
    said = accept.stdout + accept.stderr
    assert accept.returncode == 1, said
    assert "AC-01" in said and "AC-02" in said, said
    assert '--accept-control-miss "<why>"' in said, said
    assert not (root / "planted_sets" / JUDGE / "gates.toml").exists()
    # With a reason, they become accepted misses that say why.
    why = "astabench 0.5.4 matches criterion names case-sensitively"
    accept = run(astabench_python, "-m", "judges", "baseline", JUDGE, "--accept", "0.5.4",
                 "--accept-control-miss", why, cwd=root)  # fmt: skip
    assert accept.returncode == 0, accept.stdout + accept.stderr
    accepted = (root / "planted_sets" / JUDGE / "expectations.toml").read_text(encoding="utf-8")
    assert "AC-01" in accepted and "AC-02" in accepted and why in accepted, accepted
