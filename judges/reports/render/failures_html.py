"""The failures section of index.html: what failures.md says, as a table the browser shows.

New failures come first and are marked as such; accepted misses (expectations.toml, run as
strict xfail) follow, with the reason they are accepted. Raw replies sit in a <details>
element, which needs no script to open.
"""

from __future__ import annotations

import json

from judges.core.checks import describe_verdict
from judges.core.results import outcome
from judges.reports.model.data import FAILURES_MD, ModelReport
from judges.reports.render.charts import esc
from judges.sets.folder import EXPECTATIONS_FILE
from judges.verdicts.verdict import Failure, key_fields

__all__ = ["failures_html"]

FAILURES_CSS = """
.failures table{width:100%}
.failures td.text{overflow-wrap:break-word;word-break:break-word}
.failures td.id,.failures .badge{white-space:nowrap}
.failures tr.facts td{border-bottom:none;padding-top:10px}
.failures tr.detail td{color:#57606a;font-size:13px;padding:0 0 10px 0}
.new-failure{background:#cf222e;color:#fff;font-weight:700}
.accepted{background:#eaeef2;color:#424a53}
.failures pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;
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


def _detail(failure: Failure) -> str:
    """The second line of a failure: why it is accepted, the rationale, the reply."""
    parts = []
    if failure.accepted_miss is not None:
        parts.append(f"<b>Accepted ({EXPECTATIONS_FILE}):</b> {esc(failure.accepted_miss)}")
    if rationale := _rationale(failure):
        parts.append(f"<b>Rationale:</b> {esc(rationale)}")
    return "<br>".join(parts) + _raw(failure)


def _row(failure: Failure) -> str:
    """Two table rows: the facts in columns, then the detail across the table."""
    row = failure.row
    if failure.accepted_miss is None:
        kind = '<span class="badge new-failure">new failure</span>'
    else:
        kind = '<span class="badge accepted">accepted miss</span>'
    if row.status == "ok":
        returned = describe_verdict(row) or json.dumps(key_fields(row.verdict), ensure_ascii=False)
    else:
        returned = f"{row.status}: {row.error}"
    category = f"{row.category} (control)" if row.control and row.category != "control" else ""
    cells = [
        f'<td class="id"><b>{esc(row.item_id)}</b></td>',
        f"<td>{esc(category or row.category)}</td>",
        f"<td>{esc(outcome(row))}</td>",
        f"<td>{kind}</td>",
        f"<td>{esc(' and '.join(str(e) for e in row.expect) or '-')}</td>",
        f'<td class="text">{esc(returned)}</td>',
    ]
    detail = _detail(failure)
    more = f'<tr class="detail"><td colspan="6">{detail}</td></tr>' if detail else ""
    return f'<tr class="facts">{"".join(cells)}</tr>{more}'


def failures_html(m: ModelReport) -> str:
    """A card listing the model's failures, new ones first, or saying there are none."""
    head = (
        f'<h3 id="failures-{esc(m.model)}">Failures: {esc(m.failure_counts())}</h3>'
        f'<p class="caption">Main-run items that failed their expectation or errored. A new '
        f"failure fails the run; an accepted miss is listed in {EXPECTATIONS_FILE} and runs as a "
        f'strict xfail. The same in <a href="{FAILURES_MD}">{FAILURES_MD}</a>.</p>'
    )
    if not m.failures:
        return f'<div class="card failures">{head}<p>No failures.</p></div>'
    ordered = [*m.new_failures, *m.accepted_misses]
    header = "".join(
        f"<th>{name}</th>"
        for name in ("Item", "Category", "Outcome", "Kind", "Expected", "Returned")
    )
    body = "".join(_row(failure) for failure in ordered)
    table = f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"
    met = (
        f'<p class="note">Accepted misses the judge now gets right (strict XPASS: delete their '
        f"lines from {EXPECTATIONS_FILE}, or run `python -m judges baseline`): "
        f"{esc(', '.join(m.accepted_met))}</p>"
        if m.accepted_met
        else ""
    )
    return f'<div class="card failures">{head}{met}{table}</div>'
