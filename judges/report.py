"""Session reports: result rows merged into `reports/<judge>/<version>/`, terminal lines.

Written once per session by the controlling process. Rows of this session replace rows
with the same key; rows of items not run this time are kept, so a `-k` run never erases
what an earlier full run wrote.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from judges.naming import report_dir
from judges.results import JudgementRow, read_jsonl, write_jsonl

if TYPE_CHECKING:
    from judges.session import JudgesSession

RESULTS_FILE = "results.jsonl"


def merge_rows(existing: list[JudgementRow], new: list[JudgementRow]) -> list[JudgementRow]:
    merged = {row.key: row for row in existing}
    merged.update({row.key: row for row in new})
    return sorted(merged.values(), key=lambda r: r.key)


def write_session_reports(session: JudgesSession) -> list[Path]:
    """Merge this session's rows into each (judge, version) results file."""
    by_folder: dict[tuple[str, str], list[JudgementRow]] = defaultdict(list)
    for row in session.rows:
        by_folder[(row.judge, row.prompt_version)].append(row)
    written = []
    for (judge, version), rows in sorted(by_folder.items()):
        path = report_dir(session.settings.reports, judge, version) / RESULTS_FILE
        existing = read_jsonl(path) if path.is_file() else []
        write_jsonl(path, merge_rows(existing, rows))
        written.append(path)
    return written


def summary_lines(session: JudgesSession) -> list[str]:
    lines = []
    statuses: dict[str, int] = defaultdict(int)
    for row in session.rows:
        statuses[row.status] += 1
    counts = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    lines.append(f"{len(session.rows)} judgements: {counts}")
    for model, usage in session.usage_by_model().items():
        lines.append(
            f"{model}: {usage.calls} calls, {usage.input_tokens} input + "
            f"{usage.output_tokens} output tokens, ${usage.cost_usd:.4f}"
        )
    live = session.ledger.totals()
    for model, usage in live.items():
        lines.append(
            f"live spend {model}: {usage.calls} calls, {usage.input_tokens} + "
            f"{usage.output_tokens} tokens, ${usage.cost_usd:.4f}"
        )
    if session.settings.cost_cap_usd is not None:
        lines.append(
            f"cost cap ${session.settings.cost_cap_usd:.4f}: spent "
            f"${session.ledger.spent_usd():.4f}"
        )
    for path in getattr(session, "written", []):
        lines.append(f"wrote {path}")
    return lines
