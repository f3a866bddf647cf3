"""A run needs only what its calls need: a replay spends nothing, so it needs no price; a
`--record` run with nothing to record starts no embedded judge, and one with something to
record starts it at the record phase, for those calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import judges.calls.fingerprint
import judges.calls.local_server

from ._support import FAKE_KEY, ITEMS, FakeJudge, JudgesProject, cassette_name, versions

PAID = "openai:gpt-4o"  # in no price table: only a live call would need its price
PRICES = f'[models."{PAID}"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10.0\n'


def test_a_replay_of_an_unpriced_paid_model_needs_no_price(
    project: JudgesProject, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    project.pytester.makefile(".toml", prices=PRICES)
    model = ("--judge-model", PAID, "-k", "test_planted_item")
    recorded = project.run("--record", *model, "--judge-prices", "prices.toml")
    recorded.assert_outcomes(passed=len(versions()) * len(ITEMS))

    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = project.run(*model)  # as the README's replay: no price file

    replayed.assert_outcomes(passed=len(versions()) * len(ITEMS))
    assert "no price for" not in replayed.stdout.str()
    assert len(fake_judge.calls) == len(versions()) * len(ITEMS)  # nothing sent again


class _Started:
    """Stands in for the embedded judge: the fake judge's URL, and a count of starts."""

    def __init__(self, url: str) -> None:
        self.base_url = url
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True

    def state(self) -> str:
        return "running"


@pytest.fixture
def starts(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> list[_Started]:
    """Every start of the embedded judge in the inner runs, served by the fake judge."""
    started: list[_Started] = []

    def start(**_: Any) -> _Started:
        started.append(_Started(fake_judge.url))
        return started[-1]

    monkeypatch.setattr(judges.calls.local_server, "start_local_server", start)
    monkeypatch.setattr(judges.calls.local_server, "embedded_model_path", lambda: tmp_path)
    monkeypatch.setattr(judges.calls.fingerprint, "embedded_fingerprint", lambda _: {})
    return started


def test_record_with_nothing_to_record_starts_no_embedded_judge(
    project: JudgesProject, fake_judge: FakeJudge, starts: list[_Started]
) -> None:
    project.run(record="all", base_url=fake_judge.url)  # every cassette, at the fake judge
    calls = len(fake_judge.calls)

    again = project.run("--record=missing")  # no --judge-base-url: the embedded judge's

    assert again.ret == pytest.ExitCode.OK, again.stdout.str()[-2000:]
    assert starts == []
    assert len(fake_judge.calls) == calls


def test_record_with_a_call_to_make_starts_the_embedded_judge_for_it(
    project: JudgesProject, fake_judge: FakeJudge, starts: list[_Started]
) -> None:
    project.run(record="all", base_url=fake_judge.url)
    calls = len(fake_judge.calls)
    item = ITEMS[0]
    (project.cassette_dir(versions()[0]) / cassette_name(item)).unlink()

    again = project.run("--record=missing")

    assert again.ret == pytest.ExitCode.OK, again.stdout.str()[-2000:]
    assert len(starts) == 1 and starts[0].stopped  # started for the one call, then stopped
    assert len(fake_judge.calls) == calls + 1
