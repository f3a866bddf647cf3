"""Any JSONL or CSV of judgements, one row per judgement, read by a stated column mapping.

`--map FIELD=COLUMN` names the column each corpus field comes from (by default the column of
the field's own name; a JSONL column may be a dotted path into nested objects, e.g.
`grading.score`):

    system   the system judged                      required
    item     the item's id                           required
    judge    the judge (or --judge-name for one)     required
    score    the judge's score                       empty or null: an error row, kept
    run      a repeat's number, from 0               optional (default 0)
    flagged  the judge's own flag, true or false     optional
    label    a human's score for the same output     optional: labels.jsonl
    output   what the system answered                optional: outputs.jsonl
    error    why the judge gave no score             optional
    input    a column of the item's inputs           optional, repeatable

A score is read by every reader's rule (`corpus_writer.score_of`): a number, or pass/fail,
true/false, yes/no, correct/incorrect (1/0); empty, null or NaN is an error row. A column
no field maps is counted and named in the summary, never read silently.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judges.corpus.importers.corpus_writer import ImportedRows, no_value, score_of
from judges.corpus.manifest import CorpusError
from judges.storage.files import json_lines

FIELDS = ("system", "item", "judge", "score", "run", "flagged", "label", "output", "error",
          "input")  # fmt: skip
REQUIRED = ("system", "item", "judge")


def parse_mapping(pairs: list[str]) -> dict[str, list[str]]:
    """`FIELD=COLUMN` pairs -> field -> columns (only `input` takes several)."""
    mapping: dict[str, list[str]] = {}
    for pair in pairs:
        field, sep, column = pair.partition("=")
        if not sep or not column or field not in FIELDS:
            raise CorpusError(
                f"--map {pair!r}: give FIELD=COLUMN with FIELD one of {', '.join(FIELDS)}"
            )
        if field in mapping and field != "input":
            raise CorpusError(f"--map {field}= is given twice; map each field to one column")
        mapping.setdefault(field, []).append(column)
    for field in FIELDS[:-1]:
        mapping.setdefault(field, [field])
    mapping.setdefault("input", [])
    return mapping


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if path.suffix.lower() == ".csv":
        yield from _csv_rows(path)
        return
    for line, value in json_lines(path, CorpusError):
        if not isinstance(value, dict):
            raise CorpusError(f"{path}:{line}: a row is a JSON object, not {type(value).__name__}")
        yield line, value


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as problem:
        raise CorpusError(f"{path}: not UTF-8 ({problem}); save the file as UTF-8") from None
    # io's lines end at \n or \r only: a name holding U+2028 stays in its cell.
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        raise CorpusError(f"{path}: empty; a CSV of judgements starts with a header row")
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise CorpusError(
            f"{path}:1: the column {twice[0]!r} is named twice; a CSV reader would keep one "
            "silently, so rename one of them"
        )
    for cells in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise CorpusError(
                f"{path}:{line}: {len(cells)} cells for {len(header)} columns; a cut or "
                "unquoted row (quote a cell holding a comma or a line break)"
            )
        yield line, {c: (v if v != "" else None) for c, v in zip(header, cells, strict=True)}


def _get(row: dict[str, Any], column: str) -> tuple[bool, Any]:
    if column in row:
        return True, row[column]
    value: Any = row
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def number(value: Any, where: str, what: str) -> tuple[float | None, str | None]:
    """A score or label by every reader's rule: (score, None), or (None, why) when the log
    gives none (empty, null, NaN); a value that is given but is no score is refused."""
    score, why = score_of(value)
    if score is None and not no_value(value):
        raise CorpusError(
            f"{where}: {what} {why}; map the column that holds the score (--map {what}=COLUMN)"
        )
    return score, why


def _flag(value: Any, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    score, _ = score_of(value)  # the scores' words: a flag is a 1 or a 0
    if score in (0.0, 1.0):
        return bool(score)
    raise CorpusError(f"{where}: flagged {value!r} is not true or false")


def _run(value: Any, where: str) -> int:
    if value is None:
        return 0
    try:
        run = int(str(value).strip())
    except ValueError:
        run = -1
    if run < 0 or isinstance(value, float | bool):
        raise CorpusError(f"{where}: run {value!r} is not a repeat's number (0, 1, ...)")
    return run


def read_tabular(
    path: Path, mapping: dict[str, list[str]], judge_name: str | None = None
) -> ImportedRows:
    """The judgements (and labels, outputs) of one JSONL or CSV file."""
    if not path.is_file():
        raise CorpusError(f"{path}: no such file; give a .jsonl or .csv of judgements")
    rows = ImportedRows(description=f"judgements imported from {path.name}", source=path.name)
    used = {c for columns in mapping.values() for c in columns}
    for line, row in _rows(path):
        where = f"{path}:{line}"
        values: dict[str, Any] = {}
        for field in FIELDS[:-1]:
            found, value = _get(row, mapping[field][0])
            values[field] = value if found else None
        if judge_name is not None and values["judge"] is None:
            values["judge"] = judge_name
        for field in REQUIRED:
            if values[field] is None or str(values[field]).strip() == "":
                hint = " or --judge-name NAME" if field == "judge" else ""
                raise CorpusError(
                    f"{where}: no {field} (column {mapping[field][0]!r}); map the column "
                    f"that holds it with --map {field}=COLUMN{hint}"
                )
        system, item, judge = (str(values[f]) for f in REQUIRED)
        for column in row:
            if column not in used and not any(c.startswith(f"{column}.") for c in used):
                rows.unmapped[f"values of the column {column!r} (no --map names it)"] += 1
        rows.item(item, {c: _get(row, c)[1] for c in mapping["input"] if _get(row, c)[0]})
        rows.judge(judge, f"{judge}, imported from {path.name}")
        judgement: dict[str, Any] = {"system": system, "item": item, "judge": judge}
        run = _run(values["run"], where)
        if run:
            judgement["run"] = run
        score, why = number(values["score"], where, "score")
        if score is None:
            judgement["error"] = str(values["error"] or why)
        else:
            judgement["score"] = score
        flagged = _flag(values["flagged"], where)
        if flagged is not None:
            judgement["flagged"] = flagged
        rows.judgements.append((where, judgement))
        label, why = number(values["label"], where, "label")
        if label is not None:
            rows.labels.append((where, {"system": system, "item": item, "score": label}))
        elif values["label"] is not None:
            rows.unmapped[f"labels with no human score ({why})"] += 1
        if values["output"] is not None and run == 0:
            rows.outputs.setdefault((system, item), {"system": system, "item": item,
                                                      "output": str(values["output"])})  # fmt: skip
    return rows
