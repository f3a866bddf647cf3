"""Files on disk: writes that never leave a half-written file (a temporary file, then a
rename), the clean-up of temporaries a killed process left, an advisory folder lock, and
JSON and JSONL reading with errors that name the file, the line and, for a key given twice
in one object, the key."""

from __future__ import annotations

import fcntl
import json
import json.scanner
import os
import re
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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

    def __init__(self, lock_file: Path, holder: str, purpose: str = "") -> None:
        super().__init__(f"{lock_file} is held by pid {holder}")
        self.lock_file = lock_file
        self.holder = holder
        self.purpose = purpose  # what the holder said it holds the lock for, if anything

    @property
    def who(self) -> str:
        """The holder in words: `pid 123 (python -m judges baseline --accept)`."""
        return f"pid {self.holder}" + (f" ({self.purpose})" if self.purpose else "")


class FolderLock:
    """An advisory lock (`flock`) on a folder, through a lock file holding the holder's pid.

    The kernel releases it when the holder exits, however it exits: no stale lock to clean.
    """

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / name
        self._handle: int | None = None

    def acquire(self, purpose: str = "", shared: bool = False) -> None:
        """Take the lock at once, or raise FolderBusy naming the holder's pid and purpose
        (one line of the lock file: `<pid> <purpose>`). `shared`: readers that exclude
        every exclusive holder but not each other."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            held = os.read(handle, 256).decode("utf-8", errors="replace").strip()
            os.close(handle)
            holder, _, said = held.partition(" ")
            raise FolderBusy(self.path, holder or "unknown", said.strip()) from None
        os.ftruncate(handle, 0)
        os.write(handle, f"{os.getpid()} {purpose}".rstrip().encode() + b"\n")
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            os.close(self._handle)  # closing the descriptor releases the flock
            self._handle = None


class DuplicateKey(ValueError):
    """One JSON object names a key twice (the json module would silently keep the last)."""

    def __init__(self, key: str, line: int | None = None) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key
        self.line = line  # of the object holding it, within the parsed text; None: not known


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKey(key)
        found[key] = value
    return found


def _line_of_duplicate(text: str) -> int:
    """The line of the object holding the first key given twice: a second, pure-Python parse
    that knows where each object starts, run only once a duplicate was found. The stdlib's
    scanner and object parser are not in its type stubs, hence getattr and setattr."""
    decoder = json.JSONDecoder(object_pairs_hook=_refuse_duplicates)
    parse_pairs = getattr(json.decoder, "JSONObject")  # noqa: B009

    def parse_object(state: tuple[str, int], *args: Any) -> Any:
        source, end = state
        try:
            return parse_pairs(state, *args)
        except DuplicateKey as duplicate:
            if duplicate.line is None:  # the innermost object is the one that holds it
                duplicate.line = source.count("\n", 0, end) + 1
            raise

    setattr(decoder, "parse_object", parse_object)  # noqa: B010
    setattr(decoder, "scan_once", getattr(json.scanner, "py_make_scanner")(decoder))  # noqa: B009, B010
    try:
        decoder.decode(text)
    except DuplicateKey as duplicate:
        return duplicate.line or 1
    return 1


def strict_json_loads(text: str) -> Any:
    """`json.loads`, refusing an object that names a key twice: raises `DuplicateKey` with the
    key and the line (within `text`) of the object holding it."""
    try:
        return json.loads(text, object_pairs_hook=_refuse_duplicates)
    except DuplicateKey as duplicate:
        raise DuplicateKey(duplicate.key, _line_of_duplicate(text)) from None


def duplicate_key_message(path: Path, duplicate: DuplicateKey, first_line: int = 1) -> str:
    """`<file>:<line>: the key 'k' appears twice in one object ...`: what to fix, and where."""
    line = first_line + (duplicate.line or 1) - 1
    return (
        f"{path}:{line}: {duplicate}; JSON would keep only the last silently, so keep the one "
        "you mean and delete the other"
    )


def read_json(path: Path, error: type[ValueError] = ValueError) -> Any:
    """A whole JSON file; unreadable, not UTF-8, not JSON or a key given twice raises `error`
    naming the file (and the line where JSON says)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"{path}: not a readable JSON file: {problem}") from None
    try:
        return strict_json_loads(text)
    except DuplicateKey as duplicate:
        raise error(duplicate_key_message(path, duplicate)) from None
    except json.JSONDecodeError as problem:
        raise error(
            f"{path}:{problem.lineno}: not a readable JSON file ({problem.msg} at column "
            f"{problem.colno})"
        ) from None


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSONL text, split at "\\n" alone (a "\\r" before it dropped).

    Not `str.splitlines`: it also splits at U+2028, U+2029, U+0085 and other characters
    that `json.dumps(..., ensure_ascii=False)` writes raw inside a string, so a name holding
    one would make its row unreadable. A final "\\n" ends the last line, not a new one."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def json_lines(
    path: Path, error: type[ValueError] = ValueError, hint: str = ""
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; bad JSON, or a key given twice in
    one object, raises `error` naming the file and the line."""
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
    for number, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            yield number, strict_json_loads(line)
        except DuplicateKey as duplicate:
            raise error(duplicate_key_message(path, duplicate, number)) from None
        except json.JSONDecodeError as problem:
            raise error(
                f"{path}:{number}: not JSON ({problem.msg} at column {problem.colno}){hint}"
            ) from None


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends: a write of several files (a session's
    rows) finishes, and the interrupt is raised after it. Only the main thread, which
    receives Python's signals, can hold them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
