"""What a prompt version's recording holds, before `baseline` accepts it (or refuses to).

A baseline accepted from part of a version (a `-k` subset, an interrupted recording) would
list only the recorded items' misses, suggest floors from a handful of items, and leave
every later run compared with a fraction of the set. So `baseline --accept` refuses it, and
`baseline` without `--accept` only says what each version holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from judges.core.results import read_jsonl
from judges.core.spec import JudgeSpec
from judges.reports.model.folders import record_command
from judges.sets.folder import GATES_FILE, SET_FILE
from judges.sets.planted import load_planted_set
from judges.verdicts.acceptance import Acceptance, asked_items, recording_gaps


def refusal(
    judge: str, version: str, gaps: Mapping[str, list[str]], asked: Mapping[str, list[str]]
) -> list[str]:
    """The lines `baseline --accept` prints when the version is not fully recorded."""
    lines = [
        f"--accept {version}: refused, the recording of {judge} prompt {version} is partial; "
        f"a baseline is accepted only from every item {SET_FILE} asks for"
    ]
    for model, missing in sorted(gaps.items()):
        total = len(asked[model])
        shown = ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else "")
        lines.append(f"  {model}: {total - len(missing)}/{total} items recorded; missing {shown}")
    lines.append(f"  record the rest: {record_command(judge, version)}")
    return lines


def repin_refusal(
    command: str, differing: Mapping[tuple[str, str], list[str]], cassettes: Path
) -> list[str]:
    """The lines `baseline --accept` (`command`, as run) prints when pinned cassettes
    differ from the disk: every file named, then the honest fixes."""
    lines = [
        "refused: cassettes pinned when this version was accepted differ from the bytes on "
        "disk (edited, replaced or deleted since); accepting again would pin them unseen. "
        "Nothing written"
    ]
    for (model, version), names in sorted(differing.items()):
        for name in names:
            state = "differs" if (cassettes / name).is_file() else "is gone"
            lines.append(f"  {cassettes / name} {state} (prompt {version} on {model})")
    first = cassettes / next(iter(sorted(differing.values())))[0]
    lines.append(
        f"  restore the accepted recording (git checkout -- {first.parent}), or re-record it "
        "on purpose with `pytest --record --rerecord-baseline`; to pin these bytes as they "
        f'are, say why: {command} --repin "<why>"'
    )
    return lines


def lacking_refusal(judge: str, version: str, lacking: Mapping[str, Sequence[str]]) -> list[str]:
    """The lines `baseline --accept` prints when the version lacks runs its judge has."""
    lines = [
        f"--accept {version}: refused, {judge} prompt {version} lacks runs its judge has; a "
        "baseline is accepted only with every run, since later versions are compared with it"
    ]
    for model, runs in sorted(lacking.items()):
        lines += [f"  {model}: {run}" for run in runs]
    return lines


def buried_refusal(judge: str, version: str, checks: Acceptance) -> list[str]:
    """The lines `baseline --accept` prints when it would bury misses without a reason:
    each control marked down and each item without a verdict, by name."""
    from judges.cli.baseline import miss_reason

    lines = [
        f"--accept {version}: refused, {judge} prompt {version} has misses acceptance would "
        "turn into accepted xfails unseen; nothing written"
    ]
    for title, found, option in (
        ("controls marked down (a good answer the judge failed)", checks.buried_controls,
         "--accept-control-miss"),
        ("items without a verdict (an error, an unreadable reply, a dropped item)",
         checks.no_verdict, "--accept-no-verdict"),
    ):  # fmt: skip
        for model, rows in sorted(found.items()):
            lines.append(f'  {model}: {len(rows)} {title}; accept them only with {option} "<why>"')
            lines += [f"    {row.item_id}: {miss_reason(row)}" for row in rows]
    return lines


def survey(
    judge: str, versions: list[str], reports: Path, planted_root: Path,
    catalog: Mapping[str, JudgeSpec],
) -> int:  # fmt: skip
    """Print what each version's recording holds and the accepted baseline; write nothing."""
    spec = catalog[judge]
    planted = load_planted_set(planted_root, spec)
    tables = planted.folder.read_gates()
    accepted = sorted({str(g["baseline"]) for g in tables.values() if g.get("baseline")})
    print(f"{judge}: accepted baseline {', '.join(accepted) or 'none yet'} ({GATES_FILE})")
    for version in versions:
        path = reports / judge / version / "results.jsonl"
        if not path.is_file():
            print(f"  prompt {version}: not recorded ({record_command(judge, version)})")
            continue
        rows = read_jsonl(path)
        models = sorted({row.model for row in rows})
        asked = asked_items(planted, version, models)
        gaps = recording_gaps(rows, asked)
        for model in models:
            item_ids = asked[model]
            main = {r.item_id: r for r in rows if r.model == model and r.run == "main"}
            missed = sum(1 for r in main.values() if not (r.status == "ok" and r.met))
            held = len(item_ids) - len(gaps.get(model, []))
            state = "complete" if model not in gaps else "partial"
            print(
                f"  prompt {version} on {model}: {held}/{len(item_ids)} items recorded "
                f"({state}), {missed} missed"
            )
            pin = planted.pins.get((model, version))
            if pin is not None and pin.rerecorded:
                print(f"    accepted baseline, re-recorded {pin.rerecorded}")
    print(
        f"nothing written; accept a fully recorded version with: "
        f"python -m judges baseline {judge} --accept VERSION"
    )
    return 0
