"""The TOML files of a planted set, most of them `["judge model"."prompt version"]` tables
(gates.toml, expectations.toml, accepted.toml, probe_expectations.toml), read with errors that
name the file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from judges.sets.items import PlantedSetError


def load_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise PlantedSetError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise PlantedSetError(f"{path}: not valid TOML: {error}") from None


def per_model_version(path: Path, table: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """`["backend:model"."version"]` tables, keyed by (model, version)."""
    out: dict[tuple[str, str], Any] = {}
    for model, versions in table.items():
        if not isinstance(versions, dict) or ":" not in model:
            raise PlantedSetError(
                f'{path}: top-level keys are judge models such as "local:smollm2-135m" '
                f"holding one table per prompt version; got {model!r}"
            )
        for version, value in versions.items():
            out[(model, version)] = value
    return out


def load_tables(path: Path) -> dict[tuple[str, str], Any]:
    """A file of `["model"."version"]` tables, keyed by (model, version); empty when absent."""
    return per_model_version(path, load_toml(path))


_HEADER = re.compile(r'^\s*\[\s*"([^"]+)"\s*\.\s*"([^"]+)"\s*\]')


def table_line(path: Path, key: tuple[str, str], name: str | None = None) -> int:
    """The 1-based line that sets `name` in the `["model"."version"]` table `key`, else the
    table's header line (always the header when `name` is None); 0 when the file lacks it."""
    header, inside = 0, False
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        found = _HEADER.match(text)
        if found:
            inside = (found[1], found[2]) == key
            header = number if inside else header
        elif (
            inside
            and name is not None
            and re.search(rf'(^|[{{,\s])"?{re.escape(name)}"?\s*=', text)
        ):
            return number
    return header
