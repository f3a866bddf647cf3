"""Real rows a team judged (JSONL or CSV), read as a judge's inputs: where candidates start.

Each row holds the judged inputs (the question, the output, ...), optionally an id and a
label. `--map COLUMN=INPUT` names a column whose name differs from the judge's input. Every
problem names the file, the line and the fix: a row that lacks an input, a value the
judge's inputs model refuses, an id given twice, a key given twice in one JSON object, a
file that is not UTF-8. Columns that are neither inputs, id nor label are named once, not
dropped in silence.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judges.core.spec import JudgeSpec
from judges.storage.files import json_lines

# A CSV cell may hold a long answer; Python's csv refuses cells over 128 KiB by default.
CSV_CELL_LIMIT = 16 * 1024 * 1024
ID_LIMIT = 200  # characters of a row id: it names the row in candidates and messages


class SourceRowError(ValueError):
    """A source row cannot be used; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class SourceRow:
    file: str
    line: int
    id: str
    inputs: dict[str, Any]
    label: Any = None


@dataclass(frozen=True)
class SourceRows:
    rows: tuple[SourceRow, ...]
    ignored_columns: tuple[str, ...]  # neither an input, the id nor the label


def input_names(spec: JudgeSpec) -> list[str]:
    """The judge's input names, in the order its inputs model (or callable) declares them."""
    if spec.team is not None:
        taken = [
            spec.team.arguments.get(name, name)
            for name, parameter in spec.team.signature.parameters.items()
            if parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
        ]
        return list(dict.fromkeys(taken))
    return list(spec.module.Inputs.model_fields)


def parse_mapping(pairs: Sequence[str], inputs: Sequence[str]) -> dict[str, str]:
    """`--map COLUMN=INPUT` pairs as {column: input}; an unknown input is named."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        column, sep, name = pair.partition("=")
        if not sep or not column or not name:
            raise SourceRowError(f"--map {pair!r}: expected COLUMN=INPUT, e.g. output=reply")
        if name not in inputs:
            raise SourceRowError(
                f"--map {pair!r}: {name!r} is not an input of the judge ({', '.join(inputs)})"
            )
        mapping[column] = name
    return mapping


def _records(path: Path) -> list[tuple[int, Any]]:
    if path.suffix.lower() == ".csv":
        return _csv_records(path)
    if path.suffix.lower() not in (".jsonl", ".json"):
        raise SourceRowError(f"{path}: rows are read from a .jsonl or a .csv file")
    return list(json_lines(path, SourceRowError, "; each line one JSON object (a row)"))


def _csv_records(path: Path) -> list[tuple[int, Any]]:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as problem:
        line = data.count(b"\n", 0, problem.start) + 1
        raise SourceRowError(f"{path}:{line}: not UTF-8; save the file as UTF-8") from None
    csv.field_size_limit(max(csv.field_size_limit(), CSV_CELL_LIMIT))
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise SourceRowError(
            f"{path}:1: the file is empty; the first line names the columns"
        ) from None
    doubled = sorted({name for name in header if header.count(name) > 1})
    if doubled:
        raise SourceRowError(
            f"{path}:1: the columns {doubled} appear twice in the header; a row would keep "
            "only one of them: rename or remove the other"
        )
    records: list[tuple[int, Any]] = []
    start = 2
    try:
        for cells in reader:
            if cells and any(cell.strip() for cell in cells):
                if len(cells) != len(header):
                    raise SourceRowError(
                        f"{path}:{start}: {len(cells)} cells for {len(header)} columns; quote "
                        'a cell that holds a comma or a line break ("...")'
                    )
                records.append((start, dict(zip(header, cells, strict=True))))
            start = reader.line_num + 1
    except csv.Error as error:
        raise SourceRowError(f"{path}:{reader.line_num}: not readable CSV ({error})") from None
    return records


def read_rows(
    path: Path,
    spec: JudgeSpec,
    mapping: Mapping[str, str] | None = None,
    id_column: str = "id",
    label_column: str = "label",
) -> SourceRows:
    """Every row of `path` as the judge's inputs, checked by its inputs model."""
    if not path.is_file():
        raise SourceRowError(f"{path}: no such file (--from names the rows to plant from)")
    mapping = dict(mapping or {})
    names = input_names(spec)
    rows: list[SourceRow] = []
    seen: dict[str, int] = {}
    ignored: dict[str, None] = {}
    for line, record in _records(path):
        if not isinstance(record, dict):
            raise SourceRowError(
                f"{path}:{line}: a row is a JSON object, got {type(record).__name__}"
            )
        inputs: dict[str, Any] = {}
        for column, value in record.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise SourceRowError(
                    f"{path}:{line}: the column {column!r} holds {value}, which is no number "
                    "a judge can be given: write the value, or leave the column out"
                )
            name = mapping.get(column, column)
            if name in names:
                if name in inputs:
                    raise SourceRowError(
                        f"{path}:{line}: the input {name!r} is given twice (by {column!r} "
                        "and by a column mapped to it); map only one of them"
                    )
                inputs[name] = value
            elif column not in (id_column, label_column):
                ignored[column] = None
        missing = [name for name in names if name not in inputs]
        if missing:
            raise SourceRowError(
                f"{path}:{line}: no {', '.join(map(repr, missing))} for the judge's inputs; the "
                f"row has {sorted(record)}: map a column with --map COLUMN={missing[0]}"
            )
        try:
            spec.parse_inputs(inputs)
        except (ValidationError, ValueError) as error:
            first = str(error).splitlines()
            raise SourceRowError(
                f"{path}:{line}: the judge's inputs refuse this row: {' '.join(first[:3])}"
            ) from None
        row_id = str(record.get(id_column, f"line-{line}"))
        if not row_id.strip() or len(row_id) > ID_LIMIT:
            raise SourceRowError(
                f"{path}:{line}: the {id_column!r} must be 1 to {ID_LIMIT} characters"
            )
        if row_id in seen:
            raise SourceRowError(
                f"{path}:{line}: the id {row_id!r} is already the id of line {seen[row_id]}; "
                "each row needs its own id (or leave the id column out: rows are then named "
                "by their line)"
            )
        seen[row_id] = line
        rows.append(SourceRow(str(path), line, row_id, inputs, record.get(label_column)))
    if not rows:
        raise SourceRowError(f"{path}: no rows; one JSON object (or CSV row) per line")
    return SourceRows(tuple(rows), tuple(ignored))
