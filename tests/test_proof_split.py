"""The self-test in two (tests/conftest.py): tests marked `proof` are left out of a plain run,
run with `-m proof` or when named, and the plain run says how to run them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# pytest-benchmark warns in an inner run of an xdist worker; the split needs none of it.
QUIET = ["-p", "no:cacheprovider", "-p", "no:benchmark"]
CONFTEST = """
from tests.conftest import (
    pytest_collection_modifyitems, pytest_configure, pytest_terminal_summary,
)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_slow="import pytest\npytestmark = pytest.mark.proof\ndef test_slow(): pass\n",
        test_fast="def test_fast(): pass\n",
    )
    return pytester


def test_a_plain_run_leaves_the_proofs_out_and_says_how_to_run_them(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_inprocess(*QUIET, "--strict-markers")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["1 proof tests * left out: `python -m pytest -n auto -m proof`*"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_the_proofs_note_is_the_last_line_before_the_count(
    project: pytest.Pytester, workers: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # README: "It says so in its last line before the final count", whatever other plugins
    # (the judges section, syrupy's summary) write in the terminal summary, with or without
    # the xdist workers of the README's command.
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "It says so in its last line before the final count." in " ".join(readme.split())
    project.makepyfile(
        other_summary="def pytest_terminal_summary(terminalreporter):\n"
        "    terminalreporter.write_line('another summary line')\n"
    )
    project.syspathinsert()
    if workers:  # the workers import the summary plugin from the project folder, and the
        # conftest's `tests.conftest` from this repository, which is not installed
        root = str(Path(__file__).resolve().parents[1])
        path = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
        result = project.runpytest_subprocess(*QUIET, "-p", "other_summary", *workers)
    else:
        result = project.runpytest_inprocess(*QUIET, "-p", "other_summary")
    lines = [line for line in result.stdout.lines if line.strip()]
    assert "proof tests" in lines[-2] and "left out" in lines[-2], lines[-3:]
    assert "passed" in lines[-1]


@pytest.mark.parametrize(
    ("args", "passed", "deselected"),
    [(["-m", "proof"], 1, 1), (["-m", "not proof"], 1, 1), (["test_slow.py"], 1, 0)],
    ids=["selected", "excluded", "named"],
)
def test_a_marker_expression_or_a_named_file_chooses(
    project: pytest.Pytester, args: list[str], passed: int, deselected: int
) -> None:
    result = project.runpytest_inprocess(*QUIET, *args)
    result.assert_outcomes(passed=passed, deselected=deselected)
    assert "left out" not in result.stdout.str()
