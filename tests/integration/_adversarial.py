"""The adversarial fitness proof, shared by every built-in judge's test.

One fake OpenAI-compatible judge plays seven policies, each recorded as a prompt version of
one built-in judge in a temporary project: the version's prompt names its policy (the
fake judge reads it) and is otherwise the built-in prompt. Every policy but "good" must be
NOT FIT (or FAIL) before and after `judges baseline`, which refuses to accept it; the good
judge is PASS with no false alarm and is accepted.

A judge's test supplies its planted items and `Reply`, the verdict each policy gives.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main as judges_main
from judges.core.spec import PROMPTS_ROOT

from ._support import FakeJudge, JudgesProject, Received

POLICIES = {
    "1.0": "good",
    "2.0": "constant-best",
    "3.0": "constant-worst",
    "4.0": "random",
    "5.0": "reversed",
    "6.0": "length-biased",
    "7.0": "injection-obeying",
}
GOOD = "1.0"

# The fitness test comes from the generic suite, as in any project.
TEST_FITNESS = "from judges.pytest_plugin.suite import test_judge_is_fit  # noqa: F401\n"
# The project's own judges (judges_prompts): pytest and `python -m judges` read the same.
INI = "[pytest]\nxfail_strict = true\ntestpaths = regression_tests\njudges_prompts = prompts\n"

# (policy, planted item, the prompt as sent) -> the reply's JSON object.
Reply = Callable[[str, dict[str, Any], str], dict[str, Any]]


def _prompt(received: Received) -> str:
    return "\n".join(str(m.get("content", "")) for m in received.body["messages"])


def serve_policies(judge: FakeJudge, items: list[dict[str, Any]], reply: Reply) -> None:
    """The fake judge answers each call as the policy its prompt names would."""
    by_id = {item["id"]: item for item in items}

    def content(received: Received) -> str:
        prompt = _prompt(received)
        policy = re.search(r"\(policy: ([a-z-]+)\)", prompt)
        assert policy is not None and received.item_id is not None, prompt[:200]
        return json.dumps(reply(policy[1], by_id[received.item_id], prompt))

    judge.content = content


def write_prompts(root: Path, judge: str, template: str, judge_toml: str | None = None) -> None:
    """The built-in `judge` under the project's prompts/, one version per policy, each a
    copy of the built-in prompt `template` (a file, or a folder of facets) naming it."""
    folder = root / "prompts" / judge
    folder.mkdir(parents=True)
    built_in = PROMPTS_ROOT / judge
    toml = judge_toml if judge_toml is not None else (built_in / "judge.toml").read_text("utf-8")
    (folder / "judge.toml").write_text(toml, encoding="utf-8")
    facets = sorted((built_in / template).glob("*.md")) if (built_in / template).is_dir() else []
    for version, policy in POLICIES.items():
        named = f"\n\n(policy: {policy})\n"
        if not facets:
            text = (built_in / f"{template}.md").read_text(encoding="utf-8")
            (folder / f"{version}.md").write_text(text + named, encoding="utf-8")
            continue
        (folder / version).mkdir()
        for facet in facets:
            (folder / version / facet.name).write_text(facet.read_text("utf-8") + named, "utf-8")


def fitness_outcomes(result: pytest.RunResult) -> dict[str, str]:
    """Version -> outcome of its fitness test, from the -rA summary."""
    found = {}
    test = r"regression_tests/test_fitness\.py::test_judge_is_fit\[[a-z_]+-(\d+\.0)\b"
    for line in result.outlines:
        hit = re.match(rf"(PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR) {test}", line)
        if hit:
            found[hit[2]] = hit[1]
    return found


def failed_tests(result: pytest.RunResult, judge: str, version: str) -> list[str]:
    """The -rA summary lines of this version's tests that failed or erred."""
    mark = f"[{judge}-{version}"
    return [
        line for line in result.outlines if line.startswith(("FAILED ", "ERROR ")) and mark in line
    ]


def first_lines(root: Path, judge: str) -> dict[str, str]:
    return {
        version: (root / "reports" / judge / version / "report.md")
        .read_text(encoding="utf-8")
        .splitlines()[0]
        for version in POLICIES
    }


def baseline(root: Path, judge: str, *args: str) -> tuple[int, str]:
    """`python -m judges baseline <judge> ...` in the project: exit code and output."""
    out = io.StringIO()
    folders = ["--reports", str(root / "reports"), "--planted-sets", str(root / "planted_sets")]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = judges_main(["baseline", judge, *folders, *args])
    return code, out.getvalue()


def _check_verdicts(result: pytest.RunResult, root: Path, judge: str) -> dict[str, str]:
    outcomes = fitness_outcomes(result)
    expected = {v: "PASSED" if p == "good" else "FAILED" for v, p in POLICIES.items()}
    assert outcomes == expected, result.stdout.str()[-3000:]
    first = first_lines(root, judge)
    assert first[GOOD] == f"# {judge}, prompt {GOOD}: PASS"
    for version, policy in POLICIES.items():
        if policy != "good":
            assert first[version].endswith(("NOT FIT", "FAIL")), (policy, first[version])
            # `failed_tests` sees failures where there are some (its fitness test at least).
            assert failed_tests(result, judge, version), policy
    return outcomes


def prove_never_pass(
    project: JudgesProject,
    monkeypatch: pytest.MonkeyPatch,
    judge: str,
    items: list[dict[str, Any]],
    reply: Reply,
    *,
    template: str,
    calls_per_item: int = 1,
    judge_toml: str | None = None,
) -> None:
    """Record every policy on `items`, then check verdicts, baseline refusals and replays."""
    pytester, root = project.pytester, project.root
    set_dir = root / "planted_sets" / judge
    set_dir.mkdir(parents=True, exist_ok=True)
    (set_dir / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items), "utf-8")
    serve_policies(project.judge, items, reply)
    write_prompts(root, judge, template, judge_toml)
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(**{"regression_tests/test_fitness": TEST_FITNESS})
    # `python -m judges` finds the project's judges through its pytest.ini, as pytest does.
    monkeypatch.chdir(root)

    recorded = project.run("-k", "test_planted_item", record="all")
    calls = len(POLICIES) * len(items) * calls_per_item
    assert len(project.judge.calls) == calls, recorded.stdout.str()[-3000:]

    replay = project.run("-rA")
    outcomes = _check_verdicts(replay, root, judge)
    # No false alarm on the good judge: no failed item or chance test (no gates yet).
    assert not failed_tests(replay, judge, GOOD), failed_tests(replay, judge, GOOD)

    # Baseline: every unfit version is refused (nothing written); the good one is accepted.
    for version, policy in POLICIES.items():
        if policy == "good":
            continue
        code, said = baseline(root, judge, "--accept", version)
        assert code == 1 and f"prompt {version} is NOT FIT" in said, (policy, said)
        assert not (set_dir / "gates.toml").exists(), policy
    code, said = baseline(root, judge, "--accept", GOOD)
    assert code == 0, said
    gates = tomllib.loads((set_dir / "gates.toml").read_text(encoding="utf-8"))
    tables = [table for versions in gates.values() for table in versions.values()]
    assert tables and not any("accept_not_fit" in table for table in tables)

    after = project.run("-rA")
    assert _check_verdicts(after, root, judge) == outcomes
    # Its own gates, suggested from its own run, are evaluated and raise no alarm either.
    gates_test = f"regression_tests/test_gates.py::test_detection_gates[{judge}-{GOOD}]"
    assert f"PASSED {gates_test}" in after.outlines, after.stdout.str()[-3000:]
    assert not failed_tests(after, judge, GOOD), failed_tests(after, judge, GOOD)


def without_reply_shapes(judge: str) -> str:
    """The built-in judge.toml without its reply shapes: they name the built-in versions."""
    text = (PROMPTS_ROOT / judge / "judge.toml").read_text(encoding="utf-8")
    text = re.sub(r"\n\[reply_shapes\]\n(?:.+\n)*", "\n", text)
    assert "[reply_shapes]" not in text
    return text
