"""Accepted failures (the harness's strict xfails) are reported by their message alone.

pytest formats a failing test's traceback before it learns that the failure was expected,
and for each one it parses the test module's source again to find the failing statement.
A gate holds about a thousand accepted misses (LLMBar's released judges alone, hundreds
each), and an xfail shows only its reason, so those tracebacks were built and thrown
away: about a tenth of the offline gate's time. The message `assert_expected` raises
already says everything (item, expectation, verdict, rationale).

Only an `AssertionError` of an item that carries a strict `xfail(raises=AssertionError)`
is shortened; any other error (a missing cassette) keeps its full traceback, and so does
every failure under `--runxfail`, where the marks do not apply.
"""

from __future__ import annotations

import types
from typing import Any

import pytest


def _accepts_assertion_failures(item: pytest.Item) -> bool:
    mark = item.get_closest_marker("xfail")
    return (
        mark is not None
        and mark.kwargs.get("strict") is True
        and mark.kwargs.get("raises") is AssertionError
    )


def _message_only(item: pytest.Function, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
    if excinfo.errisinstance(AssertionError):
        return str(excinfo.value) or "AssertionError"
    return pytest.Function.repr_failure(item, excinfo)


def report_messages_only(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every accepted-failure test a failure report of its message alone."""
    if config.option.runxfail:
        return
    for item in items:
        if isinstance(item, pytest.Function) and _accepts_assertion_failures(item):
            # Per item, not per class: only these items fail this way by design (mypy
            # refuses any assignment to a method).
            item.repr_failure = types.MethodType(_message_only, item)  # type: ignore[method-assign]
