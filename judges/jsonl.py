"""Reading hand-written JSONL files with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_lines(
    path: Path, error: type[ValueError] = ValueError, hint: str = ""
) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; bad JSON raises `error`."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as problem:
            raise error(
                f"{path}:{number}: not JSON ({problem.msg} at column {problem.colno}){hint}"
            ) from None
