"""A command's answer kept with a fingerprint of everything it read and wrote, so that it
answers again in about a second when none of that changed.

`python -m judges report --check` and `corpus report` rebuild every report to compare it
with the disk: tens of seconds. The fingerprint covers every file under the folders the
command reads and writes (its inputs: results, planted sets, prompts, cassettes, corpora;
its outputs: the report files), the harness's code and the project's modules it imported,
the installed packages' versions and the command's options. A file counts by its state
(size, modification and change times, inode), as the corpus store's cache does: any write
or replacement changes one, and reading every byte would cost seconds per gigabyte. The
answer lives in the user's cache folder, never in the project: a missing or unreadable one
means a full build, so it can only save time, never change an answer.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import judges
from judges.storage.cache import cache_dir
from judges.storage.files import atomic_write_text

HARNESS = Path(judges.__file__).resolve().parent
FOLDER = "unchanged"


def _states(root: Path) -> Iterable[str]:
    """One line per file under `root`: its path and state. Dot files (a report's git-ignored
    `.run.json`, temporaries) and bytecode are the run's own, not what it reads."""
    if root.is_file():
        paths: Iterable[Path] = [root]
    elif root.is_dir():
        paths = sorted(root.rglob("*"))
    else:
        yield f"{root}\0absent"
        return
    for path in paths:
        parts = path.relative_to(root).parts if path != root else ()
        if any(part.startswith(".") or part == "__pycache__" for part in parts):
            continue
        try:
            stat = path.stat()
        except OSError:
            continue
        if path.is_file():
            state = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
            yield f"{path}\0{' '.join(map(str, state))}"


def _code(project: Path) -> list[Path]:
    """The harness's own files and every module of the project the command imported (a
    team's verdict module or judge function)."""
    modules = {
        Path(file).resolve()
        for module in list(sys.modules.values())
        if isinstance(file := getattr(module, "__file__", None), str)
    }
    own = sorted(
        m
        for m in modules
        if m.is_relative_to(project)
        and not m.is_relative_to(HARNESS)  # walked whole, whichever of it is imported
        and "site-packages" not in m.parts
    )
    return [HARNESS, *own]


def _packages() -> list[str]:
    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions())
    return [*installed, f"python=={platform.python_version()}"]


def fingerprint(roots: Sequence[Path], project: Path, options: Sequence[str]) -> str:
    """The digest of the command's options and of the state of every file it reads or
    writes, its code and its packages."""
    digest = hashlib.sha256()
    for line in [*options, *_packages()]:
        digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
    for root in [*roots, *_code(project)]:
        for line in _states(root.absolute()):
            digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class Answer:
    """What the command said when its inputs and outputs had this fingerprint."""

    fingerprint: str
    lines: tuple[str, ...]
    at: str

    def note(self, command: str) -> str:
        return (
            f"{command}: nothing changed since its run of {self.at} (every input, report "
            "file, the code and the packages are as they were), so its answer stands; "
            "nothing rebuilt"
        )


@dataclass(frozen=True)
class Remembered:
    """The last successful answer of one command on one project, by its options."""

    command: str
    key: str

    @classmethod
    def of(cls, command: str, project: Path, options: Sequence[str]) -> Remembered:
        where = "\0".join([command, str(project.resolve()), *options])
        return cls(command, hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest())

    @property
    def path(self) -> Path:
        return cache_dir() / FOLDER / f"{self.key[:32]}.json"

    def answer(self, current: str) -> Answer | None:
        """The remembered answer if the fingerprint is still `current`; None otherwise (or
        when there is none, or it cannot be read: then the command builds)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            answer = Answer(data["fingerprint"], tuple(data["lines"]), data["at"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return answer if answer.fingerprint == current else None

    def keep(self, current: str, lines: Sequence[str]) -> None:
        """Remember a successful answer; a cache that cannot be written is no failure."""
        at = datetime.now(UTC).isoformat(timespec="seconds")
        text = json.dumps({"fingerprint": current, "lines": list(lines), "at": at}, indent=1)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, text + "\n")
        except OSError:
            pass
