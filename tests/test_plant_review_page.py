"""The review page in a real browser: accept, reject and edit round trip through the page's
own script into `plant --apply --decisions` (issue 70)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from judges.cli.main import main
from judges.core.spec import load_catalog
from judges.sets.planted import load_planted_set
from tests._chromium import chromium, needs_chromium, page_errors

SET = Path("planted_sets/support_reply")
HOSTILE = (
    "Yes: you can return it within 30 days.</pre><script>document.title='owned'</script> "
    "Zeile\u2028zwei & <b>fett</b>. Refund in 5 days."
)
# What a reviewer does on the page: a name, then accept, reject and edit, as clicks.
REVIEWER = """
<script>
const field = document.getElementById('reviewer');
field.value = 'Grace'; field.dispatchEvent(new Event('input'));
const sections = document.querySelectorAll('section.candidate');
const click = (i, what) => sections[i].querySelector(`button[data-decision="${what}"]`).click();
click(0, 'accept'); click(1, 'reject'); click(2, 'edit');
const edit = sections[2].querySelector('textarea');
edit.value = 'Yes: returns within 31 days. Refund in 5 days.';
edit.dispatchEvent(new Event('input'));
</script>
"""


@pytest.fixture
def project(support_reply_project: Path) -> Path:
    tmp_path = support_reply_project
    row = {
        "id": "r<1>",
        "policy": "Refunds within 30 days.",
        "question": "Can I?",
        "output": HOSTILE,
    }
    (tmp_path / "rows.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n", "utf-8")
    return tmp_path


def _page(project: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    argv = ["--map", "output=reply", "--generators", "number_change,truncation,negation"]
    assert main(["plant", "support_reply", "--from", "rows.jsonl", *argv]) == 0
    assert main(["plant", "support_reply", "--review-page"]) == 0
    assert "review.html: open it in a browser" in capsys.readouterr().out
    return project / SET / "review.html"


def test_the_page_escapes_every_text_it_shows(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _page(project, capsys).read_text("utf-8")
    assert text.count("<script>") == 1, "the row's markup is shown, never run"
    assert "&lt;script&gt;document.title=&#x27;owned&#x27;&lt;/script&gt;" in text
    assert 'data-id="number_change:r&lt;1&gt;"' in text


@needs_chromium
def test_accept_reject_and_edit_round_trip_through_a_real_browser(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = _page(project, capsys)
    driven = project / "driven.html"
    driven.write_text(page.read_text("utf-8").replace("</body>", REVIEWER + "</body>"), "utf-8")
    done = chromium(project / "profile", "--dump-dom", driven.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    assert not page_errors(done.stderr), page_errors(done.stderr)
    assert "<title>Review candidates: support_reply</title>" in done.stdout, "title untouched"
    shown = re.search(r'<pre id="decisions">(.*?)</pre>', done.stdout, re.S)
    assert shown is not None
    decisions = project / "review-decisions.jsonl"
    decisions.write_text(html.unescape(shown.group(1)), "utf-8")
    lines = [json.loads(line) for line in decisions.read_text("utf-8").splitlines()]
    assert [(d["decision"], d["reviewer"]) for d in lines] == [
        ("accept", "Grace"), ("reject", "Grace"), ("edit", "Grace"),
    ]  # fmt: skip
    assert main(["plant", "support_reply", "--apply", "--decisions", str(decisions)]) == 0
    out = capsys.readouterr().out
    assert "3 decisions from" in out and "added 2 planted items" in out
    spec = load_catalog(project / "judge_prompts")["support_reply"]
    items = load_planted_set(project / "planted_sets", spec).items
    added = {i.provenance.candidate: i for i in items if i.provenance.reviewer == "Grace"}
    assert sorted(added) == ["negation:r<1>", "number_change:r<1>"], "the rejected one is out"
    edited = added["negation:r<1>"]
    assert edited.inputs["reply"] == "Yes: returns within 31 days. Refund in 5 days."
    assert edited.provenance.perturbation.endswith("edited by Grace")
