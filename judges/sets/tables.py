"""The TOML files of a planted set, most of them `["judge model"."prompt version"]` tables
(gates.toml, expectations.toml, accepted.toml, probe_expectations.toml), read with errors that
name the file."""

from __future__ import annotations

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
