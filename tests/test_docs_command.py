"""`python -m judges docs [NAME]` shows the documentation where the harness is installed, and
every message that points to a page names that command, never a path of the repository (a
wheel user has no docs/ folder). The wheel itself: tests/integration/test_wheel_docs.py."""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

from judges.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "judges"
PAGES = sorted(path.stem for path in (ROOT / "docs").glob("*.md"))
# What a user reads: the package's string constants (docstrings and comments are for its
# developers, who have the repository) and the files `init` writes.
SKELETON = sorted((PACKAGE / "cli" / "skeleton").iterdir())


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["docs", *argv])
    return code, out.getvalue(), err.getvalue()


def test_without_a_name_it_lists_every_page() -> None:
    code, out, _ = _run()
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert listed[: len(PAGES)] == PAGES
    assert "python -m judges docs NAME prints one page" in out


@pytest.mark.parametrize("name", ["configuration", "your-own-judge.md"])
def test_a_name_prints_its_page(name: str) -> None:
    code, out, _ = _run(name)
    assert code == 0
    page = ROOT / "docs" / (name.removesuffix(".md") + ".md")
    assert out == page.read_text(encoding="utf-8")


def test_an_unknown_page_is_named_with_the_pages_there_are() -> None:
    code, out, err = _run("confguration")
    assert code == 2 and out == ""
    assert "no page 'confguration'; pages: baselines, " in err and "configuration" in err


def _user_strings() -> list[tuple[Path, str]]:
    """Every string constant of the package that is not a docstring, and every skeleton
    file's text."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if text and id(node) not in docstrings:
                found.append((path, node.value))
    found += [(path, path.read_text(encoding="utf-8")) for path in SKELETON]
    return found


def test_no_message_points_to_a_path_of_the_repository() -> None:
    pointing = [
        f"{path.relative_to(ROOT)}: {text[:80]!r}"
        for path, text in _user_strings()
        if re.search(r"docs/[\w-]+\.md", text) or "docs/your" in text
    ]
    assert pointing == []


def test_every_page_a_message_names_is_a_page() -> None:
    named = {
        (path.relative_to(ROOT).as_posix(), name)
        for path, text in _user_strings()
        for name in re.findall(r"python -m judges docs ([\w-]+)", text)
    }
    assert {name for _, name in named} >= {"your-own-judge", "configuration", "corpus"}
    assert sorted(n for n in named if n[1] not in {*PAGES, "NAME"}) == []
