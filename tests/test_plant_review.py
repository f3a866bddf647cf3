"""Review before anything counts: the terminal flow, review.jsonl, `plant --apply`, and
invariance candidates as probes of their source row (issue 70)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.cli.main import main
from judges.cli.plant_review import LINE_CHARACTERS, diff_lines, review_in_terminal, visible
from judges.core.spec import load_catalog
from judges.sets.candidates import read_candidates
from judges.sets.planted import load_planted_set
from judges.sets.probes import load_probe_set
from judges.sets.review import REVIEW_FILE, fingerprint, pending, read_decisions
from judges.verdicts.probe_messages import explained

SET = Path("planted_sets/support_reply")
POLICY = "Refunds: an unused item can be returned within 30 days of delivery."
REPLY = (
    "Yes: you can return the unused jacket within 30 days of delivery. The refund goes to "
    "your original payment method. Shipping costs are not refunded."
)


@pytest.fixture
def project(support_reply_project: Path) -> Path:
    tmp_path = support_reply_project
    rows = [
        {"id": f"row-{i}", "policy": POLICY, "question": "Can I return it?", "output": REPLY,
         "label": "good" if i < 2 else "bad"}
        for i in range(3)
    ]  # fmt: skip
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return tmp_path


def _plant(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["plant", "support_reply", *argv])
    out = capsys.readouterr()
    assert (code, out.err) == (0, ""), out.err
    return out.out


def _make(capsys: pytest.CaptureFixture[str], *extra: str) -> None:
    _plant(capsys, "--from", "rows.jsonl", "--map", "output=reply", "--control-label", "good",
           "--generators", "truncation,number_change,blank_lines,markdown", *extra)  # fmt: skip


def _scripted(answers: list[str]):  # type: ignore[no-untyped-def]
    replies = iter(answers)

    def ask(prompt: str) -> str:
        try:
            return next(replies)
        except StopIteration:
            raise EOFError from None

    return ask


def _answers(project: Path, choose: dict[str, str]) -> list[str]:
    """The answers a reviewer gives, candidate by candidate, in the order they are shown."""
    candidates = read_candidates(project / SET / "candidates.jsonl")
    return [choose.get(c.generator, "s") for c in candidates]


def test_the_terminal_review_writes_each_decision_before_the_next_question(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make(capsys)
    shown: list[str] = []
    made = review_in_terminal(project / SET, "Ada", _scripted(["a", "x", "r", "q"]), shown.append)
    assert made == {"accept": 1, "reject": 1}
    decisions = read_decisions(project / SET / REVIEW_FILE)
    assert [d.decision for d in decisions.values()] == ["accept", "reject"]
    assert {d.reviewer for d in decisions.values()} == {"Ada"}
    assert shown[0].startswith("[1/10] source:row-0: control, category control")
    assert any(line.startswith("+") and "days" in line for line in shown), "a diff is shown"
    # Stopped at any point (EOF), the decisions made so far are kept and not asked again.
    again = review_in_terminal(project / SET, "Ada", _scripted(["e"]), shown.append)
    assert again == {"skipped": 1} and len(read_decisions(project / SET / REVIEW_FILE)) == 2


def test_an_edit_replaces_the_text_and_is_recorded_as_edited(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make(capsys, "--generators", "number_change")
    edited = "Yes: returns are accepted within 45 days.\u2028Line two."
    answers = ["a", "e", *edited.split("\n"), ".", "a", "r"]
    made = review_in_terminal(project / SET, "Ada", _scripted(answers), lambda _: None)
    assert made == {"accept": 2, "edit": 1, "reject": 1}
    out = _plant(capsys, "--apply")
    items = load_planted_set(
        project / "planted_sets", load_catalog(project / "judge_prompts")["support_reply"]
    ).items
    edited_item = next(i for i in items if i.provenance.candidate == "number_change:row-0")
    assert edited_item.inputs["reply"] == edited
    assert "edited by Ada" in str(edited_item.provenance.perturbation)
    assert edited_item.provenance.clean_item == next(
        i.id for i in items if i.provenance.candidate == "source:row-0"
    )
    assert "added 3 planted items and 0 invariance probes; 0 accepted before, 1 rejected" in out


def _review_all(project: Path, choose: dict[str, str]) -> None:
    review_in_terminal(project / SET, "Ada", _scripted(_answers(project, choose)), lambda _: None)


def test_apply_adds_accepted_items_with_provenance_once(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make(capsys)
    before = (project / SET / "items.jsonl").read_text("utf-8")
    _review_all(
        project,
        {
            "source": "a",
            "truncation": "a",
            "number_change": "r",
            "blank_lines": "a",
            "markdown": "s",
        },
    )
    out = _plant(capsys, "--apply")
    after = (project / SET / "items.jsonl").read_text("utf-8")
    assert after.startswith(before), "the set's own lines are kept byte for byte"
    added = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert [a["id"] for a in added] == ["SR-196", "SR-197", "SR-198", "SR-199"]
    assert [a["category"] for a in added] == ["control", "control", "truncated", "truncated"]
    provenance = added[2]["provenance"]
    assert provenance["generator"] == "truncation" and provenance["reviewer"] == "Ada"
    assert provenance["source_row"] == "rows.jsonl:1 (id row-0)" and provenance["seed"] > 0
    assert provenance["clean_item"] == "SR-196" and len(provenance["reviewed"]) == 10
    assert "added 4 planted items and 2 invariance probes" in out
    assert "truncated: 2 defects; a judge right 90% of the time beats chance with " in out
    assert "(too small to decide: 0.95 needed)" in out
    # The invariance candidates are probes of their source row, gated like every probe.
    spec = load_catalog(project / "judge_prompts")["support_reply"]
    probes = load_probe_set(load_planted_set(project / "planted_sets", spec))
    assert probes is not None
    assert [(p.probe, p.id) for p in probes.items] == [
        ("format_blank_lines", "SR-196"),
        ("format_blank_lines", "SR-197"),
    ]
    candidate = {c.id: c for c in read_candidates(project / SET / "candidates.jsonl")}
    assert probes.items[0].inputs == candidate["blank_lines:row-0"].inputs, "what was reviewed"
    # Applying again adds nothing: an interrupted apply is finished by running it again.
    again = _plant(capsys, "--apply")
    assert "added 0 planted items and 0 invariance probes; 6 accepted before" in again
    assert (project / SET / "items.jsonl").read_text("utf-8") == after


def test_a_candidate_made_again_differently_needs_a_new_decision(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make(capsys)
    _review_all(project, {"source": "a", "truncation": "a"})
    _make(capsys, "--seed", "5")  # another seed: the truncations differ
    out = _plant(capsys, "--apply")
    assert (
        "decisions are on candidates made again since (truncation:row-0, truncation:row-1)" in out
    )
    assert "added 2 planted items" in out


def test_an_invariance_candidate_needs_its_source_row_in_the_set(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make(capsys)
    _review_all(project, {"source": "r", "blank_lines": "a"})
    assert main(["plant", "support_reply", "--apply"]) == 2
    err = capsys.readouterr().err
    assert "candidate 'blank_lines:row-0' is accepted, but its source row 'row-0' is not in" in err
    assert "accept its control candidate (source:row-0) too" in err


def test_a_set_grown_from_nothing_says_its_categories_are_too_small(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / SET / "items.jsonl").unlink()
    (project / SET / "set.toml").unlink()
    _make(capsys, "--expect", "accuracy <= 1", "--control-expect", "accuracy >= 2")
    _review_all(project, {"source": "a", "truncation": "a", "number_change": "a"})
    out = _plant(capsys, "--apply")
    assert "category sizes: 2 controls" in out
    assert "warning: " in out and "python -m judges plan support_reply" in out


def test_modes_are_one_at_a_time_and_review_needs_a_reviewer(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plant", "support_reply", "--review", "--apply"]) == 2
    assert "one at a time" in capsys.readouterr().err
    assert main(["plant", "support_reply", "--review"]) == 2
    assert "--review needs --reviewer NAME" in capsys.readouterr().err
    assert main(["plant", "support_reply", "--apply"]) == 2
    assert "no candidates yet; make them with `python -m judges plant`" in capsys.readouterr().err


def test_a_bad_decision_line_is_named(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _make(capsys)
    (project / SET / REVIEW_FILE).write_text('{"candidate": "x", "decision": "maybe"}\n', "utf-8")
    assert main(["plant", "support_reply", "--apply"]) == 2
    assert (
        "review.jsonl:1: not a review decision (fingerprint: Field required"
        in capsys.readouterr().err
    )


def test_white_space_a_format_edit_changes_is_visible() -> None:
    assert visible("a  b\tc ") == "a··b→c·"


def test_the_probes_note_names_only_the_kinds_the_report_holds() -> None:
    note = explained(["format_markdown", "padding"])
    assert "a judge-pleasing flip for padding (the score rises" in note
    assert "any label change for format_markdown." in note
    assert "order" not in note and "dummy" not in note


def test_a_diff_of_a_huge_line_is_cut_for_the_terminal() -> None:
    big = "word " * 200_000
    lines = diff_lines(big, big + "more", "source")
    assert max(len(line) for line in lines) < LINE_CHARACTERS + 50
    assert any("more characters)" in line for line in lines)


def test_an_apply_stopped_before_probes_jsonl_is_finished_by_running_it_again(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make(capsys)
    _review_all(project, {"source": "a", "markdown": "a"})
    _plant(capsys, "--apply")
    probes = project / SET / "probes.jsonl"
    written = probes.read_bytes()
    probes.unlink()  # as if stopped after probes.toml
    again = _plant(capsys, "--apply")
    assert "wrote planted_sets/support_reply/probes.jsonl" in again
    assert probes.read_bytes() == written
    assert "wrote" not in _plant(capsys, "--apply"), "nothing to write: nothing written"


def test_a_downloaded_edit_of_an_invariance_candidate_is_refused_and_strangers_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make(capsys)
    candidates = {c.id: c for c in read_candidates(project / SET / "candidates.jsonl")}
    base = {"reviewer": "Ada", "date": "2026-12-07", "note": ""}
    lines = [
        {"candidate": "source:row-0", "fingerprint": fingerprint(candidates["source:row-0"]),
         "decision": "accept", "text": None, **base},
        {"candidate": "gone:row-9", "fingerprint": "0" * 16, "decision": "accept",
         "text": None, **base},
    ]  # fmt: skip
    downloaded = project / "review-decisions.jsonl"
    downloaded.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    out = _plant(capsys, "--apply", "--decisions", str(downloaded))
    assert "2 decisions from" in out and "added 1 planted items" in out
    assert "1 decisions name no current candidate (gone:row-9): left as they are" in out
    edit = {"candidate": "markdown:row-0", "fingerprint": fingerprint(candidates["markdown:row-0"]),
            "decision": "edit", "text": "**Yes.**", **base}  # fmt: skip
    downloaded.write_text(json.dumps(edit) + "\n", "utf-8")
    assert main(["plant", "support_reply", "--apply", "--decisions", str(downloaded)]) == 2
    assert "is a format edit made again from its seed" in capsys.readouterr().err
    # It is asked about again, in the terminal and on the page.
    todo = pending(list(candidates.values()), read_decisions(project / SET / REVIEW_FILE))
    assert "markdown:row-0" in {c.id for c in todo}
