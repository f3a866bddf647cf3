"""Accepted failures are reported by their message, without a traceback pytest would
throw away (judges.pytest_plugin.accepted_failures)."""

from __future__ import annotations

import pytest

MODULE = """
import pytest

def check(value):
    __tracebackhide__ = True
    if value != 1:
        raise AssertionError(f"GE-09 (coherence): expected coherence <= 2, got {value}")

@pytest.mark.xfail(strict=True, raises=AssertionError, reason="accepted miss")
def test_accepted_miss():
    check(3)

@pytest.mark.xfail(strict=True, raises=AssertionError, reason="accepted miss")
def test_accepted_but_broken():
    raise KeyError("cassette missing")

@pytest.mark.xfail(strict=True, raises=AssertionError, reason="accepted miss")
def test_accepted_now_met():
    check(1)

@pytest.mark.xfail(reason="not strict: not the harness's mark")
def test_other_xfail():
    check(3)

def test_plain_failure():
    check(3)
"""

CONFTEST = """
from judges.pytest_plugin.accepted_failures import report_messages_only

def pytest_collection_modifyitems(config, items):
    report_messages_only(config, items)
"""


def _call_reports(pytester: pytest.Pytester, *args: str) -> dict[str, pytest.TestReport]:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_gate=MODULE)
    recorded = pytester.inline_run("-p", "no:cacheprovider", "-p", "no:benchmark", *args)
    reports = recorded.getreports("pytest_runtest_logreport")
    return {r.nodeid.split("::")[-1]: r for r in reports if r.when == "call"}


def test_an_accepted_miss_is_reported_by_its_message_alone(pytester: pytest.Pytester) -> None:
    reports = _call_reports(pytester)
    accepted = reports["test_accepted_miss"]
    assert accepted.skipped and accepted.wasxfail == "accepted miss"
    assert str(accepted.longrepr) == "GE-09 (coherence): expected coherence <= 2, got 3"
    # Everything else keeps what pytest reports.
    broken = reports["test_accepted_but_broken"]
    assert broken.failed and "KeyError" in str(broken.longrepr)
    assert "def test_accepted_but_broken" in str(broken.longrepr)
    assert reports["test_accepted_now_met"].failed  # strict: an accepted miss now met
    assert "def test_other_xfail" in str(reports["test_other_xfail"].longrepr)
    assert "def test_plain_failure" in str(reports["test_plain_failure"].longrepr)


def test_runxfail_keeps_the_full_traceback(pytester: pytest.Pytester) -> None:
    accepted = _call_reports(pytester, "--runxfail")["test_accepted_miss"]
    assert accepted.failed
    assert "def test_accepted_miss" in str(accepted.longrepr)
