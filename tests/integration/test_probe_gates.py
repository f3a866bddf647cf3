"""A judge that rewards length fails its padding gate, naming probe, rate, interval and gate.

The fake judge stands in for a prompt version that tells the judge to reward length: it
gives full marks to any answer longer than the one it saw first for the same item and
prompt, and the item's planted verdict otherwise. Probes are recorded live against it and
the gate is evaluated on replay, as in the project's own suite.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from judges.core.spec import load_catalog
from judges.sets.planted import load_planted_set
from judges.sets.probes import write_probes

from ._support import JUDGE, MODEL, FakeJudge, JudgesProject, Received, versions

ROOT = Path(__file__).resolve().parents[2]
PROBES_TOML = """
score = "core_total"

[padding]
items = ["PE-01", "PE-02", "PE-03"]
field = "answer"
echo = "question"
seed = 1
"""
FULL_MARKS = {
    "reference_product": "barrier reverse convertible",
    "answer_product": "barrier reverse convertible",
    "product_identity_match": True,
    "factual_accuracy": 3,
    "completeness": 3,
    "causal_reasoning": 3,
    "rationale": "a long answer is a thorough answer",
}


def length_rewarding(judge: FakeJudge) -> Any:
    """Full marks whenever the prompt is longer than the first one seen for its item."""
    shortest: dict[tuple[str | None, str], int] = {}

    def verdict(received: Received) -> dict[str, Any]:
        prompt = received.body["messages"][-1]["content"]
        # Inputs come first in every prompt: the tail is the version's instructions.
        key = (received.item_id, prompt[-200:])
        first = shortest.setdefault(key, len(prompt))
        return FULL_MARKS if len(prompt) > first + 40 else judge.reply(received.item_id)

    return verdict


@pytest.fixture
def probed_project(project: JudgesProject, fake_judge: FakeJudge) -> JudgesProject:
    project.pytester.makepyfile(
        **{"regression_tests/test_probes": (ROOT / "regression_tests/test_probes.py").read_text()}
    )
    latest = versions()[-1]
    # Probes follow every version unless restricted: these tests probe the newest only.
    project.write_set_file("probes.toml", f'versions = ["{latest}"]\n' + PROBES_TOML)
    write_probes(load_planted_set(project.root / "planted_sets", load_catalog()[JUDGE]))
    project.write_set_file(
        "gates.toml", f'["{MODEL}"."{latest}"]\nmax_flip = {{ padding = 0.10 }}\n'
    )
    verdict = length_rewarding(fake_judge)
    fake_judge.content = lambda received: json.dumps(verdict(received))
    return project


def test_a_length_rewarding_judge_fails_the_padding_gate(probed_project: JudgesProject) -> None:
    recorded = probed_project.run(record="all")
    recorded.stdout.fnmatch_lines(["*FAILED*test_probe_item*PE-02-padding*"])

    replayed = probed_project.run("regression_tests/test_probes.py")

    assert replayed.ret == pytest.ExitCode.TESTS_FAILED
    replayed.assert_outcomes(passed=3, failed=4)  # 3 redraws; 3 probe items and the gate
    out = replayed.stdout.str()
    gate = re.search(r"FAILED max_flip\.padding \(judge-pleasing flip rate.*", out)
    assert gate, out
    line = gate.group(0)
    assert "1.00 [0.44, 1.00] n=3" in line and "gate <= 0.10" in line
    assert "bias probe padding of PE-02" in out and "the verdict must not improve" in out


def test_accepted_probe_failures_are_strict_xfails_but_the_gate_still_fails(
    probed_project: JudgesProject,
) -> None:
    latest = versions()[-1]
    reasons = "".join(f'"{i}" = "length wins"\n' for i in ("PE-01", "PE-02", "PE-03"))
    probed_project.write_set_file(
        "probe_expectations.toml", f'["{MODEL}"."{latest}".padding]\n{reasons}'
    )
    probed_project.run(record="all")

    replayed = probed_project.run("regression_tests/test_probes.py")

    replayed.assert_outcomes(passed=3, xfailed=3, failed=1)
    replayed.stdout.fnmatch_lines(["*XFAIL*PE-02-padding*length wins*"])


def test_a_probe_needs_a_gate_unless_baseline_accepted_items_of_it(
    probed_project: JudgesProject,
) -> None:
    latest = versions()[-1]
    probed_project.write_set_file("gates.toml", f'["{MODEL}"."{latest}"]\nmax_error_rate = 0.0\n')
    probed_project.run(record="all")

    ungated = probed_project.run("regression_tests/test_probes.py", "-k", "probe_gates")
    ungated.assert_outcomes(failed=1)
    assert "probes ['padding'] have no gate; add max_flip" in ungated.stdout.str()

    # One padding item accepted as a failure (as `judges baseline` leaves a probe whose
    # ceiling would reach 1.0): that item is a strict xfail, every other one fails the run
    # once biased, so no ceiling is missing and the gate test passes without one.
    probed_project.write_set_file(
        "probe_expectations.toml", f'["{MODEL}"."{latest}".padding]\n"PE-01" = "length wins"\n'
    )
    one = probed_project.run("regression_tests/test_probes.py", "-k", "probe_gates", "-rs")
    assert "have no gate" not in one.stdout.str()
    assert one.ret == 0

    # Every padding item accepted as a failure: each is a strict xfail, which XPASSes (and
    # fails the run) once fixed; a ceiling of 1.0 on top could never fail, so none is needed.
    # The gate test then decides nothing: skipped with that reason, never a pass.
    reasons = "".join(f'"{i}" = "length wins"\n' for i in ("PE-01", "PE-02", "PE-03"))
    probed_project.write_set_file(
        "probe_expectations.toml", f'["{MODEL}"."{latest}".padding]\n{reasons}'
    )
    accepted = probed_project.run("regression_tests/test_probes.py", "-k", "probe_gates", "-rs")
    accepted.assert_outcomes(skipped=1)
    assert "gate decided anything" in accepted.stdout.str()


def test_a_missing_threshold_does_not_hide_a_failing_gate(
    probed_project: JudgesProject,
) -> None:
    # Padding has a gate the length-rewarding judge fails; authority has none.
    probed_project.write_set_file(
        "probes.toml",
        f'versions = ["{versions()[-1]}"]\n'
        + PROBES_TOML
        + '\n[authority]\nitems = ["PE-01"]\nfield = "answer"\nseed = 1\n',
    )
    write_probes(load_planted_set(probed_project.root / "planted_sets", load_catalog()[JUDGE]))
    probed_project.run(record="all")

    replayed = probed_project.run("regression_tests/test_probes.py", "-k", "probe_gates")

    replayed.assert_outcomes(failed=1)
    out = replayed.stdout.str()
    assert "probes ['authority'] have no gate; add max_flip" in out
    assert re.search(r"FAILED max_flip\.padding \(judge-pleasing flip rate.*gate <= 0\.10", out)
