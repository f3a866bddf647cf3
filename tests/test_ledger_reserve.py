"""The ledger's reservations: the cap holds with calls in flight, across threads and workers."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from judges.calls.ledger import CostCapReached, Ledger

MODEL = "openai:gpt-4o-2024-11-20"


def test_a_reservation_that_could_pass_the_cap_is_refused(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=10.0)
    first = ledger.reserve(MODEL, 4.0)
    ledger.reserve(MODEL, 4.0)
    with pytest.raises(CostCapReached, match=r"\$8\.0000 held by calls in flight"):
        ledger.reserve(MODEL, 4.0)  # 4 + 4 + 4 > 10, though nothing is spent yet
    # Another worker's ledger on the same file sees the same holds.
    with pytest.raises(CostCapReached):
        Ledger(tmp_path / "ledger.jsonl", cap_usd=10.0).reserve(MODEL, 4.0)
    ledger.charge(MODEL, 100, 10, 1.0, hold=first)  # settled: 1 spent, 4 still held
    assert ledger.spent_usd() == 1.0 and ledger.held_usd() == 4.0
    ledger.reserve(MODEL, 4.0)  # 1 + 4 + 4 <= 10
    assert ledger.totals()[MODEL].calls == 1


def test_a_failed_call_releases_its_reservation(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl", cap_usd=5.0)
    hold = ledger.reserve(MODEL, 5.0)
    ledger.release(hold)
    assert ledger.held_usd() == 0.0
    ledger.reserve(MODEL, 5.0)


def test_without_a_cap_nothing_is_held(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    assert ledger.reserve(MODEL, 1e9) == ""
    ledger.charge(MODEL, 1, 1, 2.5, hold="")
    assert ledger.spent_usd() == 2.5


def test_the_cap_holds_with_many_threads_and_two_ledgers(tmp_path: Path) -> None:
    path, cap, worst, actual = tmp_path / "ledger.jsonl", 20.0, 3.0, 1.0
    ledgers = [Ledger(path, cap), Ledger(path, cap)]  # two xdist workers
    peak = [0.0]
    lock = threading.Lock()

    def call(n: int) -> bool:
        ledger = ledgers[n % 2]
        try:
            hold = ledger.reserve(MODEL, worst)
        except CostCapReached:
            return False
        with lock:  # an independent full read of the file, while this call is in flight
            peak[0] = max(peak[0], ledger.spent_usd() + ledger.held_usd())
        ledger.charge(MODEL, 10, 10, actual, hold=hold)
        return True

    with ThreadPoolExecutor(16) as pool:
        made = sum(pool.map(call, range(200)))
    spent = ledgers[0].spent_usd()
    assert spent == actual * made
    assert peak[0] <= cap
    assert spent <= cap
    # No more calls than fit one after the other (calls in flight may refuse a few more).
    assert 1 <= made <= int((cap - worst) // actual) + 1
    assert ledgers[1].held_usd() == 0.0
