"""The change between two judges and the review queue, on tiny corpora whose answers are
worked out by hand: rank correlation, leader change, exact agreement, contested systems by
the margin, and exactly the judgements whose verdict changed in the queue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main
from judges.corpus.report import CorpusReport, build_report
from judges.corpus.rows import load_corpus

SIDE = """name = "tiny"
source = "written for this test"
licence = "unknown"

[scale]
low = 0
high = 1
verdict = "side"
midpoint = 0.5
factor = 100

[judges.old]
[judges.new]
"""
# Scores by item i1..i5; None: not judged; "error": an error row.
OLD: dict[str, list[Any]] = {
    "A": [1, 1, 1, 0, 1],
    "B": [1, 1, 0, 0, None],
    "C": [1, 0, 0, 0, None],
    "D": [0, 0, 0, 0, None],
    "E": [0.5, 0.5, 0.5, 0.5, None],  # judged by old only: not part of the change
}
NEW: dict[str, list[Any]] = {
    "A": [1, 1, 0.5, 0, "error"],  # i3: a win becomes a tie
    "B": [1, 1, 1, 0, None],  # i3: a loss becomes a win
    "C": [1, 0, 0, 0.16, None],  # i4 moves, still a loss: shift +0.04
    "D": [0, 0, 0, 0.3, None],  # i4 moves, still a loss: shift +0.075
}


def _write(folder: Path, manifest: str, judges: dict[str, dict[str, list[Any]]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "corpus.toml").write_text(manifest, encoding="utf-8")
    items = [f"i{k}" for k in range(1, 6)]
    rows = []
    for judge, systems in judges.items():
        for system, scores in systems.items():
            for item, score in zip(items, scores, strict=True):
                if score == "error":
                    rows.append({"system": system, "item": item, "judge": judge, "error": "x"})
                elif score is not None:
                    rows.append({"system": system, "item": item, "judge": judge, "score": score})
    (folder / "items.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in items))
    (folder / "judgements.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _report(tmp_path: Path, manifest: str = SIDE) -> CorpusReport:
    return build_report(load_corpus(_write(tmp_path / "tiny", manifest, {"old": OLD, "new": NEW})))


def test_the_change_on_a_corpus_worked_by_hand(tmp_path: Path) -> None:
    change = _report(tmp_path).change
    assert change is not None
    assert (change.before, change.after) == ("old", "new")
    assert change.systems == ("A", "B", "C", "D")  # E was judged by one judge only
    # Means old: A .8, B .5, C .25, D 0; new: A .625, B .75, C .29, D .075. Ranks
    # (1, 2, 3, 4) -> (2, 1, 3, 4): Spearman 1 - 6 x 2 / (4 x 15), Kendall (5 - 1) / 6.
    assert change.spearman.value == pytest.approx(0.8)
    assert change.kendall.value == pytest.approx(4 / 6)
    assert change.spearman.n == 4
    assert (change.leader_before, change.leader_after) == ("A", "B")
    assert change.leader_changes
    # 16 judgements both made (A on i5 is an error row under new); A and B on i3 change side.
    assert (change.exact.successes, change.exact.n) == (14, 16)
    assert change.adjacent is None  # a side scale has no "within one level"
    shifts = {s.system: s for s in change.shifts}
    assert {s: round(shifts[s].shift.mean, 12) for s in shifts} == {
        "A": -0.125, "B": 0.25, "C": 0.04, "D": 0.075
    }  # fmt: skip
    assert shifts["A"].shift.n == 4  # paired over i1..i4: i5 has no new score
    assert (shifts["A"].before, shifts["A"].after) == (0.75, 0.625)
    # The default margin is a twentieth of the scale: 0.05.
    assert change.margin == pytest.approx(0.05)
    assert [s for s in shifts if shifts[s].contested] == ["A", "B", "D"]
    assert sum(change.first_before.values()) == pytest.approx(1.0)
    assert sum(change.first_after.values()) == pytest.approx(1.0)


def test_the_contested_margin_comes_from_the_manifest(tmp_path: Path) -> None:
    manifest = SIDE + "\n[compare]\ncontested_margin = 0.1\n"
    change = _report(tmp_path, manifest).change
    assert change is not None and change.margin == 0.1
    assert [s.system for s in change.shifts if s.contested] == ["A", "B"]  # D's 0.075 is not


def test_the_review_queue_holds_exactly_the_changed_verdicts(tmp_path: Path) -> None:
    report = _report(tmp_path)
    queue = list(report.queue)
    assert [(r["system"], r["item"]) for r in queue] == [("B", "i3"), ("A", "i3")]  # |1| > |.5|
    for row in queue:
        assert set(row) == {"system", "item", "old", "new", "change", "reason"}
        assert row["change"] == pytest.approx(row["new"] - row["old"])
        assert "old" in row["reason"] and "new" in row["reason"]
    assert (queue[0]["old"], queue[0]["new"], queue[1]["old"], queue[1]["new"]) == (0, 1, 1, 0.5)


LEVELS = """name = "levels"
source = "written for this test"
licence = "unknown"

[scale]
low = 0
high = 3
step = 1

[judges.p1]
[judges.p2]
"""


@pytest.mark.parametrize("reverse", [False, True])
def test_the_queue_on_a_level_scale_written_by_corpus_report(
    tmp_path: Path, reverse: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    p1 = {"x": [0, 1, 2, 3, None], "y": [3, 3, 3, 3, None]}
    p2 = {"x": [0, 2, 2, 1, None], "y": [3, 2.6, 2.4, 3, None]}  # 2.6 reads 3, 2.4 reads 2
    manifest = LEVELS + ('\n[compare]\nbefore = "p2"\nafter = "p1"\n' if reverse else "")
    _write(tmp_path / "corpora" / "levels", manifest, {"p1": p1, "p2": p2})
    argv = ["corpus", "report", "levels", "--corpora", str(tmp_path / "corpora"),
            "--reports", str(tmp_path / "reports")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    written = tmp_path / "reports" / "levels"
    assert sorted(p.name for p in written.iterdir()) == [
        "corpus_report.md", "index.html", "review_queue.jsonl"
    ]  # fmt: skip
    rows = [json.loads(line) for line in (written / "review_queue.jsonl").read_text().splitlines()]
    before, after = ("p2", "p1") if reverse else ("p1", "p2")
    sign = -1 if reverse else 1
    assert [(r["system"], r["item"], r["change"]) for r in rows] == [
        ("x", "i4", pytest.approx(sign * -2)),
        ("x", "i2", pytest.approx(sign * 1)),
        ("y", "i3", pytest.approx(sign * -0.6)),
    ]
    assert all(set(r) == {"system", "item", before, after, "change", "reason"} for r in rows)
    assert rows[2][before if not reverse else after] == 3
