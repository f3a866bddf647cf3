"""Interrupted recordings, re-record commands, subset selection and the server's lifetime."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from judges.calls.backends import ModelRef
from judges.calls.cassette_files import miss_reason, recorded_interactions
from judges.calls.local_server import die_with_parent
from judges.pytest_plugin.invocation import partial_selection, rerecord_command
from judges.pytest_plugin.session import JudgesSession, RecordMode, Settings


def _cassette(path: Path, interactions: int) -> Path:
    data = {"version": 1, "interactions": [{"request": {}, "response": {}}] * interactions}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_an_interrupted_recording_counts_as_missing(tmp_path: Path) -> None:
    session = JudgesSession(Settings(rootdir=tmp_path, record=RecordMode.MISSING))
    partial = _cassette(tmp_path / "PE-01.yaml", 2)
    assert recorded_interactions(partial) == 2
    assert session._should_record(partial, repeats=5)
    assert not session._should_record(partial, repeats=2)
    assert session._should_record(tmp_path / "absent.yaml", repeats=1)
    everything = JudgesSession(Settings(rootdir=tmp_path, record=RecordMode.ALL))
    assert everything._should_record(partial, repeats=1)


def test_the_replay_names_an_interrupted_recording(tmp_path: Path) -> None:
    partial = _cassette(tmp_path / "PE-01.yaml", 2)
    model = ModelRef.parse("local:smollm2-135m")
    assert "2 of 5 repeats recorded" in miss_reason(partial, model, 5)
    assert "prompt file" not in miss_reason(partial, model, 5)
    assert "prompt file" in miss_reason(partial, model, 2)
    assert miss_reason(tmp_path / "absent.yaml", model, 1) == "does not exist"


def test_an_unreadable_cassette_holds_no_interaction(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("interactions: [unclosed", encoding="utf-8")
    assert recorded_interactions(broken) == 0
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n", encoding="utf-8")
    assert recorded_interactions(tmp_path / "list.yaml") == 0


def test_rerecord_command_quotes_the_sessions_options() -> None:
    options = ("--judge-model", "openai:gpt-4o", "--cassette-dir", "my cassettes")
    command = rerecord_command("t.py::test[a b]", options=options)
    assert command == (
        "pytest --record=all --judge-model openai:gpt-4o --cassette-dir 'my cassettes' "
        "'t.py::test[a b]'"
    )
    assert rerecord_command(keyword="PE-01") == "pytest --record=all -k PE-01"


class _Config:
    def __init__(self, args: list[str], **options: Any) -> None:
        self.args = args
        self.options = options

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)


def test_partial_selection_names_how_the_run_was_narrowed() -> None:
    assert partial_selection(_Config(["regression_tests"])) is None  # type: ignore[arg-type]
    assert partial_selection(_Config([], keyword="PE-01")) == "-k 'PE-01'"  # type: ignore[arg-type]
    assert partial_selection(_Config([], lf=True)) == "--lf"  # type: ignore[arg-type]
    nodes = ["a.py::t[1]", "a.py::t[2]"]
    assert partial_selection(_Config(nodes)) == "node id a.py::t[1] and 1 more"  # type: ignore[arg-type]


PARENT = """
import subprocess, sys, time
from judges.calls.backends import ModelRef
from judges.calls.local_server import die_with_parent
child = subprocess.Popen(["sleep", "60"], preexec_fn=die_with_parent(), start_new_session=True)
print(child.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie has died; only its reaping is left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_the_server_process_dies_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=os.environ
    )
    try:
        child = int(parent.stdout.readline())  # type: ignore[union-attr]
        assert _alive(child)
        parent.send_signal(signal.SIGKILL)  # no clean-up runs: only the kernel can help
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the child outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_die_with_parent_is_absent_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert die_with_parent() is None
