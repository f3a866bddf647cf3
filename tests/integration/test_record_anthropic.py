"""The record phase on the anthropic backend, against the fake server's Messages API
(reached through the SDK's `ANTHROPIC_BASE_URL`): concurrent cassettes identical to
sequential ones, a 529 with Retry-After pausing every call, and the cost cap held."""

from __future__ import annotations

import shutil

import pytest

from ._support import (
    ANTHROPIC_MODEL,
    FAKE_ANTHROPIC_KEY,
    ITEMS,
    KEEP_LEDGER,
    MESSAGES_PATH,
    FakeJudge,
    JudgesProject,
    committed_peak,
    kept_ledger,
    load_cassette,
    versions,
)

JUDGEMENTS = len(versions()) * len(ITEMS)
PRICES = f"""
[models."{ANTHROPIC_MODEL}"]
input_per_mtok = 0.0
output_per_mtok = 1000000.0
"""


@pytest.fixture
def anthropic(project: JudgesProject, monkeypatch: pytest.MonkeyPatch) -> JudgesProject:
    """The project, its live anthropic calls sent to the fake judge with a fake key."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", project.judge.anthropic_url)
    return project


def _record(project: JudgesProject, *args: str) -> pytest.RunResult:
    shutil.rmtree(project.root / "cassettes", ignore_errors=True)
    model = ("--judge-model", ANTHROPIC_MODEL)
    return project.run("--record", *model, "-k", "test_planted_item", *args)


def _recorded(project: JudgesProject) -> dict[str, bytes]:
    root = project.root / "cassettes"
    return {str(p.relative_to(root)): p.read_bytes() for p in project.cassettes()}


def test_cassettes_are_identical_at_concurrency_1_and_8(
    anthropic: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = []
    for concurrency in ("1", "8"):
        fake_judge.reset()
        # Long enough at 8 that the eighth call is sent before the first one ends.
        fake_judge.delay_s = 0.3 if concurrency == "1" else 1.0
        result = _record(anthropic, "--judge-concurrency", concurrency)
        result.assert_outcomes(passed=JUDGEMENTS)
        assert len(fake_judge.calls) == JUDGEMENTS  # one call each: the tests did not call
        assert {r.path for r in fake_judge.calls} == {MESSAGES_PATH}
        assert fake_judge.max_in_flight == min(int(concurrency), JUDGEMENTS)
        recorded.append(_recorded(anthropic))
    assert len(recorded[0]) == JUDGEMENTS
    assert recorded[0] == recorded[1]
    (cassette, *_) = anthropic.cassettes()
    assert "anthropic-claude-sonnet-4-6" in str(cassette)
    (interaction,) = load_cassette(cassette)["interactions"]
    assert interaction["request"]["uri"].endswith(MESSAGES_PATH)
    assert anthropic.files_containing(FAKE_ANTHROPIC_KEY) == []

    # Replayed offline, with neither the key nor the fake server's address.
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    fake_judge.reset()
    replayed = anthropic.run("--judge-model", ANTHROPIC_MODEL, "-k", "test_planted_item")
    replayed.assert_outcomes(passed=JUDGEMENTS)
    assert fake_judge.calls == []


def test_a_529_with_retry_after_pauses_every_call_in_flight(
    anthropic: JudgesProject, fake_judge: FakeJudge
) -> None:
    # As the 429 test of the OpenAI backend: the 529 comes at once, the other calls of the
    # first burst end 0.5 s later, and nothing may be sent before Retry-After has passed.
    fake_judge.delay_s = 0.5
    fake_judge.limit_next = 1
    fake_judge.limit_status = 529
    fake_judge.retry_after = "1.5"
    fake_judge.limit_when_in_flight = 8  # the whole first burst
    result = _record(anthropic, "--judge-concurrency", "8")

    result.assert_outcomes(passed=JUDGEMENTS)  # the overloaded call was retried after it
    (limited,) = fake_judge.limited_at
    arrivals = [r.at - limited for r in fake_judge.calls]
    assert [t for t in arrivals if 0.25 < t < 1.5 - 0.05] == []
    assert any(t >= 1.45 for t in arrivals)
    assert len(fake_judge.calls) == JUDGEMENTS + 1


def test_the_cost_cap_holds_at_concurrency_8(
    anthropic: JudgesProject, fake_judge: FakeJudge
) -> None:
    anthropic.pytester.makefile(".toml", prices=PRICES)
    anthropic.pytester.makeconftest(KEEP_LEDGER)
    fake_judge.delay_s = 0.3
    cap = 700.0
    result = _record(
        anthropic,
        "--judge-prices",
        "prices.toml",
        "--cost-cap",
        str(cap),
        "--judge-concurrency",
        "8",
    )

    peak, spent = committed_peak(kept_ledger(anthropic.root))
    calls = len(fake_judge.calls)
    assert spent == 20.0 * calls  # 20 output tokens at 1 USD each
    assert peak <= cap
    assert 1 <= calls < JUDGEMENTS  # the cap stopped the others before they were sent
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == calls
    assert outcomes.get("skipped") == JUDGEMENTS - calls  # each as cost_cap
    assert "cost_cap: cost cap reached" in result.stdout.str()
