"""The project a command runs in: the same ini settings pytest reads, without pytest.

`python -m judges ...` must see the judges and planted sets the tests see. pytest takes its
settings from the first of these it finds, from the current folder upwards, and so do the
commands: `pytest.ini` (`[pytest]`, even when empty), `pyproject.toml`
(`[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`), `setup.cfg` (`[tool:pytest]`). The
keys read are `judges_prompts`, `judges_planted_sets` and `pythonpath`.
"""

from __future__ import annotations

import configparser
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.core.spec import PROMPTS_ROOT, JudgeSpec, SpecError, load_catalog

PROMPTS_KEY = "judges_prompts"
PLANTED_SETS_KEY = "judges_planted_sets"
DEFAULT_PLANTED_SETS = "planted_sets"


class ProjectError(ValueError):
    """The project's settings file cannot be read; the message names it."""


@dataclass(frozen=True)
class Project:
    rootdir: Path
    inifile: Path | None
    prompts: Path | None  # None: the built-in judges
    planted_sets: Path
    pythonpath: tuple[Path, ...] = ()

    @property
    def reports(self) -> Path:
        return self.rootdir / "reports"

    def catalog(self) -> dict[str, JudgeSpec]:
        """The project's judges; its verdict modules import from its `pythonpath`."""
        for path in reversed(self.pythonpath):
            if str(path) not in sys.path:
                sys.path.insert(0, str(path))
        return load_catalog(self.prompts or PROMPTS_ROOT)


def _ini_section(path: Path, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error as error:
        raise ProjectError(f"{path}: not a valid ini file ({error.message})") from None
    return dict(parser[section]) if parser.has_section(section) else None


def _pyproject(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ProjectError(f"{path}: not valid TOML ({error})") from None
    return data.get("tool", {}).get("pytest", {}).get("ini_options")


def read_settings(folder: Path) -> tuple[Path, dict[str, Any]] | None:
    """The first pytest settings file in `folder` and its pytest section, as pytest picks it."""
    pytest_ini = folder / "pytest.ini"
    if pytest_ini.is_file():  # pytest.ini wins even without a [pytest] section
        return pytest_ini, _ini_section(pytest_ini, "pytest") or {}
    candidates = (
        ("pyproject.toml", _pyproject),
        ("tox.ini", lambda p: _ini_section(p, "pytest")),
        ("setup.cfg", lambda p: _ini_section(p, "tool:pytest")),
    )
    for name, read in candidates:
        path = folder / name
        if path.is_file():
            section = read(path)
            if section is not None:
                return path, section
    return None


def _paths(value: Any) -> list[str]:
    return value.split() if isinstance(value, str) else [str(v) for v in value or ()]


def find_project(start: Path) -> Project:
    """The project holding `start`: its settings file's folder, or `start` itself."""
    start = start.absolute()
    for folder in (start, *start.parents):
        found = read_settings(folder)
        if found is not None:
            inifile, section = found
            break
    else:
        inifile, section, folder = None, {}, start
    prompts = section.get(PROMPTS_KEY)
    if isinstance(prompts, list):
        raise SpecError(f"{inifile}: {PROMPTS_KEY} is one folder, not a list")
    planted = section.get(PLANTED_SETS_KEY) or DEFAULT_PLANTED_SETS
    return Project(
        rootdir=folder,
        inifile=inifile,
        prompts=folder / prompts if prompts else None,
        planted_sets=folder / planted,
        pythonpath=tuple(folder / p for p in _paths(section.get("pythonpath"))),
    )
