"""Accepted baselines are immutable: each one's prompt files, pinned when it was accepted.

planted_sets/<judge>/accepted.toml, written by `python -m judges baseline --accept V`:

    ["local:smollm2-135m"."0.3.1"]
    pinned = "2026-12-02"
    prompts = { "0.3.1.md" = "<sha256 of the file>" }

A pinned prompt file that changed is a usage error naming the file: a published prompt is
never edited, a change is a new version. Its recording is kept too: `--record` never
replaces an accepted baseline's cassettes unless asked by name (`--rerecord-baseline`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from judges.core.spec import JudgeSpec, version_key
from judges.sets.items import PlantedSetError
from judges.sets.tables import load_tables, table_line
from judges.storage.files import atomic_write_text

PINS_FILE = "accepted.toml"
_HEADER = """# Accepted baselines, pinned by `python -m judges baseline --accept`: the prompt
# files each was recorded with. A pinned prompt is never edited (add a new version
# instead), and `pytest --record` never replaces its cassettes unless given
# --rerecord-baseline.
"""


@dataclass(frozen=True)
class Pin:
    model: str
    version: str
    pinned: str  # the date it was pinned (accepted), YYYY-MM-DD
    prompts: dict[str, str] = field(default_factory=dict)  # file under the judge's folder -> sha256
    # Set by a `--rerecord-baseline` session: when, and what the new recording changed.
    rerecorded: str = ""


def prompt_digests(spec: JudgeSpec, version: str) -> dict[str, str]:
    """The SHA-256 of each prompt file of one version, by its path under the judge's folder."""
    paths = spec.prompts[version].paths.values()
    return {
        path.relative_to(spec.root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(paths)
    }


def load_pins(folder: Path) -> dict[tuple[str, str], Pin]:
    """The pins of accepted.toml, keyed by (model, version); none when there is no file."""
    path = folder / PINS_FILE
    pins: dict[tuple[str, str], Pin] = {}
    for (model, version), table in load_tables(path).items():
        prompts = table.get("prompts")
        if not isinstance(prompts, dict) or not all(
            isinstance(name, str) and isinstance(digest, str) for name, digest in prompts.items()
        ):
            line = table_line(path, (model, version)) or 1
            raise PlantedSetError(
                f'{path}:{line}: ["{model}"."{version}"] needs prompts = '
                '{ "<file>" = "<sha256>" }, as `python -m judges baseline --accept` writes it'
            )
        pinned, rerecorded = str(table.get("pinned", "")), str(table.get("rerecorded", ""))
        pins[(model, version)] = Pin(model, version, pinned, prompts, rerecorded)
    return pins


def edited_pins(spec: JudgeSpec, pins: dict[tuple[str, str], Pin], folder: Path) -> None:
    """Refuse a run whose accepted baseline's prompt file changed or went away."""
    path = folder / PINS_FILE
    for (model, version), pin in sorted(pins.items()):
        if version not in spec.prompts:
            line = table_line(path, (model, version)) or 1
            raise PlantedSetError(
                f"{path}:{line}: prompt {version} of {spec.name} is "
                f"the accepted baseline on {model} but its prompt file is gone from "
                f"{spec.root}; restore it (git checkout -- {spec.root}/{version}*)"
            )
        now = prompt_digests(spec, version)
        for name, digest in sorted(pin.prompts.items()):
            if now.get(name) != digest:
                newer = _next_version(spec.versions)
                raise PlantedSetError(
                    f"{spec.root / name}: prompt {version} of {spec.name} is the accepted "
                    f"baseline on {model} (pinned in {path} on {pin.pinned or 'acceptance'}) "
                    "and was edited: a published prompt is never edited in place, or its "
                    f"recording no longer says what it judged. Restore it (git checkout -- "
                    f"{spec.root / name}) and put the change in a new version, e.g. {newer}"
                )


def write_pins(folder: Path, spec: JudgeSpec, accepted: list[tuple[str, str]], today: str) -> Path:
    """Pin each (model, version) accepted now, keeping every earlier pin."""
    pins = load_pins(folder)
    for model, version in accepted:
        pins[(model, version)] = Pin(model, version, today, prompt_digests(spec, version))
    return _write(folder, pins)


def note_rerecorded(folder: Path, model: str, version: str, text: str) -> Path:
    """Record on a pin that its baseline was re-recorded on purpose, when and what changed."""
    pins = load_pins(folder)
    pins[(model, version)] = replace(pins[(model, version)], rerecorded=text)
    return _write(folder, pins)


def _write(folder: Path, pins: dict[tuple[str, str], Pin]) -> Path:
    path = folder / PINS_FILE
    lines = [_HEADER]
    for model, version in sorted(pins, key=lambda key: (key[0], version_key(key[1]))):
        pin = pins[(model, version)]
        files = ", ".join(f'"{name}" = "{digest}"' for name, digest in sorted(pin.prompts.items()))
        lines += [f'["{model}"."{version}"]', f'pinned = "{pin.pinned}"']
        lines += [f"prompts = {{ {files} }}"]
        lines += [f"rerecorded = {json.dumps(pin.rerecorded)}"] if pin.rerecorded else []
        lines += [""]
    atomic_write_text(path, "\n".join(lines))
    return path


def _next_version(versions: list[str]) -> str:
    newest = [int(part) for part in max(versions, key=version_key).split(".")]
    newest[-1] += 1
    return ".".join(str(part) for part in newest)
