"""Files on disk: writes that never leave a half-written file (a temporary file, then a
rename), and JSONL reading with errors that name the file and the line."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


def json_lines(
    path: Path, error: type[ValueError] = ValueError, hint: str = ""
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; bad JSON raises `error`."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as problem:
        line = data.count(b"\n", 0, problem.start) + 1
        column = problem.start - data.rfind(b"\n", 0, problem.start)
        raise error(
            f"{path}:{line}: not UTF-8 (byte 0x{data[problem.start]:02x} at column {column}); "
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
