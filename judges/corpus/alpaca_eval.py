"""AlpacaEval's released judgements read into the corpus format.

The release's layout: `annotations/<system>/<annotator>.json` (AlpacaEval's repository has
the same files as `results/<system>/<annotator>/annotations.json`; a list of records with
`instruction`, `dataset`, `generator_1` (the reference), `generator_2` (the system) and
`preference`), `leaderboards/<annotator>_leaderboard.csv` (the published rows, first column
the system) and a LICENSE. A preference lies in [1, 2]: 1 the reference wins, 2 the system,
1.5 a tie (the legacy 0 a tie too); it becomes the score `preference - 1` on a side scale
with midpoint 0.5, shown x100 (a win rate). A null or NaN preference is an error row, kept
and counted; a file with fewer than all instructions is imported as it is.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.corpus.importers.corpus_writer import ImportedRows, write_corpus
from judges.corpus.manifest import CorpusError
from judges.storage.files import read_json

# The release's leaderboard columns -> the statistics `published.py` recomputes.
PUBLISHED_COLUMNS = {
    "win_rate": "mean",
    "standard_error": "standard_error",
    "n_total": "n_total",
    "n_wins": "n_above",
    "n_wins_base": "n_below",
    "n_draws": "n_at",
    "discrete_win_rate": "discrete_mean",
}
_COUNT_COLUMNS = frozenset({"n_total", "n_wins", "n_wins_base", "n_draws"})
# Where AlpacaEval's repository keeps its leaderboards (data_AlpacaEval, data_AlpacaEval_2).
REPOSITORY_LEADERBOARDS = "src/alpaca_eval/leaderboards/data_AlpacaEval*"


@dataclass(frozen=True)
class Imported:
    folder: Path
    systems: tuple[str, ...]
    judges: dict[str, str]  # annotator -> its reference system
    items: int
    judgements: int
    errors: int
    published: int
    unpublished: tuple[str, ...]  # "system under annotator" with no leaderboard row


def item_id(instruction: str) -> str:
    """Stable across imports of any subset of systems: from the instruction's text."""
    return "ae-" + hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:12]


def _score(path: Path, index: int, preference: Any) -> float | None:
    if preference is None or (isinstance(preference, float) and math.isnan(preference)):
        return None
    if isinstance(preference, bool) or not isinstance(preference, int | float):
        raise CorpusError(
            f"{path}: record {index}: preference {preference!r} is not a number in [1, 2]"
        )
    value = 1.5 if preference == 0 else float(preference)
    if not 1 <= value <= 2:
        raise CorpusError(f"{path}: record {index}: preference {value} is outside [1, 2]")
    return value - 1


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    records = read_json(path, CorpusError)
    if not isinstance(records, list):
        raise CorpusError(f"{path}: expected a JSON list of annotation records")
    for index, record in enumerate(records):
        missing = [k for k in ("instruction", "generator_1", "generator_2", "preference")
                   if not isinstance(record, dict) or k not in record]  # fmt: skip
        if missing:
            raise CorpusError(f"{path}: record {index}: no {', '.join(missing)}")
        yield index, record


# How AlpacaEval's README declares its data licence (a badge: "Data License-CC By NC 4.0"),
# and how a DATA_LICENSE file or a provenance note may name it.
_CC_BY_NC_4 = re.compile(r"CC(?:\s|%20|-|_)*BY(?:\s|%20|-|_)*NC(?:\s|%20|-|_)*4\.0", re.I)
DATA_LICENCE_FILES = ("DATA_LICENSE", "README.md", "PROVENANCE.md")


def _licence(source: Path) -> str:
    """The licence of the data imported, as the source states it: a data licence declared
    apart from the code's (AlpacaEval: code Apache-2.0, data CC BY-NC 4.0) wins, since the
    annotations are data; else the LICENSE file's."""
    code = _code_licence(source / "LICENSE")
    for name in DATA_LICENCE_FILES:
        path = source / name
        if path.is_file() and _CC_BY_NC_4.search(
            path.read_text(encoding="utf-8", errors="replace")
        ):
            besides = f"; the code's LICENSE: {code}" if code != "unknown" else ""
            return f"CC-BY-NC-4.0 (the data, as {name} states{besides})"
    return code


def _code_licence(path: Path) -> str:
    if not path.is_file():
        return "unknown"
    text = path.read_text(encoding="utf-8", errors="replace")
    if "Apache License" in text and "Version 2.0" in text:
        return "Apache-2.0"
    if "MIT License" in text or "Permission is hereby granted, free of charge" in text:
        return "MIT"
    return "see LICENSE"


def _published_rows(
    source: Path, annotator: str, systems: set[str], others: list[str]
) -> list[dict[str, Any]]:
    """The leaderboard rows of the imported systems; the names of the rows left out go to
    `others` (a system the release names differently from its annotations folder is there)."""
    path = _leaderboard(source, annotator)
    if not path.is_file():
        return []
    rows = []
    with path.open(encoding="utf-8", newline="") as stream:
        for line, row in enumerate(csv.DictReader(stream), start=2):
            system = row.get("") or row.get("name") or ""
            if system not in systems:
                others.append(system)
                continue
            for column, name in PUBLISHED_COLUMNS.items():
                text = (row.get(column) or "").strip()
                if not text:
                    continue
                value = _number(path, line, column, text)
                rows.append({"judge": annotator, "system": system, "statistic": name,
                             "value": value, "published_as": column})  # fmt: skip
    return rows


def _named_otherwise(system: str, others: list[str]) -> str:
    """A hint when the leaderboard has a row whose name is close to a system without one."""
    close = difflib.get_close_matches(system, others, n=1, cutoff=0.6)
    if not close:
        return ""
    return (
        f" (the leaderboard has a row {close[0]!r}: if it is this system, name its "
        f"annotations folder {close[0]!r} and import again)"
    )


def _number(path: Path, line: int, column: str, text: str) -> float | int:
    """A leaderboard cell as the release wrote it: a count may be written as a float
    ("805.0", as pandas writes a column that once held a NaN), so long as it is whole."""
    try:
        value = float(text)
    except ValueError:
        raise CorpusError(f"{path}:{line}: {column} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise CorpusError(f"{path}:{line}: {column} {text!r} is not a finite number")
    if column not in _COUNT_COLUMNS:
        return value
    if not value.is_integer() or value < 0:
        raise CorpusError(f"{path}:{line}: {column} {text!r} is not a count (a whole number)")
    return int(value)


def annotation_files(source: Path) -> list[tuple[Path, str, str]]:
    """(file, system, annotator) of both layouts: a release's `annotations/<system>/
    <annotator>.json`, and AlpacaEval's repository's `results/<system>/<annotator>/
    annotations.json`."""
    release = [(p, p.parent.name, p.stem) for p in (source / "annotations").glob("*/*.json")]
    repository = [
        (p, p.parent.parent.name, p.parent.name)
        for p in (source / "results").glob("*/*/annotations.json")
    ]
    return sorted(release + repository)


def _leaderboard(source: Path, annotator: str) -> Path:
    """A release's `leaderboards/`, else the repository's own leaderboard folder."""
    name = f"{annotator}_leaderboard.csv"
    for folder in (source / "leaderboards", *sorted(source.glob(REPOSITORY_LEADERBOARDS))):
        if (folder / name).is_file():
            return folder / name
    return source / "leaderboards" / name


def import_alpaca_eval(source: Path, target: Path, name: str, replace: bool = False) -> Imported:
    """Write the corpus folder `target` from the release at `source`."""
    files = annotation_files(source)
    if not files:
        raise CorpusError(
            f"{source}: no annotations/<system>/<annotator>.json nor "
            "results/<system>/<annotator>/annotations.json; point at the release folder or at "
            "a clone of AlpacaEval's repository"
        )
    rows = ImportedRows(
        description="AlpacaEval: systems judged pairwise against a reference output",
        source=source.name,
        licence=_licence(source),
        scale={
            "name": "win rate against the reference (%)", "low": 0, "high": 1,
            "verdict": "side", "midpoint": 0.5, "factor": 100,
        },
        copied=[source / f for f in ("LICENSE", "DATA_LICENSE", "PROVENANCE.md")
                if (source / f).is_file()],
    )  # fmt: skip
    references: dict[str, str] = {}
    systems: dict[str, None] = {}
    for path, system, annotator in files:
        systems[system] = None
        for index, record in _records(path):
            if record["generator_2"] != system:
                raise CorpusError(
                    f"{path}: record {index}: generator_2 {record['generator_2']!r} is not the "
                    f"folder's system {system!r}; the file belongs to another system"
                )
            reference = str(record["generator_1"])
            if references.setdefault(annotator, reference) != reference:
                raise CorpusError(
                    f"{path}: record {index}: reference {reference!r}, but {annotator} judges "
                    f"against {references[annotator]!r} elsewhere; one reference per judge"
                )
            instruction = str(record["instruction"])
            key = item_id(instruction)
            rows.items.setdefault(key, {"id": key, "subset": str(record.get("dataset") or ""),
                                        "inputs": {"instruction": instruction}})  # fmt: skip
            score = _score(path, index, record["preference"])
            row: dict[str, Any] = {"system": system, "item": key, "judge": annotator}
            if score is None:
                spelled = "null" if record["preference"] is None else "NaN"
                row["error"] = f"no preference in the release ({spelled})"
            else:
                row["score"] = score
            rows.judgements.append((f"{path}: record {index}", row))
    rows.judges = {a: {"description": f"AlpacaEval annotator {a}", "reference": r}
                   for a, r in references.items()}  # fmt: skip
    others: dict[str, list[str]] = {}
    for annotator in references:
        others[annotator] = []
        rows.published += _published_rows(source, annotator, set(systems), others[annotator])
    covered = {(row["judge"], row["system"]) for row in rows.published}
    judged = dict.fromkeys((j["judge"], j["system"]) for _, j in rows.judgements)
    unpublished = tuple(
        f"{s} under {a}{_named_otherwise(s, others[a])}" for a, s in judged if (a, s) not in covered
    )
    written = write_corpus(rows, target, name, replace=replace)
    return Imported(
        target, tuple(systems), references, written.items, written.judgements, written.errors,
        written.published, unpublished,
    )  # fmt: skip
