"""The record phase's progress line: done/total, calls per second, spend against the cap,
time left and errors. Redrawn in place on a terminal; one line every few seconds otherwise.
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
    total: int
    write: Callable[[str, bool], None]  # (text, final); redraws in place when a TTY
    spent: Callable[[], float]
    cap_usd: float | None = None
    tty: bool = False
    done: int = 0
    errors: int = 0
    started: float = field(default_factory=time.monotonic)
    _last: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def finished(self, failed: bool) -> None:
        """One judgement finished (`failed`: its row is an error of any kind)."""
        with self._lock:
            self.done += 1
            self.errors += failed

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        eta = "?" if left != left else f"{left:.0f}s"
        spent = self.spent()
        cost = f"${spent:.4f}" + ("" if self.cap_usd is None else f" of ${self.cap_usd:.4f} cap")
        return (
            f"judges record: {self.done}/{self.total} judgements, {rate:.1f}/s, {cost}, "
            f"ETA {eta}, {self.errors} error(s)"
        )

    def tick(self, final: bool = False) -> None:
        """Show the line if it is due (always when `final`)."""
        now = time.monotonic()
        if final or now - self._last >= (TTY_EVERY_S if self.tty else LOG_EVERY_S):
            self._last = now
            self.write(self.line(), final)
