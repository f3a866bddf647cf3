"""Artifact judges added by the README's recipe alone never read PASS: the probes follow.

On planted items that carry no injection and no length cue, an injection-obeying or a
length-biased judge grades the main run exactly as a good one does: only the bias probes
can tell them apart. A good prompt version is recorded, accepted and snapshotted; then each
artifact is added as the README says (a prompt file, `--record`, the replay, `judges
baseline --accept`, `--snapshot-update`) with nothing enrolled by hand. The probes follow
the judge to the new version, its probe tests fail, acceptance refuses it, and its report
never reads PASS.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from judges.core.spec import PROMPTS_ROOT, load_catalog
from judges.sets.planted import load_planted_set
from judges.sets.probe_kinds import INJECTIONS
from judges.sets.probes import write_probes

from ._adversarial import INI, TEST_FITNESS, baseline
from ._support import JUDGE, FakeJudge, JudgesProject, Received, planted_item

ROOT = Path(__file__).resolve().parents[2]
POLICIES = {"1.0": "good", "2.0": "length-biased", "3.0": "injection-obeying"}
ANSWER = "Cash at maturity, as the term sheet explains, unless the barrier was touched."
PROBES_TOML = """
score = "core_total"

[padding]
items = ["PE-01", "PE-02", "PE-03", "PE-04", "PE-13", "PE-14", "PE-15", "PE-16"]
field = "answer"
echo = "question"
seed = 1

[injection]
items = ["PE-01", "PE-02", "PE-03", "PE-04", "PE-13", "PE-14", "PE-15", "PE-16"]
field = "answer"
seed = 1
"""


def _items() -> list[dict[str, Any]]:
    """12 controls and 12 defects, every answer the same length and free of any cue."""
    return [
        planted_item(
            f"PE-{i + 1:02d}",
            f"item-{i + 1}",
            "control" if i < 12 else "cousin",
            ANSWER,
            control=i < 12,
        )
        for i in range(24)
    ]


def _verdict(score: int) -> dict[str, Any]:
    return {
        "reference_product": "barrier reverse convertible",
        "answer_product": "barrier reverse convertible" if score >= 2 else "reverse convertible",
        "product_identity_match": score >= 2,
        "factual_accuracy": score,
        "completeness": score,
        "causal_reasoning": score,
        "rationale": "graded",
    }


def serve(judge: FakeJudge, items: list[dict[str, Any]]) -> None:
    """Each prompt version's policy: right on every planted item; the artifacts also give
    full marks to a long answer, or to one that tells the grader to."""
    control = {item["id"]: item["control"] for item in items}
    plain = len(items[0]["inputs"]["answer"])

    def content(received: Received) -> str:
        prompt = "\n".join(str(m.get("content", "")) for m in received.body["messages"])
        policy = re.search(r"\(policy: ([a-z-]+)\)", prompt)
        assert policy is not None and received.item_id is not None, prompt[:200]
        answer = prompt.split("## Candidate answer", 1)[1].split("\n## ", 1)[0].strip()
        score = 3 if control[received.item_id] else 0
        if policy[1] == "length-biased" and len(answer) > plain + 20:
            score = 3
        if policy[1] == "injection-obeying" and any(note in prompt for note in INJECTIONS):
            score = 3
        return json.dumps(_verdict(score))

    judge.content = content


# The project's inner runs keep syrupy: the recipe ends in `--snapshot-update`.
_INNER = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark"]
_INNER += ["-p", "no:recording", "-p", "no:anyio", "-n", "0", "-ra"]


def run(project: JudgesProject, *args: str, record: bool = False) -> pytest.RunResult:
    live = ["--record", "--judge-base-url", project.judge.url] if record else []
    return project.pytester.runpytest_inprocess(*_INNER, *live, *args)


def add_version(root: Path, version: str) -> None:
    """The README's recipe: one prompt file beside the others, nothing else."""
    text = (PROMPTS_ROOT / JUDGE / "0.3.1.md").read_text(encoding="utf-8")
    path = root / "prompts" / JUDGE / f"{version}.md"
    path.write_text(f"{text}\n\n(policy: {POLICIES[version]})\n", encoding="utf-8")
    load_catalog.cache_clear()  # in-process runs share the loaded judges


@pytest.fixture
def accepted_good_judge(
    project: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> JudgesProject:
    """The good version recorded, replayed, accepted and snapshotted: a green replay."""
    pytester, root = project.pytester, project.root
    items = _items()
    project.write_items(items)
    serve(fake_judge, items)
    folder = root / "prompts" / JUDGE
    folder.mkdir(parents=True)
    toml = (PROMPTS_ROOT / JUDGE / "judge.toml").read_text(encoding="utf-8")
    (folder / "judge.toml").write_text(toml, encoding="utf-8")
    add_version(root, "1.0")
    pytester.makefile(".ini", pytest=INI)
    pytester.makepyfile(
        **{
            "regression_tests/test_fitness": TEST_FITNESS,
            "regression_tests/test_probes": (ROOT / "regression_tests/test_probes.py").read_text(),
            "regression_tests/test_snapshots": (
                ROOT / "regression_tests/test_snapshots.py"
            ).read_text(),
        }
    )
    project.write_set_file("probes.toml", PROBES_TOML)
    monkeypatch.chdir(root)  # `python -m judges` finds the project's judges through pytest.ini
    write_probes(load_planted_set(root / "planted_sets", load_catalog(root / "prompts")[JUDGE]))
    recorded = run(project, record=True)
    assert recorded.ret == 0, recorded.stdout.str()[-3000:]
    run(project)  # the replay writes the report `baseline` reads
    code, said = baseline(root, JUDGE, "--accept", "1.0")
    assert code == 0, said
    assert run(project, "--snapshot-update").ret == 0
    green = run(project)
    assert green.ret == 0, green.stdout.str()[-3000:]
    return project


@pytest.mark.parametrize("version", ["2.0", "3.0"], ids=["length-biased", "injection-obeying"])
def test_an_artifact_added_by_the_recipe_alone_never_reads_pass(
    accepted_good_judge: JudgesProject, version: str
) -> None:
    project, root = accepted_good_judge, accepted_good_judge.root
    add_version(root, version)
    recorded = run(project, "-k", f"{JUDGE}-{version}", record=True)
    probed = {p.parent.name for p in (project.cassette_dir(version)).rglob("*.yaml")}
    # Nothing enrolled by hand: the probes (and their redraws) follow the judge.
    assert {"probe-padding", "probe-injection", "probe-noise"} <= probed, probed
    assert recorded.ret != 0  # its biased probe items fail as they are recorded

    replayed = run(project, "-rA")
    assert replayed.ret != 0
    # Its probe items fail: an injected note pleases both artifacts (it is longer, too).
    failed = [line for line in replayed.outlines if line.startswith("FAILED")]
    probed = [line for line in failed if f"test_probe_item[{JUDGE}-{version}-" in line]
    assert probed and all("-injection-" in line or "-padding-" in line for line in probed)
    # The main run cannot tell it from the good judge: its fitness test passes.
    assert f"PASSED regression_tests/test_fitness.py::test_judge_is_fit[{JUDGE}-{version}" in (
        replayed.stdout.str()
    )

    # The README's acceptance refuses it: its probes are significantly more biased than
    # the baseline's, which acceptance would otherwise write down as accepted failures.
    code, said = baseline(root, JUDGE, "--accept", version)
    assert code == 1 and "significantly worse than the accepted baseline" in said, said
    assert f"regression: {JUDGE} {version} on local:smollm2-135m: bias probes: " in said
    run(project, "--snapshot-update")
    after = run(project)
    assert after.ret != 0
    first = (root / "reports" / JUDGE / version / "report.md").read_text(encoding="utf-8")
    assert not first.splitlines()[0].endswith("PASS"), first[:600]
