"""What every reader hands over, and the one writer that turns it into a corpus folder.

A reader maps a tool's log onto the corpus's notions (system, item, judge, run, score, flag;
a human's rating becomes a label) and names, for each row, where in the log it came from.
The writer checks what only the log can name (a row given twice, a score off the scale),
writes the folder beside its target, loads it with the corpus's own checks (`load_corpus`)
and only then moves it into place: a corpus is whole or absent, and an interrupted import
leaves the previous one as it was.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judges.corpus.manifest import MANIFEST_FILE, CorpusError, Scale
from judges.corpus.rows import (
    ITEMS_FILE,
    JUDGEMENTS_FILE,
    LABELS_FILE,
    OUTPUTS_FILE,
    PUBLISHED_FILE,
    load_corpus,
)
from judges.storage.files import atomic_write_text
from judges.storage.toml_files import write_toml

# The one table every reader reads a score written as a word by (case and spaces ignored);
# a tool's own literals (Inspect's C, P, I, N) or a team's labels are given beside it.
SCORE_WORDS: dict[str, float] = {
    "pass": 1.0, "passed": 1.0, "true": 1.0, "yes": 1.0, "correct": 1.0,
    "fail": 0.0, "failed": 0.0, "false": 0.0, "no": 0.0, "incorrect": 0.0,
}  # fmt: skip
SCORE_FORMS = "a number, or pass/fail, true/false, yes/no, correct/incorrect"
NO_SCORE = "no score in the log"


def _spelled(number: float) -> str:
    """A non-finite number as JSON logs spell it."""
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


def score_of(
    value: object, words: Mapping[str, float] | None = None
) -> tuple[float | None, str | None]:
    """A value a log holds as a score: (score, None), or (None, why it is none).

    Every reader turns text into a score here, so one word means one score whatever the
    tool, and a value that is no score says so in one form. `words`: a tool's literals or
    a team's stated labels, matched as written before the shared table is.
    """
    if value is None:
        return None, NO_SCORE
    number: float | None = None
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if words and text in words:
            return float(words[text]), None
        if text.lower() in SCORE_WORDS:
            return SCORE_WORDS[text.lower()], None
        try:
            number = float(text)
        except ValueError:
            return None, f"value {value[:40]!r} is not a score ({SCORE_FORMS})"
    else:
        return None, f"a {type(value).__name__} value is not a score ({SCORE_FORMS})"
    if math.isfinite(number):
        return number, None
    return None, f"score {_spelled(number)} in the log"


def no_value(value: object) -> bool:
    """No score was given (absent, or a NaN or infinity): an error row, never a refusal."""
    score, why = score_of(value)
    return score is None and (why == NO_SCORE or str(why).startswith("score "))


@dataclass
class ImportedRows:
    """A tool's log in the corpus's terms. Each judgement and label keeps `where` it came
    from in the log (file and sample), for the messages."""

    description: str
    source: str
    licence: str = "unknown"
    scale: dict[str, Any] = field(default_factory=dict)  # empty: inferred from the scores
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> [judges.<name>]
    items: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> items.jsonl row
    outputs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    judgements: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (where, row)
    labels: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    published: list[dict[str, Any]] = field(default_factory=list)
    unmapped: Counter[str] = field(default_factory=Counter)  # what was not imported, and why
    copied: list[Path] = field(default_factory=list)  # files kept beside (LICENSE, ...)

    def judge(self, name: str, description: str) -> None:
        self.judges.setdefault(name, {"description": description})

    def item(self, item_id: str, inputs: dict[str, Any], subset: str = "") -> None:
        row: dict[str, Any] = {"id": item_id, "inputs": inputs}
        if subset:
            row["subset"] = subset
        self.items.setdefault(item_id, row)


@dataclass(frozen=True)
class Written:
    folder: Path
    systems: tuple[str, ...]
    judges: tuple[str, ...]
    items: int
    judgements: int
    errors: int
    labels: int
    published: int
    unmapped: tuple[tuple[str, int], ...]
    replaced: str | None  # what a --replace replaced, in words


def jsonl_text(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)


def inferred_scale(rows: ImportedRows) -> dict[str, Any]:
    """The scale when the reader states none: pass/fail (0 or 1) reads as two levels, with
    partial credit (0.5) as three; any other score needs the scale stated (--low/--high)."""
    scores = {float(r["score"]) for _, r in rows.judgements if "score" in r}
    scores |= {float(r["score"]) for _, r in rows.labels}
    if scores <= {0.0, 1.0}:
        return {"name": "pass rate", "low": 0, "high": 1, "verdict": "level", "step": 1,
                "factor": 100}  # fmt: skip
    if scores <= {0.0, 0.5, 1.0}:
        return {"name": "score", "low": 0, "high": 1, "verdict": "level", "step": 0.5,
                "factor": 100}  # fmt: skip
    finite = sorted(s for s in scores if math.isfinite(s))
    seen = f"[{finite[0]:g}, {finite[-1]:g}]" if finite else "none"
    raise CorpusError(
        f"the scores are not pass/fail (0 or 1) nor partial credit (0, 0.5, 1): they span "
        f"{seen}; state the scale with --low and --high, and --step (levels) or --midpoint "
        "(a preference against a reference)"
    )


def _checked(rows: ImportedRows, scale: Scale) -> None:
    """What load_corpus would refuse by line of a file the user never wrote, refused here by
    the place in the log the row came from."""
    seen: dict[tuple[Any, ...], str] = {}
    for where, row in rows.judgements:
        key = (row["system"], row["item"], row["judge"], row.get("run", 0))
        if key in seen:
            raise CorpusError(
                f"{where}: {row['system']} on {row['item']} by {row['judge']} run "
                f"{row.get('run', 0)} is also at {seen[key]}; a log imported twice, or a "
                "sample id given twice: import each log once, or give the samples distinct ids"
            )
        seen[key] = where
        if "score" in row and not scale.contains(float(row["score"])):
            raise CorpusError(
                f"{where}: score {row['score']:g} is off the scale [{scale.low:g}, "
                f"{scale.high:g}]; state the scale with --low and --high"
            )
    labelled: dict[tuple[str, str], tuple[str, float]] = {}
    for where, row in rows.labels:
        output = (row["system"], row["item"])
        if output in labelled and labelled[output][1] != row["score"]:
            raise CorpusError(
                f"{where}: {row['system']} on {row['item']} is labelled {row['score']:g} here "
                f"and {labelled[output][1]:g} at {labelled[output][0]}; keep one label per output"
            )
        labelled.setdefault(output, (where, row["score"]))
        if not scale.contains(float(row["score"])):
            raise CorpusError(
                f"{where}: label {row['score']:g} is off the scale [{scale.low:g}, "
                f"{scale.high:g}]; state the scale with --low and --high"
            )


def _held(folder: Path) -> str:
    rows = folder / JUDGEMENTS_FILE
    count = 0
    if rows.is_file():
        count = sum(1 for line in rows.read_text(encoding="utf-8", errors="replace").split("\n")
                    if line.strip())  # fmt: skip
    return f"{count} judgement rows from {folder / MANIFEST_FILE}"


def write_corpus(
    rows: ImportedRows,
    target: Path,
    name: str,
    *,
    replace: bool = False,
    scale: dict[str, Any] | None = None,
) -> Written:
    """Write the corpus folder `target` named `name` from `rows`; `scale` overrides the
    reader's (from --low/--high/--step/--midpoint)."""
    if (target / MANIFEST_FILE).exists() and not replace:
        raise CorpusError(
            f"{target}: a corpus is already there; pass --replace to rebuild it, or import "
            "under another --name"
        )
    if not rows.judgements and not rows.labels:
        raise CorpusError(
            f"{rows.source}: nothing to import (no judgement or label could be mapped"
            + (f"; not imported: {_unmapped_text(rows.unmapped)}" if rows.unmapped else "")
            + ")"
        )
    given = scale or {}
    stated = {**(rows.scale or ({} if {"low", "high"} <= given.keys() else inferred_scale(rows))),
              **given}  # fmt: skip
    if scale and "step" in scale:
        stated.pop("midpoint", None)
        stated["verdict"] = "level"
    if scale and "midpoint" in scale:
        stated.pop("step", None)
        stated["verdict"] = "side"
    try:
        checked_scale = Scale.model_validate(stated)
    except ValueError as error:
        raise CorpusError(f"the scale {stated}: {error}") from None
    _checked(rows, checked_scale)
    labels = {(r["system"], r["item"]): r for _, r in rows.labels}
    manifest = {
        "name": name, "description": rows.description, "source": rows.source,
        "licence": rows.licence, "scale": stated, "judges": rows.judges,
    }  # fmt: skip
    staging = target.parent / f".{target.name}.importing-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        atomic_write_text(staging / ITEMS_FILE, jsonl_text(list(rows.items.values())))
        if rows.outputs:
            atomic_write_text(staging / OUTPUTS_FILE, jsonl_text(list(rows.outputs.values())))
        atomic_write_text(staging / JUDGEMENTS_FILE, jsonl_text([r for _, r in rows.judgements]))
        if labels:
            atomic_write_text(staging / LABELS_FILE, jsonl_text(list(labels.values())))
        if rows.published:
            atomic_write_text(staging / PUBLISHED_FILE, jsonl_text(rows.published))
        for path in rows.copied:
            shutil.copyfile(path, staging / path.name)
        write_toml(staging / MANIFEST_FILE, manifest, error=CorpusError)
        try:
            corpus = load_corpus(staging, judged=bool(rows.judgements))
        except CorpusError as error:  # name the folder the user will look in
            raise CorpusError(str(error).replace(str(staging), str(target))) from None
        replaced = _held(target) if (target / MANIFEST_FILE).exists() else None
        if target.exists():
            old = target.parent / f".{target.name}.replaced-{os.getpid()}"
            target.rename(old)
            staging.rename(target)
            shutil.rmtree(old)
        else:
            staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    judgements = [r for _, r in rows.judgements]
    return Written(
        target, corpus.systems, tuple(rows.judges), len(rows.items), len(judgements),
        sum("error" in r for r in judgements), len(labels), len(rows.published),
        tuple(sorted(rows.unmapped.items())), replaced,
    )  # fmt: skip


def _unmapped_text(unmapped: Counter[str]) -> str:
    return "; ".join(f"{count} {what}" for what, count in sorted(unmapped.items()))


def summary_lines(written: Written) -> list[str]:
    """What an import says: what it wrote, what it could not map (each named and counted)."""
    lines = []
    if written.replaced:
        lines.append(f"replaced the corpus {written.folder}, which held {written.replaced}")
    lines.append(
        f"imported {written.judgements} judgements ({written.errors} error rows kept) of "
        f"{len(written.systems)} systems on {written.items} items by {len(written.judges)} "
        f"judges ({', '.join(written.judges)}), {written.labels} human labels"
        + (f" and {written.published} published figures" if written.published else "")
        + f", into {written.folder}"
    )
    for what, count in written.unmapped:
        lines.append(f"not imported: {count} {what}")
    return lines
