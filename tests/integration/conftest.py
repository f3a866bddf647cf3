"""Fixtures of the integration tests: a fake judge server, a project laid out around it, and
an empty git repository for the walkthrough's commands."""

from __future__ import annotations

import _socket
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai  # noqa: F401  (see below)
import pytest
import vcr.stubs.httpx_stubs  # noqa: F401  (see below)

# Imported once here, not by every in-process inner run: pytester drops the modules an
# inline run imports; re-importing the SDKs costs more than the run itself, and numpy and
# the HTTP stack cannot be imported twice in one process.
import judges.calls._vcr
import judges.calls.backends
import judges.calls.cassettes
import judges.reports.render.github
import judges.reports.write
import judges.stats.estimates.floors  # noqa: F401
from judges.cli.init import VERDICTS_PACKAGE

from ._corpus import reply, write_corpus
from ._support import FAKE_KEY, FakeJudge, FakeJudgeServer, JudgesProject
from ._walkthrough import walkthrough_judge


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeJudgeServer]:
    """One OpenAI-compatible judge server on 127.0.0.1 per test module."""
    server = FakeJudgeServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_judge(fake_server: FakeJudgeServer) -> FakeJudge:
    """The module's fake judge, back to its default verdicts and with nothing received."""
    fake_server.judge.reset()
    return fake_server.judge


@pytest.fixture
def project(
    pytester: pytest.Pytester, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> JudgesProject:
    """A pytester project with a small product_identity planted set and the two test files.

    The inner runs get a fake local key (it must never reach disk), no paid-API keys and
    no GitHub variables.
    This (outer) suite replays offline and so blocks sockets; the block is lifted here so
    that in-process inner runs reach the fake judge, and block again on their own when
    they replay.
    """
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", FAKE_KEY)
    paid = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
    for name in (*paid, "OPENAI_ORG_ID"):
        monkeypatch.delenv(name, raising=False)
    # Run on GitHub, the inner runs must not write to the outer job's summary.
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket.socket, "connect", _socket.socket.connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _socket.socket.connect_ex)
    return JudgesProject(pytester, fake_judge)


@pytest.fixture
def repository(
    pytester: pytest.Pytester, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """An empty git repository; inner runs may reach the fake judge with a fake local key."""
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", FAKE_KEY)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket.socket, "connect", _socket.socket.connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _socket.socket.connect_ex)
    subprocess.run(["git", "init", "-q", str(pytester.path)], check=True)
    # In-process commands import the scaffold's verdict package by name: another test's
    # repository, imported earlier in this worker, must not answer for this one's.
    for name in [m for m in sys.modules if m.split(".")[0] == VERDICTS_PACKAGE]:
        del sys.modules[name]
    fake_judge.content = walkthrough_judge
    return pytester.path


@pytest.fixture
def corpus(
    tmp_path: Path, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[str]]:
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", FAKE_KEY)
    monkeypatch.setattr(socket.socket, "connect", _socket.socket.connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _socket.socket.connect_ex)
    monkeypatch.chdir(tmp_path)
    fake_judge.content = reply
    write_corpus(tmp_path / "corpora" / "tiny")
    args = ["--corpora", str(tmp_path / "corpora"), "--cassettes", str(tmp_path / "cassettes")]
    return tmp_path, args
