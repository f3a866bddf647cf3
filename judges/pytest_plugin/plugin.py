"""The pytest entry point (`pytest11`): the harness's options, and the switch that loads it.

pytest imports this module in every run of every project in the environment, judges or
not, so it imports pytest and the option declarations alone. The harness
(`judges.pytest_plugin.harness`, and with it the SDKs, scipy and the planted sets) loads in
`pytest_configure`, and only for a run that uses it: a project with a planted-set folder or
a `judges_*` ini key, or a run given a judges option.
`benchmarks/bench_plugin_overhead.py` measures what is left.
"""

from __future__ import annotations

import pytest

from judges.pytest_plugin.options import add_options, uses_harness

# The plugin name the harness registers under: `-p no:judges` blocks this entry point, and
# with it the harness.
HARNESS = "judges-harness"

# The generic suite's snapshot test needs pytest's assert rewriting for syrupy's diff. A
# plugin's own files are rewritten only when pip lists them (not in an editable install), so
# name the module; it is imported later, by a project's test module.
pytest.register_assert_rewrite("judges.pytest_plugin.suite")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    # Runs in every process, xdist workers included: each decides the same way.
    config.addinivalue_line("markers", "judges: a test that judges through recorded calls")
    if not uses_harness(config):
        return
    from judges.pytest_plugin import harness

    # Registered now, the harness's own pytest_configure runs at once (a historic hook).
    config.pluginmanager.register(harness, HARNESS)
