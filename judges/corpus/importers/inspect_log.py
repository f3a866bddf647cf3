"""Inspect's eval logs (`.eval`, and the older `.json`) read into the corpus format, through
Inspect's own reader (`inspect_ai.log`, the optional extra `pytest-judges[inspect]`).

The mapping, one log per (task, model) run:

    system    the log's model (`eval.model`), or with --system task its task name
    item      the sample's id (prefixed with the task's name when the logs hold several tasks)
    judge     the scorer's name; a scorer whose value is a dict gives one judge per key
              (`scorer/key`)
    run       the epoch, from 0 (epoch 1 is run 0)
    score     Inspect's literals C 1, P 0.5, I and N 0, then every reader's rule
              (`corpus_writer.score_of`): numbers, pass/fail, true/false, yes/no,
              correct/incorrect 1/0
    label     the score named by --labels (default "human"): a reviewer's score, e.g. added
              with Inspect's `edit_score(..., provenance=ProvenanceData(author=...))`

A sample that errored, a scorer missing from a sample, a NaN, a value that is no score (a
list, a string Inspect cannot read) is an error row with its reason, counted per system in
the report, never read as 0 as Inspect's reader would. Samples a log lacks (an eval that
ended early) are counted and named.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.corpus.importers.corpus_writer import ImportedRows, score_of
from judges.corpus.manifest import CorpusError

EXTRA = "pip install 'pytest-judges[inspect]' (or: pip install inspect-ai)"
DEFAULT_LABELS = "human"
SYSTEM_FROM = ("model", "task")
# Inspect's own literals (inspect_ai.scorer: CORRECT, PARTIAL, INCORRECT, NOANSWER).
_LITERALS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
# Fields a corpus never reads: left out of the read, which makes a large log cheap.
_UNREAD = {"events", "messages", "store", "attachments", "events_data", "timelines"}


@dataclass(frozen=True)
class LogHeader:
    path: Path
    model: str
    task: str
    status: str
    expected: int | None  # samples x epochs the eval planned


def header_from_dict(path: Path, log: dict[str, Any]) -> LogHeader:
    """A log's header as Inspect writes it (`EvalLog` without samples, in JSON form)."""
    spec = log.get("eval") or {}
    samples = (spec.get("dataset") or {}).get("samples")
    epochs = (spec.get("config") or {}).get("epochs") or 1
    expected = samples * epochs if isinstance(samples, int) else None
    return LogHeader(path, str(spec.get("model") or ""), str(spec.get("task") or ""),
                     str(log.get("status") or ""), expected)  # fmt: skip


def score_value(value: Any) -> tuple[float | None, str | None]:
    """(score, None), or (None, why it is no score): Inspect's literals, then every reader's
    rule (`score_of`); what Inspect's value_to_float would read as 0 is an error instead."""
    return score_of(value, _LITERALS)


def _text(value: Any) -> Any:
    """A sample's input or target as text: chat messages joined, a list of targets kept."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return "\n".join(str(m.get("text") or m.get("content") or "") for m in value)
    return value


def map_samples(
    logs: Iterable[tuple[LogHeader, Iterable[dict[str, Any]]]],
    source: str,
    labels: str = DEFAULT_LABELS,
    system_from: str = "model",
) -> ImportedRows:
    """The corpus rows of Inspect samples (each in the JSON form Inspect writes)."""
    read = [(header, list(samples)) for header, samples in logs]
    tasks = {header.task for header, _ in read}
    rows = ImportedRows(description=f"Inspect eval logs ({', '.join(sorted(tasks))})",
                        source=source)  # fmt: skip
    for header, samples in read:
        system = header.model if system_from == "model" else header.task
        # The scorers the samples name: a results entry may be a reducer's or a metric's.
        scorers: dict[str, None] = {}
        for sample in samples:
            scorers.update(dict.fromkeys(k for k in sample.get("scores") or {} if k != labels))
        unscored = sum(not (s.get("scores") or {}) for s in samples)
        if not scorers and unscored:
            rows.unmapped[f"samples of {header.path.name} with no score at all"] += unscored
        if header.expected is not None and len(samples) < header.expected:
            rows.unmapped[
                f"samples {header.path.name} does not hold (the eval planned "
                f"{header.expected}, ended {header.status!r})"
            ] += header.expected - len(samples)
        for sample in samples:
            _sample_rows(rows, header, sample, system, scorers, labels, len(tasks) > 1)
    return rows


def _sample_rows(
    rows: ImportedRows,
    header: LogHeader,
    sample: dict[str, Any],
    system: str,
    scorers: dict[str, None],
    labels: str,
    several_tasks: bool,
) -> None:
    sample_id = str(sample.get("id"))
    epoch = sample.get("epoch") or 1
    item = f"{header.task}/{sample_id}" if several_tasks else sample_id
    where = f"{header.path}: sample {sample_id!r} epoch {epoch}"
    rows.item(item, {"input": _text(sample.get("input")), "target": _text(sample.get("target"))})
    output = (sample.get("output") or {}).get("completion")
    if epoch == 1 and isinstance(output, str):
        rows.outputs.setdefault((system, item), {"system": system, "item": item,
                                                 "output": output})  # fmt: skip
    scores = sample.get("scores") or {}
    error = sample.get("error")
    failed = f"the sample errored: {str((error or {}).get('message', error))[:200]}"
    for scorer in scorers:
        found = scores.get(scorer)
        values = (found or {}).get("value") if isinstance(found, dict) else None
        named = (
            {f"{scorer}/{key}": v for key, v in values.items()}
            if isinstance(values, dict)
            else {scorer: values}
        )
        for judge, value in named.items():
            rows.judge(judge, f"Inspect scorer {judge} ({header.task})")
            row: dict[str, Any] = {"system": system, "item": item, "judge": judge}
            if epoch > 1:
                row["run"] = epoch - 1
            if found is None:
                row["error"] = failed if error else "no score from this scorer in the log"
            else:
                score, why = score_value(value)
                if score is None:
                    row["error"] = str(why)
                else:
                    row["score"] = score
            rows.judgements.append((f"{where} scorer {judge!r}", row))
    if labels in scores:
        score, why = score_value((scores[labels] or {}).get("value"))
        if score is None:
            rows.unmapped[f"{labels!r} scores that are no label ({why})"] += 1
        else:
            rows.labels.append((f"{where} score {labels!r}",
                                {"system": system, "item": item, "score": score}))  # fmt: skip


def log_files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    files = sorted(p for p in source.glob("*") if p.suffix in (".eval", ".json") and
                   not p.name.startswith((".", "logs.json")))  # fmt: skip
    if not files:
        raise CorpusError(
            f"{source}: no Inspect log (*.eval, *.json) here; give a log file or its log folder"
        )
    return files


def _read(path: Path) -> tuple[LogHeader, Iterator[dict[str, Any]]]:
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ImportError:
        raise CorpusError(f"reading Inspect logs needs inspect_ai: {EXTRA}") from None
    try:
        log = read_eval_log(str(path), header_only=True)
        header = header_from_dict(path, log.model_dump(mode="json", exclude={"samples"}))
        samples = [
            s.model_dump(mode="json")
            for s in read_eval_log_samples(
                str(path), all_samples_required=False, exclude_fields=_UNREAD
            )
        ]
    except CorpusError:
        raise
    except Exception as problem:  # a cut zip, a file that is no log: Inspect's own error
        raise CorpusError(
            f"{path}: not a readable Inspect log ({type(problem).__name__}: "
            f"{' '.join(str(problem).split())[:300]}); a log cut short (an interrupted copy) "
            "or not written by Inspect: copy it again, or leave it out of the folder"
        ) from None
    return header, iter(samples)


def read_inspect(
    source: Path, labels: str = DEFAULT_LABELS, system_from: str = "model"
) -> ImportedRows:
    """Every log at `source` (a log file or a folder of them)."""
    if not source.exists():
        raise CorpusError(f"{source}: no such file or folder; give an Inspect log or log folder")
    return map_samples((_read(p) for p in log_files(source)), source.name, labels, system_from)
