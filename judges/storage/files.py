"""Files on disk: writes that never leave a half-written file (a temporary file, then a
rename), the clean-up of temporaries a killed process left, an advisory folder lock, and
JSONL reading with errors that name the file and the line."""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# `.<name>.<pid>.<random>.tmp`: the writer's pid tells a live write from a killed one's.
_TEMPORARY = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")
# A temporary without a pid (written before pids were in the name) is stale after this.
_STALE_AFTER_S = 3600.0


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name}.{os.getpid()}."
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)  # mkstemp creates 0600; results are meant to be shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the `.*.tmp` files under `folder` whose writer is gone (e.g. SIGKILLed)."""
    removed = []
    for path in folder.rglob(".*.tmp") if folder.is_dir() else ():
        found = _TEMPORARY.match(path.name)
        try:
            stale = (
                not _alive(int(found.group(1)))
                if found
                else time.time() - path.stat().st_mtime > _STALE_AFTER_S
            )
            if stale:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:  # its writer renamed it meanwhile
            continue
    return removed


class FolderBusy(Exception):
    """Another process holds the folder's lock."""

    def __init__(self, lock_file: Path, holder: str) -> None:
        super().__init__(f"{lock_file} is held by pid {holder}")
        self.lock_file = lock_file
        self.holder = holder


class FolderLock:
    """An advisory lock (`flock`) on a folder, through a lock file holding the holder's pid.

    The kernel releases it when the holder exits, however it exits: no stale lock to clean.
    """

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / name
        self._handle: int | None = None

    def acquire(self) -> None:
        """Take the lock at once, or raise FolderBusy naming the holder's pid."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(handle, 32).decode("ascii", errors="replace").strip()
            os.close(handle)
            raise FolderBusy(self.path, holder or "unknown") from None
        os.ftruncate(handle, 0)
        os.write(handle, f"{os.getpid()}\n".encode())
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            os.close(self._handle)  # closing the descriptor releases the flock
            self._handle = None


def json_lines(
    path: Path, error: type[ValueError] = ValueError, hint: str = ""
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; bad JSON raises `error`."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as problem:
        bad_line = data.count(b"\n", 0, problem.start) + 1
        column = problem.start - data.rfind(b"\n", 0, problem.start)
        raise error(
            f"{path}:{bad_line}: not UTF-8 (byte 0x{data[problem.start]:02x} at column {column}); "
            "save the file as UTF-8"
        ) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as problem:
            raise error(
                f"{path}:{number}: not JSON ({problem.msg} at column {problem.colno}){hint}"
            ) from None
