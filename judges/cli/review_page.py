"""The review page: every pending candidate beside its source row, in one static HTML file.

planted_sets/<judge>/review.html   open it in a browser (no server, no network): accept,
                                   reject or edit each candidate, then download the
                                   decisions and apply them with
                                   `python -m judges plant <judge> --apply --decisions FILE`

Every text is escaped where it is written (markup in a row is shown, never run); the page's
script only records the reviewer's choices and builds the decisions file, in the format of
review.jsonl (judges.sets.review.Decision).
"""

from __future__ import annotations

import html
from pathlib import Path

from judges.cli.plant_review import checked_words, diff_lines
from judges.sets.candidates import CANDIDATES_FILE, Candidate, read_candidates
from judges.sets.review import REVIEW_FILE, fingerprint, pending, read_decisions
from judges.storage.files import atomic_write_text

PAGE_FILE = "review.html"

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; }
section { border: 1px solid #bbb; border-radius: 6px; margin: 1em 0; padding: .6em 1em; }
section.accept { border-color: #2a7a2a; background: #f3fbf3; }
section.reject { border-color: #a33; background: #fdf3f3; }
section.edit { border-color: #a67c00; background: #fffaf0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: .4em; }
.diff .add { color: #075e07; } .diff .del { color: #9b1111; } .diff .at { color: #555; }
.disagrees { color: #9b1111; font-weight: bold; }
.texts { display: grid; grid-template-columns: 1fr 1fr; gap: .8em; }
textarea { width: 100%; min-height: 8em; font: inherit; }
button { margin-right: .4em; } #bar { position: sticky; top: 0; background: #fff; padding: .4em 0; }
"""

SCRIPT = """
const chosen = {};
function decide(section, decision) {
  section.className = 'candidate ' + decision;
  section.querySelector('.state').textContent = decision;
  const edit = section.querySelector('textarea');
  if (edit) edit.hidden = decision !== 'edit';
  chosen[section.dataset.id] = decision;
  render();
}
function render() {
  const reviewer = document.getElementById('reviewer').value.trim();
  const date = new Date().toISOString().slice(0, 10);
  const lines = [];
  for (const section of document.querySelectorAll('section.candidate')) {
    const decision = chosen[section.dataset.id];
    if (!decision) continue;
    const line = {candidate: section.dataset.id, fingerprint: section.dataset.fingerprint,
                  decision: decision, reviewer: reviewer, date: date, text: null, note: ''};
    if (decision === 'edit') line.text = section.querySelector('textarea').value;
    lines.push(JSON.stringify(line));
  }
  const out = lines.length ? lines.join('\\n') + '\\n' : '';
  document.getElementById('decisions').textContent = out;
  document.getElementById('count').textContent = lines.length;
  return out;
}
function download() {
  if (!document.getElementById('reviewer').value.trim()) {
    alert('Write your name first: each decision records who made it.');
    return;
  }
  const blob = new Blob([render()], {type: 'application/jsonl'});
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = 'review-decisions.jsonl';
  link.click();
}
for (const section of document.querySelectorAll('section.candidate')) {
  for (const button of section.querySelectorAll('button[data-decision]')) {
    button.addEventListener('click', () => decide(section, button.dataset.decision));
  }
  const edit = section.querySelector('textarea');
  if (edit) edit.addEventListener('input', render);
}
document.getElementById('reviewer').addEventListener('input', render);
document.getElementById('download').addEventListener('click', download);
"""


def _diff(candidate: Candidate) -> str:
    source = candidate.source
    label = f"source row {source.file}:{source.line} (id {source.id}), {candidate.field}"
    rows = []
    for line in diff_lines(
        source.inputs[candidate.field], candidate.inputs[candidate.field], label
    ):
        kind = {"+": "add", "-": "del", "@": "at"}.get(line[:1], "")
        rows.append(f'<span class="{kind}">{html.escape(line)}</span>')
    return '<pre class="diff">' + "\n".join(rows) + "</pre>"


def _shortened(text: str, limit: int = 2000) -> str:
    """The other inputs are context: their first characters are enough to judge by."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _checked(candidate: Candidate) -> str:
    """The second model's check, marked when it disagrees with the intended label."""
    words = checked_words(candidate)
    if words is None:
        return ""
    agrees = candidate.confirmed is not None and candidate.confirmed.agrees
    return f'<p class="{"agrees" if agrees else "disagrees"}">{html.escape(words)}</p>'


def _section(candidate: Candidate) -> str:
    esc = html.escape
    field = candidate.field
    editable = candidate.editable
    buttons = ["accept", "reject", *(["edit"] if editable else [])]
    edit = (
        f'<textarea hidden aria-label="edited {esc(field)}">{esc(candidate.inputs[field])}'
        "</textarea>"
        if editable
        else "<p>A format edit is accepted or rejected, not edited (made from its seed).</p>"
    )
    others = "".join(
        f"<p><b>{esc(name)}</b>: {esc(_shortened(str(value)))}</p>"
        for name, value in candidate.inputs.items()
        if name != field
    )
    return (
        f'<section class="candidate" data-id="{esc(candidate.id)}" '
        f'data-fingerprint="{fingerprint(candidate)}">'
        f"<h2>{esc(candidate.id)} <small>({esc(candidate.kind)}, category "
        f'{esc(candidate.category)}) <span class="state">undecided</span></small></h2>'
        f"<p><b>Expectation</b>: {esc(candidate.expectation)}<br><b>Change</b>: "
        f"{esc(candidate.change)}</p>{_checked(candidate)}{others}{_diff(candidate)}"
        f'<div class="texts"><div><h3>Source row: {esc(field)}</h3><pre>'
        f"{esc(candidate.source.inputs[field])}</pre></div><div><h3>Candidate: {esc(field)}"
        f"</h3><pre>{esc(candidate.inputs[field])}</pre></div></div>"
        + "".join(
            f'<button type="button" data-decision="{b}">{b.capitalize()}</button>' for b in buttons
        )
        + f"{edit}</section>"
    )


def review_page(judge: str, candidates: list[Candidate]) -> str:
    body = "\n".join(_section(c) for c in candidates) or "<p>No candidate waits for review.</p>"
    title = html.escape(f"Review candidates: {judge}")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{STYLE}</style></head><body>"
        f"<h1>{title}</h1><p>{len(candidates)} candidates wait for a decision. Nothing counts "
        "until it is accepted here and applied with <code>python -m judges plant "
        f"{html.escape(judge)} --apply --decisions FILE</code>.</p>"
        '<div id="bar"><label>Reviewer <input id="reviewer" autocomplete="name"></label> '
        '<button type="button" id="download">Download decisions</button> '
        '<span id="count">0</span> decided</div>'
        f'{body}<h2>Decisions</h2><pre id="decisions"></pre>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def write_review_page(folder: Path, judge: str) -> Path:
    candidates = read_candidates(folder / CANDIDATES_FILE)
    todo = pending(candidates, read_decisions(folder / REVIEW_FILE))
    path = folder / PAGE_FILE
    atomic_write_text(path, review_page(judge, todo))
    return path


__all__ = ["PAGE_FILE", "review_page", "write_review_page"]
