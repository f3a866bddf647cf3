"""Judge fingerprints: stored in cassettes and rows, and mixed judges flagged in comparisons."""

from __future__ import annotations

import json

import pytest

from ._support import (
    ITEMS,
    JUDGE,
    MODEL,
    FakeJudge,
    FakeJudgeServer,
    JudgesProject,
    load_cassette,
    versions,
)


def _record(project: JudgesProject, url: str, version: str) -> pytest.RunResult:
    return project.run("--record", "--judge-base-url", url, "-k", f"{JUDGE}-{version}-")


def _rows(project: JudgesProject, version: str) -> list[dict]:
    path = project.root / "reports" / JUDGE / version / "results.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_two_judges_answering_one_request_differently_are_flagged(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    older, newer = versions()[-2], versions()[-1]
    fake_judge.system_fingerprint = "fp_one"
    other = FakeJudgeServer()
    other.judge.system_fingerprint = "fp_two"
    other.judge.scores = {item["id"]: 3 for item in ITEMS}  # it finds nothing wrong
    try:
        assert _record(project, fake_judge.url, older).ret == pytest.ExitCode.OK
        second = _record(project, other.judge.url, newer)
    finally:
        other.stop()
    assert len(other.judge.calls) == len(ITEMS)

    # The cassette keeps the fingerprint beside its interactions, not in the matched request.
    for version, fingerprint in ((older, "fp_one"), (newer, "fp_two")):
        for path in sorted(project.cassette_dir(version).glob("*.yaml")):
            stored = load_cassette(path)["metadata"]["judge_fingerprint"]
            assert stored["system_fingerprint"] == fingerprint, path
            assert stored["backend"] == "local" and stored["model"] == MODEL.split(":")[1]
        for row in _rows(project, version):
            assert row["fingerprint"]["system_fingerprint"] == fingerprint

    comparison = (project.root / "reports" / JUDGE / newer / "comparison.md").read_text()
    head = comparison.split("- Paired items")[0]
    assert "**Mixed judge fingerprints:**" in head, comparison
    assert "system_fingerprint=fp_one" in head and "system_fingerprint=fp_two" in head
    assert f'pytest regression_tests --record=all --judge-model {MODEL} -k "{JUDGE}-{older}-"' in (
        head
    )
    report = (project.root / "reports" / JUDGE / newer / "report.md").read_text()
    assert "| Judge fingerprint (main) | local:smollm2-135m " in report
    second.assert_outcomes(passed=1, failed=2)  # the second judge misses both defects

    # Replayed offline, the rows still carry the fingerprint their cassettes were made by.
    replayed = project.run("-k", f"{JUDGE}-{newer}-")
    replayed.assert_outcomes(passed=1, failed=2)
    assert {row["fingerprint"]["system_fingerprint"] for row in _rows(project, newer)} == {"fp_two"}


def test_one_judge_on_both_sides_is_not_flagged(
    project: JudgesProject, fake_judge: FakeJudge
) -> None:
    older, newer = versions()[-2], versions()[-1]
    fake_judge.system_fingerprint = "fp_one"
    assert _record(project, fake_judge.url, older).ret == pytest.ExitCode.OK
    assert _record(project, fake_judge.url, newer).ret == pytest.ExitCode.OK

    comparison = (project.root / "reports" / JUDGE / newer / "comparison.md").read_text()
    assert "Mixed judge fingerprints" not in comparison
    assert "- Judge fingerprint (both versions): local:smollm2-135m" in comparison
