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

from judges.calls import local_server
from judges.calls.backends import ModelRef
from judges.calls.cassette_files import miss_reason, recorded_base_url, recorded_interactions
from judges.calls.local_server import die_with_parent
from judges.core.naming import Case
from judges.core.results import JudgementRow, jsonl_text
from judges.pytest_plugin.invocation import (
    partial_selection,
    rerecord_command,
    with_recording_options,
)
from judges.pytest_plugin.pinned import BaselineGuard, missing_hint
from judges.pytest_plugin.session import JudgesSession, RecordMode, Settings
from judges.reports.model.data import RESULTS_FILE
from judges.sets.pins import Pin
from judges.storage import installation


def _cassette(path: Path, interactions: int) -> Path:
    data = {"version": 1, "interactions": [{"request": {}, "response": {}}] * interactions}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


CASE = Case("product_identity", "0.2", ModelRef.parse("local:smollm2-135m"), "PE-01", "x")


def _settings(tmp_path: Path, mode: RecordMode) -> Settings:
    return Settings(rootdir=tmp_path, record=mode, planted_sets=tmp_path / "planted_sets")


def test_an_interrupted_recording_counts_as_missing(tmp_path: Path) -> None:
    session = JudgesSession(_settings(tmp_path, RecordMode.MISSING))
    partial = _cassette(tmp_path / "PE-01.yaml", 2)
    assert recorded_interactions(partial) == 2
    assert session.policy.should_record(partial, 5, CASE, "main")
    assert not session.policy.should_record(partial, 2, CASE, "main")
    assert session.policy.should_record(tmp_path / "absent.yaml", 1, CASE, "main")
    everything = JudgesSession(_settings(tmp_path, RecordMode.ALL))
    assert everything.policy.should_record(partial, 1, CASE, "main")


def test_an_accepted_baselines_cassettes_are_kept_unless_asked_by_name(tmp_path: Path) -> None:
    pins = {("local:smollm2-135m", "0.2"): Pin("local:smollm2-135m", "0.2", "2026-12-02")}
    folder = tmp_path / "cassettes"
    folder.mkdir()
    recorded = _cassette(folder / "PE-01.yaml", 1)
    guard = BaselineGuard(allow=False)
    assert guard.keeps(pins, CASE, "main", recorded)  # replacing it
    assert guard.keeps(
        pins, CASE, "main", folder / "PE-02.yaml"
    )  # filling a gap left by a deletion
    assert not guard.keeps({}, CASE, "main", recorded)  # not an accepted baseline
    assert not guard.keeps(
        pins, CASE, "main", tmp_path / "elsewhere" / "PE-01.yaml"
    )  # replaces nothing
    other = Case("product_identity", "0.3", CASE.model, "PE-01", "x")
    assert not guard.keeps(pins, other, "main", recorded)
    assert guard.lines() == [
        "kept 2 cassette(s) of the accepted baseline product_identity prompt 0.2 on "
        "local:smollm2-135m: --record never replaces an accepted baseline (pinned in "
        "accepted.toml); to re-record it on purpose add --rerecord-baseline, or record the "
        "change as a new version"
    ]
    allowed = BaselineGuard(allow=True)
    assert not allowed.keeps(pins, CASE, "main", recorded)
    assert allowed.lines() and allowed.lines()[0].startswith("re-recorded 1 cassette(s)")
    hint = missing_hint(pins, CASE, Path("x.yaml"), guard, "main")
    assert "from a copy of the accepted recording (git does not track x.yaml" in hint
    assert missing_hint({}, CASE, Path("x.yaml"), guard, "main") == ""


def test_record_missing_counts_only_what_it_would_record_as_kept(tmp_path: Path) -> None:
    """--record=missing never replaces a complete cassette anyway: the terminal's "kept"
    count names only the gaps the guard refused to fill, not every cassette it passed."""
    pins = {("local:smollm2-135m", "0.2"): Pin("local:smollm2-135m", "0.2", "2026-12-02")}
    session = JudgesSession(_settings(tmp_path, RecordMode.MISSING))
    session.policy.pins = lambda case: pins
    recorded = _cassette(tmp_path / "PE-01.yaml", 1)
    assert not session.policy.should_record(recorded, 1, CASE, "main")
    assert session.baselines.lines() == []
    assert not session.policy.should_record(tmp_path / "PE-02.yaml", 1, CASE, "main")  # a gap
    assert session.baselines.lines()[0].startswith("kept 1 cassette(s) of the accepted")


def test_a_run_the_baseline_never_had_is_recorded_whole(tmp_path: Path) -> None:
    """A noise run enrolled after acceptance: its folder was empty when the session began,
    so its first cassette does not make the others look like deleted ones."""
    pins = {("local:smollm2-135m", "0.2"): Pin("local:smollm2-135m", "0.2", "2026-12-02")}
    noise = tmp_path / "cassettes" / "noise"
    guard = BaselineGuard(allow=False)
    assert not guard.keeps(pins, CASE, "noise", noise / "PE-01.yaml")
    noise.mkdir(parents=True)
    written = _cassette(noise / "PE-01.yaml", 5)  # the session records the first one
    assert not guard.keeps(pins, CASE, "noise", noise / "PE-02.yaml")
    assert guard.keeps(pins, CASE, "noise", written)  # but never replaces one it finds
    assert BaselineGuard(allow=False).keeps(
        pins, CASE, "noise", noise / "PE-02.yaml"
    )  # next session


def test_a_judgement_the_accepted_recording_never_held_is_recorded(tmp_path: Path) -> None:
    """A grown set: items added (or enrolled in a run) after acceptance have no row in the
    accepted recording's results, so recording them replaces nothing; a deleted cassette
    of a judgement the results hold is still a gap that is never filled silently."""
    pins = {("local:smollm2-135m", "0.2"): Pin("local:smollm2-135m", "0.2", "2026-12-02")}
    rows = [
        JudgementRow(
            judge="product_identity",
            prompt_version="0.2",
            prompt_hash="h",
            run=run,
            model="local:smollm2-135m",
            item_id="PE-01",
            category="c",
            control=False,
            status="ok",
            verdict={},
            expect=[],
            met=True,
        )
        for run in ("main", "retest")
    ]
    results = tmp_path / "reports" / "product_identity" / "0.2" / RESULTS_FILE
    results.parent.mkdir(parents=True)
    results.write_text(jsonl_text(rows), encoding="utf-8")
    folder = tmp_path / "cassettes"
    folder.mkdir()
    _cassette(folder / "PE-03.yaml", 1)  # the folder holds a recording
    guard = BaselineGuard(allow=False, reports=tmp_path / "reports")
    added = Case("product_identity", "0.2", CASE.model, "PE-02", "x")
    assert not guard.keeps(pins, added, "main", folder / "PE-02.yaml")
    assert guard.keeps(pins, CASE, "main", folder / "PE-01.yaml")  # deleted: held by results
    assert not guard.keeps(pins, CASE, "noise", folder / "noise" / "PE-01.yaml")  # new run
    assert guard.lines()[-1] == (
        "recorded 2 judgement(s) new to the accepted baseline product_identity prompt 0.2 on "
        "local:smollm2-135m: items or runs added to its set since it was accepted; nothing "
        "it held was replaced"
    )
    # Its replay miss asks for the recording any missing judgement gets, not a restore.
    assert missing_hint(pins, added, Path("PE-02.yaml"), guard, "main") == ""
    assert "Restore the cassette" in missing_hint(pins, CASE, Path("PE-01.yaml"), guard, "main")
    # Without results to read, nothing is known to be new: the folder decides, as before.
    blind = BaselineGuard(allow=False, reports=tmp_path / "elsewhere")
    assert blind.keeps(pins, added, "main", folder / "PE-02.yaml")


def test_the_replay_names_an_interrupted_recording(tmp_path: Path) -> None:
    partial = _cassette(tmp_path / "PE-01.yaml", 2)
    model = ModelRef.parse("local:smollm2-135m")
    assert "2 of 5 repeats recorded" in miss_reason(partial, model, 5)
    # Or set.toml now asks for more draws than a version was recorded with.
    assert "noise_repeats or retest_draws" in miss_reason(partial, model, 5)
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


def test_a_rerecord_command_gains_the_recordings_model_and_server() -> None:
    model = ModelRef("local", "my-judge")
    bare = rerecord_command(keyword="PE-01")
    assert with_recording_options(bare, model, "http://10.0.0.7:8080/v1") == (
        "pytest --record=all --judge-model local:my-judge --judge-base-url "
        "http://10.0.0.7:8080/v1 -k PE-01"
    )
    named = rerecord_command(keyword="PE-01", options=("--judge-model", "local:other"))
    assert with_recording_options(named, model, None) == named
    assert with_recording_options("", model, None) == ""


def _recorded(path: Path, uri: str, fingerprint: dict[str, str]) -> Path:
    interaction = {"request": {"uri": uri, "body": "{}"}, "response": {}}
    data = {"interactions": [interaction], "metadata": {"judge_fingerprint": fingerprint}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_the_server_of_a_recording_is_read_back_for_the_users_server_only(tmp_path: Path) -> None:
    uri = "http://10.0.0.7:8080/v1/chat/completions"
    served = _recorded(tmp_path / "a.yaml", uri, {"backend": "local", "model": "m"})
    assert recorded_base_url(served) == "http://10.0.0.7:8080/v1"
    # The embedded judge starts on a new port each time: no URL to repeat.
    embedded = {"backend": "local", "model": "m", "model_sha256": "ab"}
    assert recorded_base_url(_recorded(tmp_path / "b.yaml", uri, embedded)) is None
    hosted = {"backend": "openai", "model": "gpt-4o"}
    assert recorded_base_url(_recorded(tmp_path / "c.yaml", uri, hosted)) is None
    (tmp_path / "d.yaml").write_text("<<<<<<< HEAD\n", encoding="utf-8")
    assert recorded_base_url(tmp_path / "d.yaml") is None


def test_partial_selection_names_how_the_run_was_narrowed() -> None:
    assert partial_selection(_Config(["regression_tests"])) is None  # type: ignore[arg-type]
    assert partial_selection(_Config([], keyword="PE-01")) == "-k 'PE-01'"  # type: ignore[arg-type]
    assert partial_selection(_Config([], lf=True)) == "--lf"  # type: ignore[arg-type]
    nodes = ["a.py::t[1]", "a.py::t[2]"]
    assert partial_selection(_Config(nodes)) == "node id a.py::t[1] and 1 more"  # type: ignore[arg-type]


PARENT = """
import subprocess, sys, time
from judges.calls.backends import ModelRef
from judges.calls import local_server
from judges.storage import installation
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


class _Installed:
    def __init__(self, direct_url: str | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return self.direct_url if name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("records", "command"),
    [
        # A source tree's egg-info (no record) comes first from its own folder.
        ([None, '{"url": "file:///src/my%20harness", "dir_info": {"editable": true}}'],
         "pip install -e '/src/my harness[local]'"),
        (['{"url": "file:///wheels/x", "dir_info": {}}'], "pip install '/wheels/x[local]'"),
        (['{"url": "https://example.org/h.git", "vcs_info": {"vcs": "git", "commit_id": "ab1"}}'],
         "pip install 'pytest-judges[local] @ git+https://example.org/h.git@ab1'"),
        ([None], "pip install 'pytest-judges[local]'"),
        (["not json"], "pip install 'pytest-judges[local]'"),
    ],
)  # fmt: skip
def test_the_local_extra_hint_installs_into_this_installation_from_anywhere(
    monkeypatch: pytest.MonkeyPatch, records: list[str | None], command: str
) -> None:
    installed = [_Installed(record) for record in records]
    monkeypatch.setattr(installation.metadata, "distributions", lambda name: iter(installed))
    assert local_server.local_extra_command() == 'CMAKE_ARGS="-DGGML_NATIVE=OFF" ' + command


def test_a_rerecorded_baseline_is_compared_with_its_previous_recording() -> None:
    from judges.core.results import read_jsonl
    from judges.pytest_plugin.pinned import rerecorded_text

    root = Path(__file__).resolve().parents[1] / "reports" / "product_identity"
    previous = [r for r in read_jsonl(root / "0.3.1" / "results.jsonl") if r.run == "main"]
    # The same recording again: nothing moved.
    same = rerecorded_text(previous, previous)
    assert same.startswith("detection 16/46 -> 16/46 on the same items (0 caught->missed")
    assert same.endswith(f"; 0 of {len(previous)} main-run verdicts changed")
    # Four caught defects now missed: the McNemar line says so, with its p-value.
    caught = [r for r in previous if not r.control and r.met][:4]
    lost = {r.item_id for r in caught}
    new = [r.model_copy(update={"met": False}) if r.item_id in lost else r for r in previous]
    text = rerecorded_text(previous, new)
    assert text.startswith("detection 16/46 -> 12/46 on the same items (4 caught->missed, ")
    assert "0 missed->caught, one-sided McNemar mid-p = 0.0312" in text
    assert rerecorded_text(previous, []) == "no item of the previous main run was re-recorded"
