"""One live path: a judgement is called live only by the record or batch phase; a test
that finds its cassette unrecorded replays or fails, it never calls the judge itself."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from judges.calls.backends import ModelRef
from judges.core.naming import Case
from judges.pytest_plugin.session.judging import (
    JudgementMissing,
    Judging,
    in_live_phase,
    live_phase,
)


class _Reached(Exception):
    """The judgement went on to its judge: the call would have been made."""


class _Catalogue:
    @property
    def catalog(self) -> dict:
        raise _Reached


def _judging(tmp_path: Path) -> SimpleNamespace:
    return SimpleNamespace(
        settings=SimpleNamespace(cassettes=tmp_path, batch=False),
        prerecorded={},
        _replayed={},
        policy=SimpleNamespace(should_record=lambda *args: True),  # --record, none on disk
        catalogue=_Catalogue(),
    )


CASE = Case("j", "1.0", ModelRef.parse("openai:gpt-4o-mini"), "J-01", "one")


def test_a_test_never_calls_the_judge_live(tmp_path: Path) -> None:
    with pytest.raises(JudgementMissing) as refused:
        Judging.judge_case(_judging(tmp_path), CASE, rerecord="pytest --record -k J-01")  # type: ignore[arg-type]
    assert "was not recorded by the record phase, and a test only replays" in str(refused.value)
    assert str(refused.value).endswith("record it with:  pytest --record -k J-01")


def test_the_record_phase_calls_it_in_each_of_its_threads(tmp_path: Path) -> None:
    with live_phase(), pytest.raises(_Reached):
        Judging.judge_case(_judging(tmp_path), CASE, rerecord="")  # type: ignore[arg-type]
    assert not in_live_phase()  # over when the judgement is
    # Per thread: the phase's pool marks its own threads, and no other thread is marked.
    seen: list[bool] = []
    with live_phase():
        worker = threading.Thread(target=lambda: seen.append(in_live_phase()))
        worker.start()
        worker.join()
    assert seen == [False]
