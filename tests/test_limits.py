"""Rate limits: ceilings per model over a sliding window, pauses shared through a file."""

from __future__ import annotations

import json
import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from judges.calls.backends import BackendError, JudgeRequest, JudgeResponse, ModelRef
from judges.calls.limits import Ceiling, LimitedBackend, Limiter, load_ceilings, retry_after

MODEL = "openai:gpt-4o-2024-11-20"


@dataclass
class _GrantLog(Limiter):
    """A limiter that reports the session-clock time of each call it lets through (measured
    after `acquire` returns, a loaded machine would blur the windows)."""

    out: Any = None

    def _ceiling_wait(self, state: dict[str, Any], model: str, tokens: int, now: float) -> float:
        wait = super()._ceiling_wait(state, model, tokens, now)
        if wait <= 0:
            self.out.put(now)
        return wait


def _limiter(path: Path, ceiling: Ceiling, window_s: float) -> _GrantLog:
    return _GrantLog(path, {MODEL: ceiling}, window_s=window_s, out=queue.Queue())


def _granted(*limiters: _GrantLog) -> list[float]:
    """Every grant time the limiters recorded, in order (their threads have ended)."""
    times = []
    for limiter in limiters:
        while not limiter.out.empty():
            times.append(limiter.out.get())
    return sorted(times)


def _starts(limiter: _GrantLog, calls: int, tokens: int, threads: int = 4) -> list[float]:
    """Start `calls` acquisitions from `threads` threads; the times each was granted."""
    todo = iter(range(calls))

    def work() -> None:
        for _ in iter(lambda: next(todo, None), None):
            limiter.acquire(MODEL, tokens)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return _granted(limiter)


def _most_in_a_window(times: list[float], window: float) -> int:
    return max(sum(1 for t in times if start <= t < start + window) for start in times)


def test_requests_per_minute_ceiling_holds_in_every_window(tmp_path: Path) -> None:
    limiter = _limiter(tmp_path / "limits.json", Ceiling(rpm=5), window_s=1.0)
    granted = _starts(limiter, calls=12, tokens=1)
    assert len(granted) == 12
    assert _most_in_a_window(granted, 0.99) <= 5
    assert granted[-1] - granted[0] >= 1.9  # 12 calls at 5 a window need three windows


def test_tokens_per_minute_ceiling_holds_in_every_window(tmp_path: Path) -> None:
    limiter = _limiter(tmp_path / "limits.json", Ceiling(tpm=100), window_s=0.5)
    granted = _starts(limiter, calls=6, tokens=40)
    assert _most_in_a_window(granted, 0.49) <= 2  # 3 x 40 tokens > 100
    assert granted[-1] - granted[0] >= 0.95


def test_a_ceiling_holds_across_limiters_sharing_the_file(tmp_path: Path) -> None:
    # Two limiters on one file: two xdist workers of one session, each sending.
    path = tmp_path / "limits.json"
    workers = [_limiter(path, Ceiling(rpm=4), window_s=1.0) for _ in range(2)]

    def send(limiter: Limiter) -> None:
        for _ in range(5):
            limiter.acquire(MODEL, 1)

    threads = [threading.Thread(target=send, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    granted = _granted(*workers)
    assert len(granted) == 10
    assert _most_in_a_window(granted, 0.99) <= 4  # not 4 per worker: 4 for the session
    assert granted[-1] - granted[0] >= 1.9


def _send_from_another_process(path: str, times: int, out: Any) -> None:
    limiter = _GrantLog(Path(path), {MODEL: Ceiling(rpm=3)}, window_s=1.0, out=out)
    for _ in range(times):
        limiter.acquire(MODEL, 1)


def test_a_ceiling_holds_across_processes(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    path = str(tmp_path / "limits.json")
    processes = [
        context.Process(target=_send_from_another_process, args=(path, 3, out)) for _ in range(2)
    ]
    for process in processes:
        process.start()
    granted = sorted(out.get(timeout=60) for _ in range(6))
    for process in processes:
        process.join(timeout=60)
    assert _most_in_a_window(granted, 0.999) <= 3  # 3 for the session, not 3 per process
    assert granted[-1] - granted[0] >= 1.0


def test_a_damaged_limits_file_is_a_fresh_state(tmp_path: Path) -> None:
    path = tmp_path / "limits.json"
    path.write_text("{not json")
    limiter = Limiter(path, {MODEL: Ceiling(rpm=1)}, window_s=60.0)
    limiter.acquire(MODEL, 1)
    assert json.loads(path.read_text())["sent"][MODEL][0][1] == 1


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait of the limiter, in seconds (it still waits): never a timed upper bound,
    which a loaded machine would break."""
    waits: list[float] = []
    sleep = time.sleep

    def recorded(seconds: float) -> None:
        waits.append(seconds)
        sleep(seconds)

    monkeypatch.setattr("judges.calls.limits.time.sleep", recorded)
    return waits


def test_no_ceiling_never_waits(tmp_path: Path, sleeps: list[float]) -> None:
    limiter = _GrantLog(tmp_path / "limits.json", {}, window_s=60.0, out=queue.Queue())
    assert len(_starts(limiter, calls=50, tokens=10_000)) == 50
    assert sleeps == []


def test_a_pause_holds_every_limiter_sharing_the_file(tmp_path: Path, sleeps: list[float]) -> None:
    # Two limiters on one file: two xdist workers of one session.
    one, other = Limiter(tmp_path / "limits.json"), Limiter(tmp_path / "limits.json")
    one.pause(MODEL, 0.6)
    started = time.monotonic()
    other.acquire(MODEL, 1)
    assert time.monotonic() - started >= 0.5
    sleeps.clear()
    other.acquire("openai:another-model", 1)  # other models are not held
    assert sleeps == []


def _error(status: int, headers: dict[str, str]) -> Exception:
    error = RuntimeError(f"status {status}")
    error.status_code = status  # type: ignore[attr-defined]
    error.response = SimpleNamespace(headers=headers)  # type: ignore[attr-defined]
    return error


def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    assert retry_after(_error(429, {"retry-after": "3"})) == 3.0
    assert retry_after(_error(429, {"retry-after-ms": "250"})) == 0.25
    date = retry_after(_error(429, {"retry-after": formatdate(time.time() + 30, usegmt=True)}))
    assert date is not None and 27 < date <= 31
    assert retry_after(_error(429, {"retry-after": "soon"})) is None
    assert retry_after(_error(429, {})) is None
    assert retry_after(RuntimeError("no response")) is None


class _Refusing:
    model = ModelRef.parse(MODEL)

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.error = _error(status, headers)

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        raise self.error


REQUEST = JudgeRequest(system="s", prompt="p", schema_name="v", schema={}, max_tokens=10)


@pytest.mark.parametrize(("status", "held"), [(429, True), (529, True), (500, False)])
def test_a_429_or_529_pauses_the_model_for_its_retry_after(
    tmp_path: Path, status: int, held: bool, sleeps: list[float]
) -> None:
    limiter = Limiter(tmp_path / "limits.json")
    backend = LimitedBackend(_Refusing(status, {"retry-after": "0.5"}), limiter)
    # Before the refusal: the pause runs to its arrival + 0.5 s, however late this thread
    # gets back to the acquire on a loaded machine.
    started = time.monotonic()
    with pytest.raises(RuntimeError):
        backend.complete(REQUEST)
    limiter.acquire(MODEL, 1)
    assert bool(sleeps) is held
    if held:
        assert time.monotonic() - started >= 0.4


def test_bad_ceiling_names_the_file_and_model(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(
        f'[models."{MODEL}"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\nrpm = -3\n'
    )
    with pytest.raises(BackendError, match=rf"prices.toml: \[models.\"{MODEL}\"\] rpm = -3"):
        load_ceilings(prices)
    prices.write_text(
        f'[models."{MODEL}"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\ntpm = 900\n'
    )
    assert load_ceilings(prices)[MODEL] == Ceiling(tpm=900)
