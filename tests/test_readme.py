"""The README's commands are the ones that run: its install line for the embedded judge is
the one `.ci/run` uses (a green CI must not hide a newcomer's failing install step)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from judges.calls.local_server import PORTABLE_BUILD

ROOT = Path(__file__).resolve().parents[1]


def _local_install(text: str) -> list[str]:
    """The words of the one command line that installs the `local` extra, comment dropped."""
    (line,) = [line for line in text.splitlines() if "pip install" in line and "[local]" in line]
    return [word for word in shlex.split(line, comments=True) if word != "--quiet"]


def test_the_readme_installs_the_embedded_judge_exactly_as_ci_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")

    assert _local_install(readme) == _local_install(ci)
    assert _local_install(readme)[0] == shlex.split(PORTABLE_BUILD)[0]  # the portable build
    assert re.search(r'^CMAKE_ARGS="-DGGML_NATIVE=OFF" python -m pip install', readme, re.M)


def _lowest_sdk(text: str) -> list[str]:
    """The words of the command line that runs the SDK tests at the lowest resolution."""
    (line,) = [ln for ln in text.splitlines() if "-m sdk" in ln and "pip install" in ln]
    return [word for word in shlex.split(line, comments=True) if word != "--quiet"]


def test_ci_runs_the_sdk_tests_at_the_lowest_resolution_the_readme_states() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")

    assert _lowest_sdk(readme) == _lowest_sdk(ci)
    words = _lowest_sdk(ci)
    assert words[words.index("--resolution") + 1] == "lowest-direct"
    assert words[-2:] == ["-m", "sdk"]
    # The README states each range a team installs beside, as pyproject.toml declares it.
    for name in ("openai", "anthropic", "pytest", "vcrpy"):
        (declared,) = re.findall(rf'"({name}[<>=][^"]*)"', pyproject)
        assert f"`{declared}`" in readme, declared


def test_the_readme_says_the_bundled_judges_are_at_chance_as_the_committed_index_shows() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = "\n".join(readme.splitlines()[:12])
    assert "SmolLM2-135M" in first_screen and "at chance on purpose" in first_screen
    assert "## What the main job says" in readme and "(accepted)** means" in readme
    index = (ROOT / "reports" / "index.html").read_text(encoding="utf-8")
    found = re.search(r"(\d+) rows: (\d+) NOT FIT \(accepted\)", index)
    assert found is not None
    rows, accepted = int(found.group(1)), int(found.group(2))
    assert accepted > rows / 2  # "most rows reading NOT FIT (accepted)"
