"""Accepted baselines are immutable: each one's prompt files, pinned when it was accepted.

planted_sets/<judge>/accepted.toml, written by `python -m judges baseline --accept V`:

    ["local:smollm2-135m"."0.3.1"]
    pinned = "2026-12-02"
    prompts = { "0.3.1.md" = "<sha256 of the file>" }
    cassettes = { files = 171, sha256 = "<one digest over the sorted (path, sha256) list>" }
    results = "<sha256 of the model's lines of reports/<judge>/<version>/results.jsonl>"

and beside it accepted-cassettes.sha256, one `<sha256>  <path under cassettes/>` line per
pinned cassette (the format `sha256sum -c` reads, from the cassettes folder).

A pinned prompt file that changed is a usage error naming the file: a published prompt is
never edited, a change is a new version. Its recording is kept too: `--record` never
replaces an accepted baseline's cassettes unless asked by name (`--rerecord-baseline`),
and a pinned cassette whose bytes changed fails the session before any call
(judges.sets.pin_checks), naming the file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from judges.core.spec import JudgeSpec, version_key
from judges.sets.folder import SetFolder
from judges.sets.items import PlantedSetError
from judges.sets.tables import table_line
from judges.storage.files import jsonl_lines
from judges.storage.restoring import restore_hint


@dataclass(frozen=True)
class Pin:
    model: str
    version: str
    pinned: str  # the date it was pinned (accepted), YYYY-MM-DD
    prompts: dict[str, str] = field(default_factory=dict)  # file under the judge's folder -> sha256
    # Set by a `--rerecord-baseline` session: when, and what the new recording changed.
    rerecorded: str = ""
    # Path under the cassettes folder -> sha256 of each cassette of the accepted recording;
    # None for a pin written without its cassettes (before they were pinned: re-accept it).
    cassettes: dict[str, str] | None = None
    results: str = ""  # sha256 of the accepted recording's results (this model's lines)
    # Set by `baseline --accept --repin "why"`: when, why and how many pinned cassettes the
    # acceptance replaced with the bytes on disk.
    repinned: str = ""


def cassettes_digest(files: dict[str, str]) -> str:
    """One digest over the sorted (path, sha256) list of a recording's cassettes."""
    listing = "".join(f"{digest}  {path}\n" for path, digest in sorted(files.items()))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def recorded_cassettes(cassettes: Path, judge: str, version: str, model: str) -> dict[str, str]:
    """The sha256 of every cassette of one version on one model, by its path under
    `cassettes` (its main run and every other run's folder)."""
    from judges.calls.backends import ModelRef

    folder = cassettes / judge / version / ModelRef.parse(model).slug
    return {
        path.relative_to(cassettes).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.glob("**/*.yaml"))
    }


def results_digest(reports: Path, judge: str, version: str, model: str) -> str:
    """The sha256 of one model's lines of a version's results.jsonl ("" when there is none)."""
    path = reports / judge / version / "results.jsonl"
    if not path.is_file():
        return ""
    mine = [
        line
        for line in jsonl_lines(path.read_text(encoding="utf-8"))
        if line.strip() and json.loads(line).get("model") == model
    ]
    return hashlib.sha256("\n".join(mine).encode("utf-8")).hexdigest()


def prompt_digests(spec: JudgeSpec, version: str) -> dict[str, str]:
    """The SHA-256 of each prompt file of one version, by its path under the judge's folder."""
    paths = spec.prompts[version].paths.values()
    return {
        path.relative_to(spec.root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(paths)
    }


def load_pins(folder: Path) -> dict[tuple[str, str], Pin]:
    """The pins of accepted.toml, keyed by (model, version), each with its cassettes from
    accepted-cassettes.sha256; none when there is no file."""
    files = SetFolder.at(folder)
    path, manifest = files.pins_path, files.read_pinned_cassettes()
    pins: dict[tuple[str, str], Pin] = {}
    for (model, version), table in files.read_pins().items():
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
        cassettes = _pinned_cassettes(
            path, files.pinned_cassettes_path, manifest, table, model, version
        )
        results, repinned = str(table.get("results", "")), str(table.get("repinned", ""))
        pins[(model, version)] = Pin(
            model, version, pinned, prompts, rerecorded, cassettes, results, repinned
        )
    return pins


def _pinned_cassettes(
    path: Path,
    manifest_path: Path,
    manifest: dict[str, str],
    table: dict[str, object],
    model: str,
    version: str,
) -> dict[str, str] | None:
    """A pin's cassettes from the manifest, checked against accepted.toml's digest."""
    from judges.calls.backends import ModelRef

    pinned = table.get("cassettes")
    if pinned is None:
        return None
    line = table_line(path, (model, version)) or 1
    if not isinstance(pinned, dict) or not isinstance(pinned.get("sha256"), str):
        raise PlantedSetError(
            f'{path}:{line}: ["{model}"."{version}"] needs cassettes = '
            '{ files = <count>, sha256 = "<digest>" }, as `python -m judges baseline '
            "--accept` writes it"
        )
    prefix = f"{path.parent.name}/{version}/{ModelRef.parse(model).slug}/"
    files = {name: digest for name, digest in manifest.items() if name.startswith(prefix)}
    if cassettes_digest(files) != pinned["sha256"] or len(files) != pinned.get("files"):
        raise PlantedSetError(
            f'{path}:{line}: ["{model}"."{version}"] pins {pinned.get("files")} cassettes '
            f"whose digest is not that of the {len(files)} listed in {manifest_path}: one "
            "of the two was edited by hand. Restore both ("
            + restore_hint(
                [path, manifest_path],
                f"accept it again: python -m judges baseline {path.parent.name} --accept {version}",
            )
            + ")"
        )
    return files


def edited_pins(spec: JudgeSpec, pins: dict[tuple[str, str], Pin], folder: Path) -> None:
    """Refuse a run whose accepted baseline's prompt file changed or went away."""
    path = SetFolder.at(folder).pins_path
    for (model, version), pin in sorted(pins.items()):
        if spec.retired(version):  # a callable judge's: no prompt file, its code moved on
            continue
        if version not in spec.prompts:
            line = table_line(path, (model, version)) or 1
            raise PlantedSetError(
                f"{path}:{line}: prompt {version} of {spec.name} is "
                f"the accepted baseline on {model} but its prompt file is gone from "
                f"{spec.root}; restore it ("
                + restore_hint(
                    [spec.root / name for name in sorted(pin.prompts)],
                    f"put the file back as it was when accepted: its SHA-256 is pinned in {path}",
                )
                + ")"
            )
        now = prompt_digests(spec, version)
        for name, digest in sorted(pin.prompts.items()):
            if now.get(name) != digest:
                newer = next_version(spec.versions)
                raise PlantedSetError(
                    f"{spec.root / name}: prompt {version} of {spec.name} is the accepted "
                    f"baseline on {model} (pinned in {path} on {pin.pinned or 'acceptance'}) "
                    "and was edited: a published prompt is never edited in place, or its "
                    "recording no longer says what it judged. Restore it ("
                    + restore_hint(
                        [spec.root / name],
                        f"undo the edit by hand: its SHA-256 when accepted is pinned in "
                        f"{path}, {digest[:12]}...",
                    )
                    + f") and put the change in a new version, e.g. {newer}"
                )


def differing_pins(
    folder: Path, judge: str, accepted: list[tuple[str, str]], cassettes: Path
) -> dict[tuple[str, str], list[str]]:
    """Per (model, version) accepted again: its pinned cassettes whose bytes on disk differ
    from the pinned digest, or that are gone (paths under `cassettes`). Cassettes added
    since (a grown set) replace nothing pinned and are not listed."""
    pins = load_pins(folder)
    found: dict[tuple[str, str], list[str]] = {}
    for model, version in accepted:
        pin = pins.get((model, version))
        if pin is None or not pin.cassettes:
            continue
        now = recorded_cassettes(cassettes, judge, version, model)
        changed = [
            name for name, digest in sorted(pin.cassettes.items()) if now.get(name) != digest
        ]
        if changed:
            found[(model, version)] = changed
    return found


def write_pins(
    folder: Path,
    spec: JudgeSpec,
    accepted: list[tuple[str, str]],
    today: str,
    cassettes: Path | None = None,
    reports: Path | None = None,
    repinned: dict[tuple[str, str], str] | None = None,
) -> Path:
    """Pin each (model, version) accepted now (its prompt files, and with `cassettes` and
    `reports` its cassettes and results), keeping every earlier pin. Accepting again what
    is pinned already, with the same prompt files, keeps its date and notes. `repinned`:
    (model, version) -> the note of a pin whose differing cassettes are pinned anew (the
    caller refuses a differing cassette without one: `differing_pins`)."""
    pins = load_pins(folder)
    for model, version in accepted:
        prompts = prompt_digests(spec, version)
        pin = Pin(model, version, today, prompts)
        earlier = pins.get((model, version))
        if earlier is not None and earlier.prompts == prompts:
            pin = replace(
                pin,
                pinned=earlier.pinned or today,
                rerecorded=earlier.rerecorded,
                repinned=earlier.repinned,
            )
        if (model, version) in (repinned or {}):
            pin = replace(pin, repinned=(repinned or {})[(model, version)])
        if cassettes is not None:
            files = recorded_cassettes(cassettes, spec.name, version, model)
            pin = replace(pin, cassettes=files)
        if reports is not None:
            pin = replace(pin, results=results_digest(reports, spec.name, version, model))
        pins[(model, version)] = pin
    return save_pins(folder, pins)


def note_rerecorded(
    folder: Path, model: str, version: str, text: str, cassettes: Path | None = None
) -> Path:
    """Record on a pin that its baseline was re-recorded on purpose, when and what changed;
    with `cassettes`, the new recording's cassettes are pinned in place of the old."""
    pins = load_pins(folder)
    pin = replace(pins[(model, version)], rerecorded=text)
    if cassettes is not None:
        judge = folder.name
        pin = replace(pin, cassettes=recorded_cassettes(cassettes, judge, version, model))
    pins[(model, version)] = pin
    return save_pins(folder, pins)


def save_pins(folder: Path, pins: dict[tuple[str, str], Pin]) -> Path:
    """accepted.toml and its cassette list, written from `pins` as they are."""
    tables: dict[tuple[str, str], dict[str, object]] = {}
    manifest: dict[str, str] = {}
    for key, pin in pins.items():
        prompts = dict(sorted(pin.prompts.items()))
        table: dict[str, object] = {"pinned": pin.pinned, "prompts": prompts}
        if pin.cassettes is not None:
            count, digest = len(pin.cassettes), cassettes_digest(pin.cassettes)
            table["cassettes"] = {"files": count, "sha256": digest}
            manifest |= pin.cassettes
        notes = {"results": pin.results, "rerecorded": pin.rerecorded, "repinned": pin.repinned}
        tables[key] = table | {name: text for name, text in notes.items() if text}
    return SetFolder.at(folder).write_pins(tables, manifest)


def next_version(versions: list[str]) -> str:
    newest = [int(part) for part in max(versions, key=version_key).split(".")]
    newest[-1] += 1
    return ".".join(str(part) for part in newest)
