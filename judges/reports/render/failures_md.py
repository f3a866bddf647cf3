"""failures.md: every main-run item that failed its expectation or errored, new ones first,
with what was expected and returned, the rationale and the raw reply."""

from __future__ import annotations

import json

from judges.core.checks import describe_verdict
from judges.core.quoting import md_prose, md_text
from judges.core.results import Expectation, outcome
from judges.reports.model.data import FolderReport
from judges.sets.folder import EXPECTATIONS_FILE
from judges.verdicts.verdict import Failure, key_fields

__all__ = ["render_failures_md"]


def _fence(text: str, language: str = "") -> list[str]:
    """A fenced block longer than any backtick run inside, so the text cannot close it."""
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence]


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for char in line:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


def _expectation(e: Expectation) -> str:
    """`field op value`, the item's field and value escaped (the op is the harness's own)."""
    return f"{md_text(e.field)} {e.op} {md_text(json.dumps(e.value, ensure_ascii=False))}"


def _failure_md(f: Failure) -> list[str]:
    row = f.row
    kind = f"{row.category}, control" if row.control and row.category != "control" else row.category
    label = "new failure" if f.accepted_miss is None else "accepted miss"
    lines = [f"### {row.item_id} ({kind}): {outcome(row)}, {label}", ""]
    if f.accepted_miss is not None:
        # The harness's sentence (`baseline --accept` writes it), which a teammate may edit.
        lines += [f"**Accepted miss** ({EXPECTATIONS_FILE}): {md_prose(f.accepted_miss)}", ""]
    lines.append(f"- Expected: {' and '.join(_expectation(e) for e in row.expect) or '-'}")
    if row.status == "ok":
        returned = describe_verdict(row) or json.dumps(key_fields(row.verdict), ensure_ascii=False)
        lines.append(f"- Returned: {md_text(returned)}")
    else:
        lines.append(f"- Status: {row.status}: {md_text(str(row.error))}")
    rationale = f.rationale
    if isinstance(rationale, dict):
        for facet, text in sorted(rationale.items()):
            quoted = md_text(json.dumps(text, ensure_ascii=False))
            lines.append(f"- Rationale ({md_text(facet)}): {quoted}")
    elif rationale:
        lines.append(f"- Rationale: {md_text(json.dumps(rationale, ensure_ascii=False))}")
    raw = f.raw
    if isinstance(raw, dict):
        for facet, text in sorted(raw.items()):
            lines += ["", f"Raw reply ({md_text(facet)}):", "", *_fence(text, "json")]
    elif raw is not None:
        lines += ["", "Raw reply:", "", *_fence(raw, "json")]
    for attempt in row.attempts:
        if attempt.error:
            facet = f" {attempt.facet}" if attempt.facet else ""
            lines += [
                "",
                f"Attempt {attempt.attempt + 1}{md_text(facet)}: {attempt.error_kind}: "
                f"{md_text(attempt.error)}",
                "",
                *_fence(attempt.text or "(empty reply)", "json"),
            ]
    return [*lines, ""]


def render_failures_md(report: FolderReport) -> str:
    """failures.md: every main-run item that failed its expectation or errored."""
    new = sum(len(m.new_failures) for m in report.models)
    accepted = sum(len(m.accepted_misses) for m in report.models)
    lines = [
        f"# Failures: {report.judge}, prompt {report.version}",
        "",
        f"{new} new failure(s) and {accepted} accepted miss(es): main-run judgements that "
        "failed their expectation or errored. A new failure fails the run; an accepted miss is "
        f"listed in the planted set's {EXPECTATIONS_FILE} and runs as a strict xfail. New "
        "failures come first.",
        "",
    ]
    for m in report.models:
        lines += [f"## Model {md_text(m.model)}", "", f"{m.failure_counts()}.", ""]
        if not m.failures:
            lines += ["No failures.", ""]
        for failure in (*m.new_failures, *m.accepted_misses):
            lines += _failure_md(failure)
    return "\n".join(lines)
