"""The `pytest11` entry point costs nothing in a project that does not use the harness.

pytest imports every installed plugin's entry point in every run of every project in the
environment. The entry point (`judges.pytest_plugin.plugin`) declares the options and loads
the harness (`judges.pytest_plugin.harness`: the SDKs, scipy, the planted sets) only for a
judges run: a planted-set folder at the root, a `judges_*` ini key, or a judges option.
Each case runs pytest in a fresh process and lists the `judges` modules it left imported.
`benchmarks/bench_plugin_overhead.py` times the same (tests/test_benchmarks.py runs it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judges.core.runner import DEFAULT_TIMEOUT_S
from judges.pytest_plugin import options

ROOT = Path(__file__).resolve().parent.parent
LIGHT = {
    "judges",
    "judges.pytest_plugin",
    "judges.pytest_plugin.plugin",
    "judges.pytest_plugin.options",
}
HARNESS = "judges.pytest_plugin.harness"
LIST_MODULES = """
import sys, pytest
code = pytest.main(sys.argv[1:])
print("JUDGES-MODULES", *sorted(m for m in sys.modules if m.split(".")[0] == "judges"))
sys.exit(code)
"""


def judges_modules(project: Path, *args: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", LIST_MODULES, "-q", "-p", "no:cacheprovider", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    listed = next(line for line in done.stdout.splitlines() if line.startswith("JUDGES-MODULES"))
    return set(listed.split()[1:])


@pytest.fixture
def unrelated(tmp_path: Path) -> Path:
    (tmp_path / "test_unrelated.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    return tmp_path


def test_an_unrelated_project_imports_only_the_entry_point_and_its_options(
    unrelated: Path,
) -> None:
    assert judges_modules(unrelated) == LIGHT


def test_blocking_the_plugin_imports_nothing_of_judges(unrelated: Path) -> None:
    (unrelated / "planted_sets").mkdir()
    assert judges_modules(unrelated, "-p", "no:judges") == set()


def test_a_planted_set_folder_loads_the_harness(unrelated: Path) -> None:
    (unrelated / "planted_sets").mkdir()
    assert HARNESS in judges_modules(unrelated)


def test_an_ini_key_naming_the_planted_sets_loads_the_harness(unrelated: Path) -> None:
    (unrelated / "pytest.ini").write_text("[pytest]\njudges_planted_sets = sets\n")
    assert HARNESS in judges_modules(unrelated)


def test_a_judges_option_loads_the_harness_in_any_project(unrelated: Path) -> None:
    assert HARNESS in judges_modules(unrelated, options.OPTION_TIMEOUT, "30")


def test_the_timeout_default_is_the_runners() -> None:
    # The options module states it itself so that it imports nothing of the harness.
    assert options.DEFAULT_TIMEOUT_S == DEFAULT_TIMEOUT_S
