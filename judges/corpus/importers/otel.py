"""OpenTelemetry GenAI evaluation events, as OTLP JSON, read into the corpus format.

The file is OTLP JSON (the documented encoding of an `ExportLogsServiceRequest`): one request
per line, as a collector's file exporter writes it, or one request in a `.json` file. Each
log record whose event name is `gen_ai.evaluation.result` (the record's `eventName`, or its
`event.name` attribute) is one evaluation, per the GenAI semantic conventions:

    system    the attribute --map system= names (default `service.name`), looked up on the
              record, then on its resource
    item      the attribute --map item= names (default `gen_ai.response.id`); the systems
              share an item only when they share this value, so give the attribute that
              names the test case (e.g. --map item=app.question)
    judge     `gen_ai.evaluation.name`
    score     `gen_ai.evaluation.score.value` (a double, an int, or a number as a string);
              without one, `gen_ai.evaluation.score.label`: the team's stated score for it
              (--label-score LABEL=SCORE, matched as written), else every reader's words
              (`corpus_writer.score_of`: pass/fail, true/false, yes/no, correct/incorrect)
    label     the evaluations named --labels (default "human")

An evaluation with `error.type`, a NaN, or a label with no stated score is an error row with
its reason (naming --label-score); a record that is not an evaluation event is counted and named.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from judges.corpus.importers.corpus_writer import ImportedRows, score_of
from judges.corpus.manifest import CorpusError
from judges.storage.files import json_lines, read_json

EVENT = "gen_ai.evaluation.result"
NAME, VALUE, LABEL = (f"gen_ai.evaluation.{k}" for k in ("name", "score.value", "score.label"))
EXPLANATION = "gen_ai.evaluation.explanation"
DEFAULT_SYSTEM, DEFAULT_ITEM, DEFAULT_LABELS = "service.name", "gen_ai.response.id", "human"


def any_value(value: Any) -> Any:
    """An OTLP AnyValue as a Python value (int64 as JSON strings, NaN as "NaN")."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])  # "NaN", "Infinity" read as such
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values"))
    return None


def attributes(pairs: Any) -> dict[str, Any]:
    return {
        str(p["key"]): any_value(p.get("value"))
        for p in pairs or []
        if isinstance(p, dict) and "key" in p
    }


def _requests(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if path.suffix.lower() == ".json":
        data = read_json(path, CorpusError)
        for request in data if isinstance(data, list) else [data]:
            yield 1, request
        return
    yield from json_lines(path, CorpusError)


def _score(
    record: dict[str, Any], label_scores: Mapping[str, float]
) -> tuple[float | None, str | None]:
    """The evaluation's score value; without one, its label, by every reader's rule and the
    team's stated labels (--label-score LABEL=SCORE)."""
    if record.get("error.type"):
        return None, f"error.type {record['error.type']}"
    if record.get(VALUE) is not None:
        return score_of(record[VALUE])
    if record.get(LABEL) is not None:
        score, why = score_of(record[LABEL], label_scores)
        if score is None:
            stated = shlex.quote(f"{str(record[LABEL]).strip()}=SCORE")
            return None, f"label: {why}; state its score with --label-score {stated}"
        return score, None
    return None, "no score value nor label in the log"


def read_otel(
    path: Path,
    system_attribute: str = DEFAULT_SYSTEM,
    item_attribute: str = DEFAULT_ITEM,
    labels: str = DEFAULT_LABELS,
    label_scores: Mapping[str, float] | None = None,
) -> ImportedRows:
    """The evaluation events of one OTLP JSON file; `label_scores`: the team's stated score
    of each label the shared words do not cover (`--label-score good=1`)."""
    if not path.is_file():
        raise CorpusError(f"{path}: no such file; give the OTLP JSON file the exporter wrote")
    rows = ImportedRows(description=f"GenAI evaluation events from {path.name}",
                        source=path.name)  # fmt: skip
    for line, request in _requests(path):
        if not isinstance(request, dict) or "resourceLogs" not in request:
            raise CorpusError(
                f"{path}:{line}: no resourceLogs; not OTLP JSON logs (an "
                "ExportLogsServiceRequest per line, as a collector's file exporter writes)"
            )
        for resource_logs in request["resourceLogs"] or []:
            resource = attributes((resource_logs.get("resource") or {}).get("attributes"))
            for scope_logs in resource_logs.get("scopeLogs") or []:
                for index, raw in enumerate(scope_logs.get("logRecords") or []):
                    record = attributes(raw.get("attributes"))
                    name = raw.get("eventName") or record.get("event.name")
                    if name != EVENT:
                        rows.unmapped[f"log records that are no {EVENT} event"] += 1
                        continue
                    where = f"{path}:{line}: log record {index}"
                    _evaluation(rows, where, {**resource, **record}, system_attribute,
                                item_attribute, labels, label_scores or {})  # fmt: skip
    return rows


def _evaluation(
    rows: ImportedRows,
    where: str,
    record: dict[str, Any],
    system_attribute: str,
    item_attribute: str,
    labels: str,
    label_scores: Mapping[str, float],
) -> None:
    for attribute in (system_attribute, item_attribute, NAME):
        if record.get(attribute) in (None, ""):
            rows.unmapped[f"evaluation events without {attribute}"] += 1
            return
    system, item, judge = (str(record[a]) for a in (system_attribute, item_attribute, NAME))
    rows.item(item, {item_attribute: item})
    score, why = _score(record, label_scores)
    if judge == labels:
        if score is None:
            rows.unmapped[f"{labels!r} evaluations with no score ({why})"] += 1
        else:
            rows.labels.append((where, {"system": system, "item": item, "score": score}))
        return
    rows.judge(judge, f"gen_ai.evaluation.result {judge}")
    row: dict[str, Any] = {"system": system, "item": item, "judge": judge}
    if score is None:
        row["error"] = str(why)
    else:
        row["score"] = score
    rows.judgements.append((f"{where} {judge!r}", row))
