"""The record phase's rows file, read back after an interrupt, and the rows an interrupted
session adds to what its tests reported."""

from __future__ import annotations

import json
from pathlib import Path

from judges.core.results import JudgementRow, main_run
from judges.pytest_plugin.record_phase import read_rows, rows_file
from judges.pytest_plugin.session import JudgesSession, Settings


def _row(item_id: str, repeat: int = 0) -> JudgementRow:
    return JudgementRow(
        judge="product_identity",
        prompt_version="0.2",
        prompt_hash="h",
        model="local:smollm2-135m",
        item_id=item_id,
        category="cousin",
        control=False,
        repeat=repeat,
        status="ok",
    )


def _line(path: str, *rows: JudgementRow) -> str:
    return json.dumps({"path": path, "rows": [r.model_dump(mode="json") for r in rows]})


def test_a_line_cut_by_a_kill_is_left_out_and_the_whole_ones_are_read(tmp_path: Path) -> None:
    file = rows_file(tmp_path, "abc")
    whole = _line("/c/PE-01.yaml", _row("PE-01"), _row("PE-01", 1))
    cut = _line("/c/PE-02.yaml", _row("PE-02"))[:40]
    file.write_text(whole + "\n" + cut, encoding="utf-8")

    read = read_rows(file)

    assert list(read) == [Path("/c/PE-01.yaml")]
    assert [r.repeat for r in read[Path("/c/PE-01.yaml")]] == [0, 1]
    assert read_rows(tmp_path / "none.jsonl") == {}


def test_an_interrupted_session_adds_only_the_rows_no_test_reported(tmp_path: Path) -> None:
    session = JudgesSession(Settings(rootdir=tmp_path))
    session.gathered.add_rows([_row("PE-01").model_dump(mode="json")])

    added = session.gathered.add_unreported([_row("PE-01"), _row("PE-02"), _row("PE-02", 1)])

    assert added == 2
    assert sorted((r.item_id, r.repeat) for r in session.gathered.rows) == [
        ("PE-01", 0), ("PE-02", 0), ("PE-02", 1)
    ]  # fmt: skip
    assert session.gathered.add_unreported([_row("PE-02")]) == 0


def _main_row(item_id: str, **changes: object) -> JudgementRow:
    fields: dict[str, object] = {
        "judge": "geval",
        "prompt_version": "1.0",
        "prompt_hash": "h",
        "model": "local:m",
        "item_id": item_id,
        "category": "control",
        "control": True,
        "status": "ok",
        "verdict": {"overall": 3},
    }
    return JudgementRow.model_validate(fields | changes)


def test_main_run_is_the_baseline_only_when_every_item_was_judged() -> None:
    """The report reuses a session's main run as the baseline only if it is complete, so
    a partial run (-k, a failed worker) is replayed from its cassettes instead."""
    version = ("geval", "1.0", "local:m")
    rows = [
        _main_row("B"),
        _main_row("A"),
        _main_row("A", run="retest"),
        _main_row("A", repeat=1),
        _main_row("C", prompt_version="1.1"),
        _main_row("C", model="local:other"),
    ]
    found = main_run(rows, version, ["A", "B"])
    assert found is not None and [(r.item_id, r.run, r.repeat) for r in found] == [
        ("A", "main", 0),
        ("B", "main", 0),
    ]
    assert main_run(rows, version, ["A", "B", "C"]) is None  # C: another version, model
    assert main_run(rows, version, []) is None
    assert main_run([], version, ["A"]) is None
