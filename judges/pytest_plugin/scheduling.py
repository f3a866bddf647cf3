"""Running under xdist: what the controller hands each worker, and how tests are scheduled.

Every worker gets the one embedded server's URL and the session id (so all share one cost
ledger). Set-level tests (detection gates, verdict tables, noise floor, test-retest, panel)
replay every item of their set, and a process keeps what it replayed in memory: with `-n 0`
each cassette is read once. xdist's default `--dist load` scatters a version's item tests
and set tests over the workers, so each worker reads the set again and `-n auto` does more
work than `-n 0`. Here the tests of one (judge, prompt version) form one work unit, the
largest sent first (xdist's `loadscope` scheduling with its own grouping); other tests stay
one unit each, as under `load`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pytest
from xdist.scheduler import LoadScopeScheduling

if TYPE_CHECKING:
    from judges.pytest_plugin.session import JudgesSession


def case_group(nodeid: str, prefixes: Iterable[str]) -> str:
    """The `<judge>-<version>` a test's parameter id starts with, or the node id itself."""
    start = nodeid.find("[")
    if start < 0 or not nodeid.endswith("]"):
        return nodeid
    params = nodeid[start + 1 : -1]
    for prefix in prefixes:  # longest first: "x-0.3.1" before "x-0.3"
        if params == prefix or params.startswith(f"{prefix}-"):
            return prefix
    return nodeid


class CaseGroupScheduling(LoadScopeScheduling):
    """`loadscope` with one scope per (judge, prompt version) of the planted sets."""

    def __init__(self, config: pytest.Config, log: Any, groups: Iterable[str]) -> None:
        super().__init__(config, log)
        self.prefixes = sorted(set(groups), key=len, reverse=True)

    def _split_scope(self, nodeid: str) -> str:
        return case_group(nodeid, self.prefixes)


class XdistHooks:
    """The controller's xdist hooks: worker input and the scheduler."""

    def __init__(self, session: JudgesSession) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["judges_base_url"] = self.session.settings.base_url
        node.workerinput["judges_session_id"] = self.session.settings.session_id
        fingerprint = self.session.settings.server_fingerprint
        node.workerinput["judges_server_fingerprint"] = json.dumps(fingerprint)

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """Under the default `--dist load`, one work unit per (judge, prompt version)."""
        if config.getvalue("dist") != "load" or not self.session.catalogue.planted_sets:
            return None
        groups = [
            f"{judge}-{version}"
            for judge in self.session.catalogue.planted_sets
            for version in self.session.catalogue.catalog[judge].versions
        ]
        return CaseGroupScheduling(config, log, groups)
