"""The README's commands are the ones that run: its install line for the embedded judge is
the one `.ci/run` uses (a green CI must not hide a newcomer's failing install step)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from judges.calls.local_server import PORTABLE_BUILD
from judges.cli.main import build_parser

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


# A synopsis's metavariable that argparse checks against its choices stands for one of them.
CHOICE_PLACEHOLDERS = {"FORMAT": "jsonl"}


def _judges_commands(text: str) -> list[tuple[int, str]]:
    """(line, command) of every `python -m judges ...` the text shows: an inline code span
    (also one broken across lines) or a line of a fenced block (with its continuations)."""
    found: list[tuple[int, str]] = []
    for match in re.finditer(r"`(python -m judges\s[^`]+)`", text):  # not the name alone
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, " ".join(match.group(1).split())))
    block, pending, start = False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            block = not block
            continue
        words = line.strip()
        if block and (pending or words.startswith("python -m judges ")):
            start = start if pending else number
            pending = f"{pending} {words}".strip()
            if pending.endswith("\\"):
                pending = pending[:-1].rstrip()
                continue
            found.append((start, pending))
            pending = ""
    return found


def _argv(command: str) -> list[str]:
    """The arguments of the command as its parser sees them: a comment, what follows `&&`
    and the optional parts of a synopsis (`[--version V]`) left out."""
    command = re.sub(r"\[[^\]]*\]", "", command.split(" && ")[0])
    words = shlex.split(command, comments=True)[3:]
    return [CHOICE_PLACEHOLDERS.get(word, word) for word in words]


DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", DOC_PAGES, ids=[page.name for page in DOC_PAGES])
def test_every_judges_command_the_docs_show_parses(page: Path) -> None:
    """Each `python -m judges` command as written is one the CLI takes (`leaderboard` with no
    judge exits 2): placeholders such as <judge> stand where a value goes."""
    failures = []
    for line, command in _judges_commands(page.read_text(encoding="utf-8")):
        error = io.StringIO()
        try:
            with contextlib.redirect_stderr(error), contextlib.redirect_stdout(io.StringIO()):
                build_parser().parse_args(_argv(command))
        except SystemExit as stopped:
            if stopped.code:
                said = (error.getvalue().strip().splitlines() or [""])[-1]
                failures.append(f"{page.name}:{line}: {command!r}: {said}")
    assert failures == []


def test_the_command_finder_sees_spans_blocks_and_continuations() -> None:
    text = (
        "Run `python -m judges leaderboard` or `python -m judges\nplan geval`.\n"
        "```bash\npython -m judges corpus import csv grades.csv \\\n  --name g  # note\n```\n"
    )
    found = _judges_commands(text)
    assert found == [
        (1, "python -m judges leaderboard"),
        (1, "python -m judges plan geval"),
        (4, "python -m judges corpus import csv grades.csv --name g  # note"),
    ]
    # The README's old `leaderboard`: "judge" required.
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        build_parser().parse_args(_argv(found[0][1]))


def _block_commands(text: str) -> list[list[str]]:
    """The words of each command line of the text's fenced blocks, comments dropped."""
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [
        shlex.split(line, comments=True)
        for block in blocks
        for line in block.splitlines()
        if line.startswith("python ")
    ]


def test_the_readme_opens_with_what_it_is_for_its_two_commands_and_the_demo_at_chance() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    opening, _ = readme.split("\n- ", 1)  # before the first list (the features)
    words = " ".join(opening.split())
    assert words.startswith("# judges Tests for an LLM judge")
    assert "at chance on purpose" in words and "**NOT FIT (accepted)**" in words
    section = readme.split("## The commands", 1)[1].split("\n## ", 1)[0]
    # The opening's two commands are the first two the commands section (and CI) run.
    assert _block_commands(opening) == _block_commands(section)[:2]
    assert "## What it checks" in opening
