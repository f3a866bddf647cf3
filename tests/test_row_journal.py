"""The session's row journal: one serialisation of a row, whole lines only, each row once
across the journals of a session's processes, and damage named, never dropped in silence."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from judges.core.results import JudgementRow, jsonl_text, main_run, parse_results
from judges.pytest_plugin.harness import remove_scratch
from judges.pytest_plugin.row_journal import (
    PHASE,
    RowJournal,
    journal_path,
    phase_journal,
    process_journal,
    read_journal,
    session_rows,
)
from judges.pytest_plugin.session import JudgesSession, Settings


def _row(item_id: str, repeat: int = 0, **changes: object) -> JudgementRow:
    fields: dict[str, object] = {
        "judge": "product_identity",
        "prompt_version": "0.2",
        "prompt_hash": "h",
        "model": "local:smollm2-135m",
        "item_id": item_id,
        "category": "cousin",
        "control": False,
        "repeat": repeat,
        "status": "ok",
    }
    return JudgementRow.model_validate(fields | changes)


def test_a_row_reads_back_whole_from_the_journal_and_stable_from_results(tmp_path: Path) -> None:
    """One serialisation: the journal keeps the volatile fields the session's end needs
    (latency, live); results.jsonl leaves exactly those out."""
    row = _row("PE-01", latency_s=1.25, live=True, verdict={"reason": "a\u2028b \ud800 \u00e9"})
    journal = RowJournal(tmp_path / "rows-p1-s.jsonl")
    journal.append(tmp_path / "PE-01.yaml", [row])

    assert journal.read().rows == [row]
    text = jsonl_text([row])
    assert "\u2028" not in text  # escaped: a line separator never splits a line
    (back,) = parse_results(tmp_path / "results.jsonl", text).rows
    assert back == row.model_copy(update={"latency_s": 0.0, "live": False})
    assert set(row.dump(volatile=True)) - set(row.dump()) == {"latency_s", "live"}


def test_a_line_cut_by_a_kill_is_left_out_and_the_whole_ones_are_read(tmp_path: Path) -> None:
    journal = phase_journal(tmp_path, "abc")
    journal.append(Path("/c/PE-01.yaml"), [_row("PE-01"), _row("PE-01", 1)])
    whole = journal.path.read_text(encoding="utf-8")
    cut = json.dumps({"cassette": "/c/PE-02.yaml", "rows": [_row("PE-02").dump()]})[:40]
    journal.path.write_text(whole + cut, encoding="utf-8")

    read = journal.judgements()

    assert list(read) == [Path("/c/PE-01.yaml")]
    assert [r.repeat for r in read[Path("/c/PE-01.yaml")]] == [0, 1]
    assert journal.read().damaged == []
    assert read_journal(tmp_path / "none.jsonl").judgements == []


def test_a_damaged_line_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    journal = process_journal(tmp_path, "abc")
    journal.append(Path("/c/PE-01.yaml"), [_row("PE-01")])
    with journal.path.open("a", encoding="utf-8") as stream:
        stream.write('{"cassette": "/c/PE-02.yaml", "rows": [{"judge": 1}]}\n')
        stream.write("not json\n")
    journal.append(Path("/c/PE-03.yaml"), [_row("PE-03")])

    read = session_rows(tmp_path, "abc")

    assert [r.item_id for r in read.rows] == ["PE-01", "PE-03"]
    assert [line.split(": ")[0] for line in read.damaged] == [
        f"{journal.path}:2", f"{journal.path}:3"
    ]  # fmt: skip
    assert all("its rows are left out" in line for line in read.damaged)


def test_the_session_reads_every_journal_each_row_once_the_phases_first(tmp_path: Path) -> None:
    """The phase's live row wins over a test's replay of the same cassette; other sessions'
    journals in the same folder are not read."""
    phase_journal(tmp_path, "s1").append(Path("/c/PE-01.yaml"), [_row("PE-01", latency_s=2.0)])
    RowJournal(journal_path(tmp_path, "s1", "p7")).append(
        Path("/c/PE-01.yaml"), [_row("PE-01"), _row("PE-02")]
    )
    RowJournal(journal_path(tmp_path, "s1", "p9")).append(Path("/c/PE-03.yaml"), [_row("PE-03")])
    RowJournal(journal_path(tmp_path, "s2", PHASE)).append(Path("/c/PE-04.yaml"), [_row("PE-04")])

    read = session_rows(tmp_path, "s1")

    assert sorted(r.item_id for r in read.rows) == ["PE-01", "PE-02", "PE-03"]
    assert next(r for r in read.rows if r.item_id == "PE-01").latency_s == 2.0


def test_a_cassette_replayed_twice_is_journaled_once(tmp_path: Path) -> None:
    journal = process_journal(tmp_path, "abc")
    for _ in range(3):
        journal.append(Path("/c/PE-01.yaml"), [_row("PE-01")])
    journal.append(Path("/c/PE-01.yaml"), [])

    assert len(journal.path.read_text(encoding="utf-8").splitlines()) == 1


def test_threads_appending_at_once_leave_whole_lines(tmp_path: Path) -> None:
    journal = phase_journal(tmp_path, "abc")
    long_reason = "x" * 20_000  # longer than a write buffer: one line still

    def append(thread: int) -> None:
        for n in range(25):
            item = f"T{thread}-{n}"
            journal.append(Path(f"/c/{item}.yaml"), [_row(item, verdict={"reason": long_reason})])

    threads = [threading.Thread(target=append, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    read = journal.read()
    assert read.damaged == [] and len(read.rows) == 200


def test_the_session_end_gathers_the_journals_rows_and_their_damage(tmp_path: Path) -> None:
    session = JudgesSession(Settings(rootdir=tmp_path))
    settings = session.settings
    phase_journal(settings.scratch, settings.session_id).append(Path("/c/A.yaml"), [_row("A")])
    session.judging.journal.append(Path("/c/B.yaml"), [_row("B"), _row("B", 1)])

    session.gathered.read_journals(settings.scratch, settings.session_id)

    assert sorted((r.item_id, r.repeat) for r in session.gathered.rows) == [
        ("A", 0), ("B", 0), ("B", 1)
    ]  # fmt: skip
    remove_scratch(settings.scratch, settings.session_id)  # the controller, at unconfigure
    assert not settings.scratch.exists()


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
