"""Fixtures of the integration tests: a fake judge server and a project laid out around it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._support import FAKE_KEY, FakeJudge, FakeJudgeServer, JudgesProject


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    """An OpenAI-compatible judge server on 127.0.0.1 whose verdicts a test can change."""
    server = FakeJudgeServer()
    try:
        yield server.judge
    finally:
        server.stop()


@pytest.fixture
def project(
    pytester: pytest.Pytester, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> JudgesProject:
    """A pytester project with a small product_identity planted set and the two test files.

    The inner runs get a fake local key (it must never reach disk) and no paid-API keys.
    """
    monkeypatch.setenv("JUDGES_LOCAL_API_KEY", FAKE_KEY)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID"):
        monkeypatch.delenv(name, raising=False)
    return JudgesProject(pytester, fake_judge)
