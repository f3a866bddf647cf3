"""MLflow's trace assessments read into the corpus format, through MLflow's own client (the
optional extra `pytest-judges[mlflow]`).

A trace is one call of a team's application; its assessments are feedback on it, each with
a name and a source: `LLM_JUDGE` or `CODE` (a judge), `HUMAN` (a reviewer). A judge's and a
human's assessment of the same name are how MLflow aligns them; here the human's becomes the
label of that output. The mapping:

    system    the run the trace was logged in (its name); a trace outside any run is
              counted and named
    item      the trace's request (its inputs): the same request sent to two systems is
              one item
    judge     each LLM_JUDGE or CODE assessment's name (with its source id when one name
              has several)
    run       a judge's second judgement of one output (a second assessment of the trace,
              or a second trace of the same request in the same run) is run 1, in time order
    score     the feedback's value, by every reader's rule (`corpus_writer.score_of`): a
              number, pass/fail, true/false, yes/no, correct/incorrect (1/0)
    label     the HUMAN feedback of the name --labels gives (by default the one name humans
              used)

A feedback with an error, or with a value that is no score, is an error row with its reason;
an assessment an override superseded, and an expectation (a ground-truth value, no score),
are counted and named.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from judges.corpus.importers.corpus_writer import ImportedRows, score_of
from judges.corpus.manifest import CorpusError

EXTRA = "pip install 'pytest-judges[mlflow]' (or: pip install mlflow)"
JUDGE_SOURCES = ("LLM_JUDGE", "CODE")
HUMAN = "HUMAN"


def tracking_uri(source: Path) -> str:
    """A tracking URI from what a user points at: a database file, a file store folder, or
    a URI given as it is."""
    text = str(source)
    if "://" in text or text.startswith(("databricks", "file:")):
        return text
    if source.suffix == ".db":
        return f"sqlite:///{source.resolve()}"
    return source.resolve().as_uri()


def feedback_value(value: Any) -> tuple[float | None, str | None]:
    """(score, None) or (None, why it is no score), by every reader's rule."""
    return score_of(value)


def item_of(request: Any) -> tuple[str, dict[str, Any]]:
    """An item id from the request's content, and its inputs."""
    text = request if isinstance(request, str) else json.dumps(request, sort_keys=True)
    try:
        inputs = json.loads(text) if isinstance(text, str) else {}
    except json.JSONDecodeError:
        inputs = {"request": text}
    if not isinstance(inputs, dict):
        inputs = {"request": inputs}
    return "req-" + hashlib.sha256(str(text).encode("utf-8")).hexdigest()[:12], inputs


def map_traces(traces: list[dict[str, Any]], source: str, labels: str | None) -> ImportedRows:
    """Traces in a neutral form: {"trace", "system", "request", "assessments": [{"name",
    "source_type", "source_id", "value", "error", "valid", "expectation", "rationale"}]}."""
    rows = ImportedRows(description=f"MLflow trace assessments ({source})", source=source)
    human_names = Counter(a["name"] for t in traces for a in t["assessments"]
                          if a["source_type"] == HUMAN and not a["expectation"])  # fmt: skip
    if labels is None and len(human_names) > 1:
        raise CorpusError(
            f"{source}: human assessments under {len(human_names)} names "
            f"({', '.join(sorted(human_names))}); choose the one that is the label with --labels"
        )
    label_name = labels if labels is not None else next(iter(human_names), None)
    sources: dict[str, set[str]] = defaultdict(set)
    for trace in traces:
        for a in trace["assessments"]:
            if a["source_type"] in JUDGE_SOURCES and not a["expectation"]:
                sources[a["name"]].add(a["source_id"] or "")
    # Runs count a judge's judgements of one output: several assessments of one trace, and
    # several traces of one request in one run (a repeated evaluation), in time order.
    repeats: Counter[tuple[str, str, str]] = Counter()
    seen: dict[str, int] = {}
    for index, trace in enumerate(traces):
        # One trace read twice would pass for a second run of the judge: refused instead.
        if trace["trace"] in seen:
            raise CorpusError(
                f"{source}: trace {trace['trace']} is read twice (traces {seen[trace['trace']]} "
                f"and {index} of the search); a store listed twice, or a trace copied into a "
                "second experiment: import one experiment with --experiment"
            )
        seen[trace["trace"]] = index
    for trace in sorted(traces, key=lambda t: (t.get("time") or 0, t["trace"])):
        where = f"{source}: trace {trace['trace']}"
        if trace["system"] is None:
            rows.unmapped["traces logged outside any run (no system to file them under)"] += 1
            continue
        system = str(trace["system"])
        item, inputs = item_of(trace["request"])
        rows.item(item, inputs)
        for a in trace["assessments"]:
            if a["valid"] is False:
                rows.unmapped["assessments an override superseded"] += 1
                continue
            if a["expectation"]:
                rows.unmapped[f"expectations {a['name']!r} (ground-truth values, no score)"] += 1
                continue
            score, why = feedback_value(a["value"])
            if a["source_type"] == HUMAN:
                if a["name"] != label_name:
                    rows.unmapped[f"human assessments {a['name']!r} (--labels names another)"] += 1
                elif score is None or a["error"]:
                    rows.unmapped[f"human assessments with no score ({a['error'] or why})"] += 1
                else:
                    label = {"system": system, "item": item, "score": score}
                    rows.labels.append((f"{where} {a['name']!r}", label))
                continue
            if a["source_type"] not in JUDGE_SOURCES:
                rows.unmapped[f"assessments from a {a['source_type']} source"] += 1
                continue
            judge = a["name"]
            if len(sources[judge]) > 1:
                judge = f"{judge} ({a['source_id']})"
            rows.judge(judge, f"MLflow {a['source_type']} assessment {judge}")
            row: dict[str, Any] = {"system": system, "item": item, "judge": judge}
            if repeats[system, item, judge]:
                row["run"] = repeats[system, item, judge]
            repeats[system, item, judge] += 1
            if a["error"]:
                row["error"] = " ".join(str(a["error"]).split())[:300]
            elif score is None:
                row["error"] = str(why)
            else:
                row["score"] = score
            rows.judgements.append((f"{where} assessment {judge!r}", row))
    return rows


def _neutral(trace: Any, run_names: dict[str, str | None]) -> dict[str, Any]:
    info = trace.info
    run = (info.request_metadata or {}).get("mlflow.sourceRun")
    assessments = []
    for a in info.assessments or []:
        feedback = getattr(a, "feedback", None)
        error = getattr(feedback, "error", None) if feedback is not None else None
        assessments.append({
            "name": a.name, "source_type": str(a.source.source_type),
            "source_id": a.source.source_id, "expectation": getattr(a, "expectation", None)
            is not None, "value": getattr(feedback, "value", None),
            "error": getattr(error, "error_message", None) or (str(error) if error else None),
            "valid": getattr(a, "valid", None), "rationale": getattr(a, "rationale", None),
        })  # fmt: skip
    request = trace.data.request if trace.data is not None else info.request_preview
    return {"trace": info.trace_id, "system": run_names.get(run) if run else None,
            "request": request, "assessments": assessments,
            "time": getattr(info, "request_time", None)}  # fmt: skip


def read_mlflow(
    source: Path, experiment: str | None = None, labels: str | None = None
) -> ImportedRows:
    """Every trace of the experiment (or of every experiment) at the tracking store `source`."""
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise CorpusError(f"reading MLflow traces needs mlflow: {EXTRA}") from None
    uri = tracking_uri(source)
    try:
        client = MlflowClient(tracking_uri=uri)
        found = client.search_experiments()
        chosen = [e for e in found if experiment is None or e.name == experiment]
        if not chosen:
            names = ", ".join(sorted(e.name for e in found)) or "none"
            raise CorpusError(f"{uri}: no experiment {experiment!r} (experiments: {names})")
        traces: list[Any] = []
        for e in chosen:
            token = None
            while True:
                page = client.search_traces(locations=[e.experiment_id], page_token=token)
                traces += list(page)
                token = page.token
                if not token:
                    break
        run_ids = {(t.info.request_metadata or {}).get("mlflow.sourceRun") for t in traces}
        run_names = {r: client.get_run(r).info.run_name for r in run_ids if r}
    except CorpusError:
        raise
    except Exception as problem:  # MLflow's own error: an unreadable store, a bad URI
        raise CorpusError(
            f"{uri}: MLflow could not read it ({type(problem).__name__}: "
            f"{' '.join(str(problem).split())[:300]}); point at the tracking store (mlflow.db, "
            "mlruns/ or a tracking URI)"
        ) from None
    return map_traces([_neutral(t, run_names) for t in traces], source.name or uri, labels)
