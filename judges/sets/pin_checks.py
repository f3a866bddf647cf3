"""Checks at session start that accepted and recorded prompt versions are what they were.

- gates.toml's `baseline` and accepted.toml agree both ways: every baseline a table names
  is pinned, and every pin is a version whose table names a baseline;
- an accepted baseline's cassettes are the bytes pinned at acceptance
  (accepted-cassettes.sha256): a hand-edited or copied-in cassette fails the run;
- a recorded prompt version's file still says what its recording sent, compared whole (a
  line added or deleted alike): a published prompt is never edited in place, accepted or
  not (a change is a new version).

Each problem is a PlantedSetError naming the file and the fix.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from judges.calls.cassette_files import recorded_request_strings
from judges.core.spec import PLACEHOLDER, JudgeSpec
from judges.sets.folder import PINNED_CASSETTES_FILE, PINS_FILE
from judges.sets.items import PlantedSetError
from judges.sets.pins import next_version
from judges.sets.planted import PlantedSet
from judges.sets.tables import table_line
from judges.storage.restoring import restore_hint

__all__ = ["changed_cassettes", "edited_recorded_prompts", "pins_against_gates"]

RERECORD = "--rerecord-baseline"


def pins_against_gates(planted: PlantedSet) -> None:
    """Every baseline gates.toml names is pinned in accepted.toml, and every pin's version
    has a table that names a baseline."""
    gates_path, pins_path = planted.folder.gates_path, planted.folder.pins_path
    accept = f"python -m judges baseline {planted.judge} --accept"
    for (model, version), table in sorted(planted.gates.items()):
        baseline = table.baseline
        if baseline is None or (model, baseline) in planted.pins:
            continue
        source = planted.inherited_gates.get((model, version), version)
        line = table_line(gates_path, (model, source)) or 1
        raise PlantedSetError(
            f'{gates_path}:{line}: ["{model}"."{source}"] names baseline = "{baseline}", but '
            f'{pins_path} pins no ["{model}"."{baseline}"]: a baseline is accepted by '
            f"`{accept} {baseline}`, which writes both files. Restore {PINS_FILE} ("
            + restore_hint([pins_path], "it was not kept")
            + ") or accept the baseline again with that command"
        )
    for (model, version), pin in sorted(planted.pins.items()):
        line = table_line(pins_path, (model, version)) or 1
        governing = planted.gates.get((model, version))
        if governing is None or governing.baseline is None:
            raise PlantedSetError(
                f'{pins_path}:{line}: ["{model}"."{version}"] is pinned as an accepted '
                f"baseline, but {gates_path} names no baseline for prompt {version} on "
                f"{model}: restore its `baseline = ...` line ("
                + restore_hint([gates_path], "write it back by hand")
                + f"), or accept a baseline again with `{accept} {version}`"
            )
        if pin.cassettes is None:
            raise PlantedSetError(
                f'{pins_path}:{line}: ["{model}"."{version}"] pins the prompt files but not '
                f"the cassettes of the accepted recording (an {PINS_FILE} older than "
                f"{PINNED_CASSETTES_FILE}, or edited by hand): pin them with `{accept} {version}`"
            )


def changed_cassettes(planted: PlantedSet, cassettes: Path, accept_options: str = "") -> None:
    """Refuse a session whose accepted baseline's cassette differs from the pinned bytes. A
    cassette that is gone is the replay's to report (it names the file to restore).
    `accept_options`: what the `baseline --accept` of the message needs to find this
    session's results (its report folder where it is not the default)."""
    manifest = planted.folder.pinned_cassettes_path
    for (model, version), pin in sorted(planted.pins.items()):
        changed = [
            name
            for name, digest in sorted((pin.cassettes or {}).items())
            if (path := cassettes / name).is_file()
            and hashlib.sha256(path.read_bytes()).hexdigest() != digest
        ]
        if not changed:
            continue
        shown = ", ".join(str(cassettes / name) for name in changed[:3])
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        raise PlantedSetError(
            f"{shown}{more}: {'a cassette' if len(changed) == 1 else 'cassettes'} of the "
            f"accepted baseline {planted.judge} prompt {version} on {model} changed since it "
            f"was accepted (pinned in {manifest}): an accepted recording is never edited or "
            "replaced by hand. Restore it ("
            + restore_hint([cassettes / changed[0]], "from a copy of the accepted recording")
            + f"), re-record the baseline on purpose with `pytest --record {RERECORD}`, or pin "
            f"these bytes saying why: `python -m judges baseline {planted.judge} --accept "
            f'{version}{accept_options} --repin "<why>"`'
        )


def edited_recorded_prompts(spec: JudgeSpec, cassettes: Path) -> None:
    """Refuse a session whose recorded prompt version's file no longer says what its
    recording sent, compared whole: one prompt of its first main-run cassette of every model
    must be a rendering of the template (its own text exactly, any text in each
    placeholder), so a line added and a line deleted are refused alike."""
    for version, prompt in spec.prompts.items():
        for folder in sorted(p for p in (cassettes / spec.name / version).glob("*") if p.is_dir()):
            first = next(iter(sorted(folder.glob("*.yaml"))), None)
            if first is None or _imported(folder.name):
                continue
            sent = recorded_request_strings(first)
            if not sent:
                continue
            for facet in prompt.templates:
                lines = prompt.literal_lines(facet)
                candidates = [text for text in sent if any(line in text for line in lines)]
                if not candidates:  # this cassette holds none of this facet's calls
                    continue
                if any(prompt.rendering(facet).fullmatch(text) for text in candidates):
                    continue
                closest = max(candidates, key=lambda text: sum(line in text for line in lines))
                missing = [line for line in lines if line not in closest]
                difference = (
                    f"its recording never sent {_shown(missing[0])}"
                    if missing
                    else _removed(prompt.templates[facet], closest)
                )
                _refuse_edit(spec, version, prompt.paths[facet], first, difference)


def _removed(template: str, sent: str) -> str:
    """The line a recording sent that the template no longer holds, in words: looked for
    inside the template's own text between two placeholders (a placeholder's filling is
    never taken for it), or before the first and after the last."""
    pieces = PLACEHOLDER.split(template)[::2]
    for number, piece in enumerate(pieces):
        own = [line.strip() for line in piece.splitlines() if line.strip()]
        if not own or piece in sent:
            continue
        start = 0 if number == 0 else sent.find(own[0])
        last = sent.rfind(own[-1])
        end = len(sent) if number == len(pieces) - 1 else last + len(own[-1])
        if start < 0 or last < start:
            continue
        between = sent[start:end].splitlines()
        gone = [line.strip() for line in between if line.strip() and line.strip() not in own]
        if gone:
            return f"its recording sent {_shown(gone[0])}, which the file no longer holds"
    return "its recording sent a text this file no longer renders (a line deleted or changed)"


def _shown(line: str) -> str:
    return repr(line if len(line) <= 80 else line[:77] + "...")


def _imported(slug: str) -> bool:
    """Judgements released by others (judges.calls.backends): their cassettes hold
    no prompt of ours."""
    return slug.startswith("imported-")


def _refuse_edit(
    spec: JudgeSpec, version: str, path: Path, cassette: Path, difference: str
) -> None:
    newer = next_version(spec.versions)
    newer += ".md" if path.parent == spec.root else "/ (a folder like this version's)"
    raise PlantedSetError(
        f"{path}: prompt {version} of {spec.name} was recorded ({cassette.parent}) and has "
        f"been edited since: {difference}. Published prompts are never edited: add {newer} "
        f"with the change and restore this file ("
        + restore_hint([path], f"undo the edit by hand, so that it says what {cassette} sent")
        + f"); if {version} was never shared, delete its cassettes "
        f"({cassette.parent.parent}) and record it again"
    )
