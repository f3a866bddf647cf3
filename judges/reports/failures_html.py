"""The failures section of index.html: what failures.md says, as a table the browser shows.

New failures come first and are marked as such; accepted misses (expectations.toml, run as
strict xfail) follow, with the reason they are accepted. Raw replies sit in a <details>
element, which needs no script to open.
"""

from __future__ import annotations

import json

from judges.core.checks import describe_verdict
from judges.reports.charts import esc
from judges.reports.model import FAILURES_MD, Failure, ModelReport, key_fields
from judges.stats.compare import outcome

__all__ = ["failures_html"]

FAILURES_CSS = """
.failures table{width:100%}
.failures td.text{max-width:420px;overflow-wrap:anywhere}
.failures td.id,.failures .badge{white-space:nowrap}
.new-failure{background:#cf222e;color:#fff;font-weight:700}
.accepted{background:#eaeef2;color:#424a53}
.failures pre{white-space:pre-wrap;overflow-wrap:anywhere;max-width:520px;font-size:12px;
background:#f6f8fa;padding:6px;border-radius:4px;margin:4px 0}
"""


def _rationale(failure: Failure) -> str:
    found = failure.rationale
    if isinstance(found, dict):
        return "; ".join(f"{facet}: {text}" for facet, text in sorted(found.items()))
    return found


def _raw(failure: Failure) -> str:
    raw = failure.raw
    texts = sorted(raw.items()) if isinstance(raw, dict) else [("", raw)] if raw else []
    texts += [
        (f"attempt {a.attempt + 1} {a.error_kind}", a.text or "(empty reply)")
        for a in failure.row.attempts
        if a.error
    ]
    if not texts:
        return ""
    body = "".join(f"<b>{esc(label)}</b><pre>{esc(text)}</pre>" for label, text in texts)
    return f"<details><summary>reply</summary>{body}</details>"


def _row(failure: Failure) -> str:
    row = failure.row
    if failure.accepted_miss is None:
        kind = '<span class="badge new-failure">new failure</span>'
    else:
        kind = (
            '<span class="badge accepted">accepted miss</span><br>'
            f'<span class="caption">{esc(failure.accepted_miss)}</span>'
        )
    if row.status == "ok":
        returned = describe_verdict(row) or json.dumps(key_fields(row.verdict))
    else:
        returned = f"{row.status}: {row.error}"
    category = f"{row.category} (control)" if row.control and row.category != "control" else ""
    cells = [
        f"<b>{esc(row.item_id)}</b>",
        esc(category or row.category),
        esc(outcome(row)),
        kind,
        esc(" and ".join(str(e) for e in row.expect) or "-"),
        esc(returned),
        esc(_rationale(failure)) + _raw(failure),
    ]
    kinds = ("id", "", "", "", "", "text", "text")
    return (
        "<tr>"
        + "".join(
            f'<td class="{kind}">{cell}</td>' if kind else f"<td>{cell}</td>"
            for kind, cell in zip(kinds, cells, strict=True)
        )
        + "</tr>"
    )


def failures_html(m: ModelReport) -> str:
    """A card listing the model's failures, new ones first, or saying there are none."""
    head = (
        f'<h3 id="failures-{esc(m.model)}">Failures: {esc(m.failure_counts())}</h3>'
        f'<p class="caption">Main-run items that failed their expectation or errored. A new '
        "failure fails the run; an accepted miss is listed in expectations.toml and runs as a "
        f'strict xfail. The same in <a href="{FAILURES_MD}">{FAILURES_MD}</a>.</p>'
    )
    if not m.failures:
        return f'<div class="card failures">{head}<p>No failures.</p></div>'
    ordered = [*m.new_failures, *m.accepted_misses]
    header = "".join(
        f"<th>{name}</th>"
        for name in ("Item", "Category", "Outcome", "Kind", "Expected", "Returned", "Rationale")
    )
    body = "".join(_row(failure) for failure in ordered)
    table = f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"
    met = (
        f'<p class="note">Accepted misses the judge now gets right (strict XPASS: delete their '
        f"lines from expectations.toml, or run `python -m judges baseline`): "
        f"{esc(', '.join(m.accepted_met))}</p>"
        if m.accepted_met
        else ""
    )
    return f'<div class="card failures">{head}{met}{table}</div>'
