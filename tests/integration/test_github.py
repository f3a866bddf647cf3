"""On GitHub Actions: the step summary, `::error` annotations and JUnit properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ._support import ITEMS, JUDGE, MODEL, FakeJudge, JudgesProject, versions

COUSIN = ITEMS[1]  # the fake judge misses it below: a failed item and a failed gate


def gates_toml() -> str:
    """A passing table for the oldest version, then the latest's with a failing cousin gate."""
    first, latest = versions()[0], versions()[-1]
    return (
        "# thresholds\n"  # line 1
        f'["{MODEL}"."{first}"]\n'  # 2
        "min_detection = { sign_flip = 0.1 }\n"  # 3
        "\n"  # 4
        f'["{MODEL}"."{latest}"]\n'  # 5
        "max_control_false_positive = 0.4\n"  # 6
        "min_detection = { sign_flip = 0.5, cousin = 0.9 }\n"  # 7
    )


@pytest.fixture
def failing(project: JudgesProject, fake_judge: FakeJudge) -> JudgesProject:
    """Recorded cassettes where the judge misses the cousin item; gates that catch it."""
    fake_judge.scores[COUSIN["id"]] = 3
    project.write_set_file("gates.toml", gates_toml())
    recorded = project.run(record="all")
    # The missed cousin fails its item test already while recording.
    n = len(versions())
    recorded.assert_outcomes(passed=2 * n, failed=n, skipped=n)
    assert len(project.cassettes()) == len(versions()) * len(ITEMS)
    return project


def test_a_failed_gate_and_item_are_summarised_and_annotated(
    failing: JudgesProject, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    latest = versions()[-1]

    result = failing.run()

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n"), "the summary must be appended to"
    rows = [line for line in text.splitlines() if line.startswith(f"| {JUDGE} |")]
    assert [row.split(" | ")[1] for row in rows] == versions()
    for row in rows:
        # Two items decide no chance test (fitness undecided, nothing at chance): the missed
        # cousin item fails the version.
        assert f"| {MODEL} | FAIL :x:" in row
        assert "| 1/2 = 0.50 [0." in row  # sign flip caught, cousin missed
    assert "| 1 passed, 0 failed |" in rows[0]  # sign_flip >= 0.1 holds; no other threshold
    assert "| 2 passed, 1 failed :x: |" in rows[-1]
    for version, row in zip(versions()[:-1], rows[1:], strict=True):
        assert f"vs {version}: 0.50 -> 0.50 on {len(ITEMS)} paired items" in row
        assert "two-sided McNemar p = 1.0000 |" in row  # the same misses under both versions
    assert "### Failed gates" in text
    assert (
        f"- {JUDGE} {latest} on {MODEL}: detection[cousin]: 0/1 = 0.00 [0.00, 0.79] n=1 "
        "(gate >= 0.90)" in text
    )

    out = result.stdout.lines
    gates = f"planted_sets/{JUDGE}/gates.toml"
    gate_errors = [line for line in out if line.startswith(f"::error file={gates},")]
    assert gate_errors == [
        f"::error file={gates},line=7,title=gate failed%3A {JUDGE} {latest}::{JUDGE} prompt "
        f"{latest} on {MODEL}: detection[cousin]: 0/1 = 0.00 [0.00, 0.79] n=1 (gate >= 0.90)"
    ]
    items = f"planted_sets/{JUDGE}/items.jsonl"
    item_errors = [line for line in out if line.startswith(f"::error file={items},")]
    assert len(item_errors) == len(versions())
    for version, line in zip(versions(), item_errors, strict=True):
        assert line.startswith(
            f"::error file={items},line=2,title=planted item {COUSIN['id']}::{JUDGE} prompt "
            f"{version} on {MODEL}: item {COUSIN['id']} (cousin) ok: expected factual_accuracy"
        )


def test_without_the_variables_nothing_is_written(failing: JudgesProject, tmp_path: Path) -> None:
    result = failing.run()

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not [line for line in result.stdout.lines if line.startswith("::")]
    assert not list(tmp_path.glob("*.md"))


def test_a_passing_run_has_no_failed_gates_and_no_annotations(
    project: JudgesProject, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert project.run(record="all").ret == pytest.ExitCode.OK
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")

    result = project.run()

    assert result.ret == pytest.ExitCode.OK
    text = summary.read_text(encoding="utf-8")
    assert len([line for line in text.splitlines() if line.startswith(f"| {JUDGE} |")]) == len(
        versions()
    )
    assert "| no thresholds |" in text
    assert "Failed gates" not in text
    assert not [line for line in result.stdout.lines if line.startswith("::error")]


def properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_junit_xml_carries_judge_version_model_item_and_category(failing: JudgesProject) -> None:
    # Set at collection, the properties travel from xdist workers like any user property.
    result = failing.run("--junitxml=junit.xml")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cases = ET.parse(failing.root / "junit.xml").getroot().iter("testcase")
    by_name = {case.get("name", ""): properties(case) for case in cases}
    for version in versions():
        for item in ITEMS:
            found = by_name[f"test_planted_item[{JUDGE}-{version}-{item['id']}-{item['slug']}]"]
            assert {k: found[k] for k in ("judge", "prompt_version", "model")} == {
                "judge": JUDGE,
                "prompt_version": version,
                "model": MODEL,
            }
            assert (found["item_id"], found["category"]) == (item["id"], item["category"])
            assert not [name for name in found if name.startswith("judges.")]  # no row in it
        gate = by_name[f"test_detection_gates[{JUDGE}-{version}]"]
        assert (gate["judge"], gate["prompt_version"], gate["model"]) == (JUDGE, version, MODEL)
        assert "item_id" not in gate
