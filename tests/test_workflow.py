"""The GitHub workflow installs, runs the offline gate with xdist and keeps the reports."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "judges.yml"


def steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    return job["steps"]


def step(name: str) -> dict[str, Any]:
    (found,) = [s for s in steps() if s.get("name") == name]
    return found


def test_the_gate_runs_offline_with_xdist_and_checks_the_reports() -> None:
    names = [s.get("name") for s in steps()]
    assert names.index("Install") < names.index("Offline gate") < names.index("Upload reports")
    assert "pip install -e" in step("Install")["run"]
    argv = shlex.split(step("Offline gate")["run"])
    assert argv[:5] == ["python", "-m", "pytest", "-n", "auto"]
    assert "regression_tests" in argv and "--check-reports" in argv
    assert "--record" not in " ".join(argv)  # offline: no key, no network
    # A failing gate fails the step (pytest's exit code), so the job: nothing swallows it.
    assert "continue-on-error" not in step("Offline gate")
    assert "||" not in step("Offline gate")["run"]


def test_the_reports_are_uploaded_also_when_the_gate_failed() -> None:
    upload = step("Upload reports")
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["if"] == "${{ !cancelled() }}"
    assert "reports/" in upload["with"]["path"].split()
