"""Statistics computed once per run and shared by the tests and the reports that show them.

A session owns one `Memo` (never a module global, so two sessions in one process, as in
the plugin's own tests, never see each other's figures). The key is made of the inputs'
values, not of object identity: a test that replays rows and a report that reads the same
rows back from results.jsonl reach the same key, and the second gets the first's result.
Only pure functions of their inputs belong here, and their results are never mutated.
Under xdist each worker and the controller have their own session, hence their own memo.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["Memo", "once"]


class Memo:
    """Results by key, each computed at most once; counts what was computed and reused."""

    def __init__(self) -> None:
        self._results: dict[Hashable, Any] = {}
        self.computed = 0
        self.reused = 0

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The result stored under `key`, computing and storing it the first time."""
        if key in self._results:
            self.reused += 1
            return self._results[key]
        result = compute()
        self._results[key] = result
        self.computed += 1
        return result


def once(memo: Memo | None, key: Hashable, compute: Callable[[], T]) -> T:
    """`memo.get(key, compute)`, or just `compute()` when there is no memo (a bare call)."""
    return compute() if memo is None else memo.get(key, compute)
