"""Verdict paths that name a categorical field: `level`, or `judgements[criterion].relevance`.

A judge's `judge.toml` `[labels]` table names its fields this way; the spec checks each path
when it loads, and the stability statistics read the values through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PATH = re.compile(r"^([a-z_][a-z0-9_]*)(?:\[([a-z_][a-z0-9_]*)\]\.([a-z_][a-z0-9_]*))?$")


def check_path(path: str) -> None:
    if not _PATH.match(path):
        raise ValueError(
            f"label path {path!r}: write a verdict field (`level`) or a list keyed by one of "
            "its fields (`judgements[criterion].relevance`)"
        )


def read_labels(verdict: Mapping[str, Any] | None, path: str) -> dict[str, str] | None:
    """Unit key -> value as text ('' for a plain field); None when the verdict lacks it."""
    match = _PATH.match(path)
    if match is None:
        check_path(path)
    assert match is not None
    field, key, value = match.groups()
    raw = (verdict or {}).get(field)
    if key is None:
        return None if raw is None or isinstance(raw, list | dict) else {"": str(raw)}
    if not isinstance(raw, list):
        return None
    out: dict[str, str] = {}
    for entry in raw:
        if isinstance(entry, dict) and key in entry and entry.get(value) is not None:
            out[str(entry[key])] = str(entry[value])
    return out
