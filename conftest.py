"""Root of the suite. The `judges` plugin (entry point `pytest11`) does the heavy lifting.

Hypothesis profiles: `ci` is loaded automatically when CI is set (derandomised, no
deadline, no example database); `dev` is the default for local runs.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if settings.get_current_profile_name() == "ci" else "dev")

# The suite's longest tests, longest first (`--durations`, docs/performance.md). Under
# `-n auto` on two cores the run ends when its last test does: a 60 s test handed out last
# keeps one core busy for a minute after the other has finished, so these are handed out
# first. xdist hands out work in collection order (larger case groups of regression_tests
# first), so putting them first in the collection is enough; the order within a module stays.
SLOW_FIRST = (
    "tests/test_false_alarms.py",
    "tests/integration/test_adversarial_geval.py",
    "tests/integration/test_record_and_replay.py",
    "tests/integration/test_adversarial_pairwise.py",
    "tests/integration/test_batch_record.py",
    "tests/integration/test_record_concurrency.py",
    "tests/integration/test_adversarial_fitness.py",
    "tests/integration/test_adversarial_relevance.py",
    "tests/integration/test_report_check.py",
    "tests/integration/test_cost_cap.py",
    "tests/integration/test_hostile.py",
    "tests/integration/test_offline_replay.py",
    "tests/integration/test_live_run_edges.py",
    "tests/test_report.py",
    "tests/test_baseline.py",
    "tests/test_benchmarks.py",
    "tests/test_adoption.py",
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return SLOW_FIRST.index(path) if path in SLOW_FIRST else len(SLOW_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: every other test keeps its place
