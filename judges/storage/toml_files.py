"""Every TOML file the harness writes, written one way: keys and values formatted by tomli-w,
written atomically, a number TOML readers disagree on (NaN, infinity) refused by name.

Two shapes, which may share a file:
- a document: what `tomli_w.dumps` writes (corpus.toml, probes.toml);
- headed tables: a `# ` comment header, then one `["model"."version"]` (or deeper) table per
  key, blank-line separated, in the order given, each value on one line (a table as an inline
  table). The planted set's files use it: people read and edit them by hand, and
  `judges.sets.tables.table_line` finds a table by that spelling of its header, so the first
  two parts are always quoted.
A file laid out line by line (the pairwise importer's content.toml and prefixes.toml, whose
keys are always quoted) writes its strings with `toml_string`, tomli-w's own quoting.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tomli_w

from judges.storage.files import atomic_write_text

# (table name parts, table) pairs, in the order they are written.
Tables = Iterable[tuple[tuple[str, ...], Mapping[str, Any]]]


def toml_text(
    path: Path,
    document: Mapping[str, Any] | None = None,
    *,
    header: str = "",
    tables: Tables | None = None,
    error: type[ValueError] = ValueError,
) -> str:
    """The text of `path`: `header` as comment lines, `document`, then `tables`.

    A non-finite float anywhere raises `error` naming the file, the table and the key."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    if document:
        _refuse_non_finite(path, "", document, error)
        lines += [tomli_w.dumps(document).rstrip("\n")]
    for key, table in tables or ():
        name = _table_name(key)
        _refuse_non_finite(path, name, table, error)
        lines += ["", name] if lines else [name]
        lines += [_key_value(k, v) for k, v in table.items()]
    return "\n".join(lines) + "\n" if lines else ""


def write_toml(
    path: Path,
    document: Mapping[str, Any] | None = None,
    *,
    header: str = "",
    tables: Tables | None = None,
    error: type[ValueError] = ValueError,
) -> Path:
    """Write `toml_text(...)` to `path` atomically (nothing half-written); returns `path`."""
    atomic_write_text(path, toml_text(path, document, header=header, tables=tables, error=error))
    return path


def toml_string(text: str) -> str:
    """A TOML basic string, as tomli-w escapes it (DEL, control characters, quotes), for the
    few lines a file lays out itself (an importer's always-quoted keys, a commented header)."""
    return tomli_w.dumps({"k": text})[len("k = ") :].rstrip("\n")


def _key(name: str) -> str:
    """A key, bare where TOML allows it, else quoted: as tomli-w writes it."""
    return tomli_w.dumps({name: True})[: -len(" = true\n")]


def _table_name(key: tuple[str, ...]) -> str:
    """`["model"."version".rest]`: the first two parts quoted always (see the module's note)."""
    parts = [toml_string(part) for part in key[:2]] + [_key(part) for part in key[2:]]
    return "[" + ".".join(parts) + "]"


def _key_value(name: str, value: Any) -> str:
    """`name = value` on one line; a table as an inline table, its leaves by tomli-w."""
    if isinstance(value, Mapping):
        inner = ", ".join(_key_value(k, v) for k, v in value.items())
        return f"{_key(name)} = " + ("{ " + inner + " }" if inner else "{}")
    return tomli_w.dumps({name: value}).rstrip("\n")


def _refuse_non_finite(
    path: Path, where: str, table: Mapping[Any, Any], error: type[ValueError], prefix: str = ""
) -> None:
    """A NaN or an infinite float would be written as `nan`/`inf`: a floor no figure can
    meet (every comparison with NaN is false), and JSON has no such number."""
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            _refuse_non_finite(path, where, value, error, f"{dotted}.")
        elif isinstance(value, list | tuple):
            _refuse_non_finite(path, where, dict(enumerate(value)), error, f"{dotted}.")
        elif isinstance(value, float) and not math.isfinite(value):
            place = f"{where} " if where else ""
            raise error(
                f"{path}: {place}{dotted} = {value} is not a finite number, so it is not "
                "written; give a number (or leave the key out)"
            )
