"""A wheel user reaches the docs: the wheel built from this tree carries them, and in a
fresh environment where it is the only `judges` (no clone, no PYTHONPATH), `python -m judges
docs configuration` prints the page."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from ._tools import ROOT, tool_python

# What a build reads from the tree: the rest (tests, cassettes, reports) is not shipped.
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "docs", "judges")


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def test_the_wheel_ships_the_docs_and_the_command_shows_them(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(ROOT / name, source / name)
    # pyproject.toml's build backend, installed once (the PEP 639 licence needs setuptools 77).
    builder = tool_python("wheel-builder", "setuptools>=77")
    built = subprocess.run(
        [str(builder), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "--wheel-dir", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=600, env=_clean_env(),
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("pytest_judges-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    pages = sorted(path.name for path in (ROOT / "docs").glob("*.md"))
    assert {f"judges/docs/{page}" for page in pages} <= shipped

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
         "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=600, env=_clean_env(),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"  # no clone around: only the wheel's copy can answer
    elsewhere.mkdir()

    def judges(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(python), *args], cwd=elsewhere, capture_output=True,
                              text=True, timeout=120, env=_clean_env())  # fmt: skip

    where = judges("-c", "import judges; print(judges.__file__)")
    assert where.stdout.strip().startswith(str(venv)), where.stdout + where.stderr
    shown = judges("-m", "judges", "docs", "configuration")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    listed = judges("-m", "judges", "docs")
    assert listed.returncode == 0 and "your-own-judge" in listed.stdout
    assert str(venv) in listed.stdout  # the pages it found are the installed ones
