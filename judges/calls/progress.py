"""The record phase's progress line: judgements (cassettes) and calls done of their totals,
calls per second, spend against the cap, time left and errors. Redrawn in place on a
terminal; one line every few seconds otherwise. It counts calls as the plan line before it
does ("18 calls to make"), and judgements apart: a noise run makes several calls in one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

TTY_EVERY_S = 0.5
LOG_EVERY_S = 5.0


@dataclass
class Progress:
    total: int  # judgements
    write: Callable[[str, bool], None]  # (text, final); redraws in place when a TTY
    spent: Callable[[], float]
    cap_usd: float | None = None
    tty: bool = False
    calls: int | None = None  # calls planned; None: one per judgement
    done: int = 0
    calls_done: int = 0
    errors: int = 0
    started: float = field(default_factory=time.monotonic)
    _last: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def finished(self, failed: bool, calls: int = 1) -> None:
        """One judgement of `calls` calls finished (`failed`: a row is an error of any kind)."""
        with self._lock:
            self.done += 1
            self.calls_done += calls
            self.errors += failed

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        total_calls = self.total if self.calls is None else self.calls
        rate = self.calls_done / elapsed
        left = (total_calls - self.calls_done) / rate if rate > 0 else float("nan")
        eta = "?" if left != left else f"{left:.0f}s"
        spent = self.spent()
        cost = f"${spent:.4f}" + ("" if self.cap_usd is None else f" of ${self.cap_usd:.4f} cap")
        return (
            f"judges record: {self.done}/{self.total} judgements, {self.calls_done}/{total_calls} "
            f"calls, {rate:.1f} calls/s, {cost}, ETA {eta}, {self.errors} error(s)"
        )

    def tick(self, final: bool = False) -> None:
        """Show the line if it is due (always when `final`)."""
        now = time.monotonic()
        if final or now - self._last >= (TTY_EVERY_S if self.tty else LOG_EVERY_S):
            self._last = now
            self.write(self.line(), final)
