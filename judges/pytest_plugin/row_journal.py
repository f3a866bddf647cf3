"""The session's row journal: every judgement's rows on disk the moment they exist.

A row is written once in a session, here, and once more into results.jsonl at its end;
both through `JudgementRow.dump`, the one serialisation of a row. Each process appends to
a journal of its own in the session's scratch folder (`rows-<writer>-<session id>.jsonl`,
one JSON line per judgement: its cassette and its rows, so a judgement's rows arrive whole
or not at all):

- the record or batch phase writes `rows-phase-…`; the xdist workers that did not run it
  read it and take its rows instead of replaying their cassettes;
- a test that replays a judgement appends it to its process's own journal;
- at the session's end the controlling process reads every journal of the session, so the
  rows of xdist workers, of tests that failed or were never reached (`-x`, Ctrl-C), and of
  a phase cut short all reach results.jsonl, each row once.

A last line without its newline was cut by a kill: its judgement is left out (its cassette,
if written, is replayed next time). Any other line that is not a journal line is reported,
with the file and line number, never dropped without a word.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from judges.core.results import JudgementRow

PHASE = "phase"  # the writer name of the record and batch phases' journal


def journal_path(scratch: Path, session_id: str, writer: str) -> Path:
    """One writer's journal; `remove_scratch` deletes it with the session's other files."""
    return scratch / f"rows-{writer}-{session_id}.jsonl"


def phase_journal(scratch: Path, session_id: str) -> RowJournal:
    return RowJournal(journal_path(scratch, session_id, PHASE))


def process_journal(scratch: Path, session_id: str) -> RowJournal:
    """This process's journal for the rows its tests replay (a process id is unique among
    a session's running processes)."""
    return RowJournal(journal_path(scratch, session_id, f"p{os.getpid()}"))


class RowJournal:
    """One writer's journal: lines appended whole, under a lock (the phase's threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._written: set[tuple[str, str, str, str, str, int]] = set()

    def append(self, cassette: Path, rows: Sequence[JudgementRow]) -> None:
        """One judgement's rows, unless every one is in this journal already (an item test
        and its set's test replay the same cassette)."""
        with self._lock:
            if not rows or all(row.key in self._written for row in rows):
                return
            line = {"cassette": str(cassette), "rows": [row.dump(volatile=True) for row in rows]}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(line, sort_keys=True) + "\n")
            self._written.update(row.key for row in rows)

    def read(self) -> JournalRead:
        return read_journal(self.path)

    def judgements(self) -> dict[Path, list[JudgementRow]]:
        """The rows of each cassette this journal holds (the phase's, for the tests)."""
        read = self.read()
        return {cassette: list(rows) for cassette, rows in read.judgements}


@dataclass(frozen=True)
class JournalRead:
    judgements: list[tuple[Path, list[JudgementRow]]]
    damaged: list[str]  # "<file>:<line>: <why>", each a notice at the session's end

    @property
    def rows(self) -> list[JudgementRow]:
        return [row for _, rows in self.judgements for row in rows]


def read_journal(path: Path) -> JournalRead:
    """Every whole line of one journal (none when there is no file)."""
    if not path.is_file():
        return JournalRead([], [])
    judgements, damaged = [], []
    text = path.read_bytes().decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if not line.endswith("\n") or not line.strip():
            continue  # cut by a kill mid-write: the judgement never finished being kept
        try:
            data = json.loads(line)
            rows = [JudgementRow.model_validate(row) for row in data["rows"]]
            judgements.append((Path(data["cassette"]), rows))
        except (ValueError, KeyError, TypeError, ValidationError) as error:
            why = " ".join(str(error).split())[:200]
            damaged.append(f"{path}:{number}: not a journal line ({why}); its rows are left out")
    return JournalRead(judgements, damaged)


def session_rows(scratch: Path, session_id: str) -> JournalRead:
    """Every row every process of the session journaled, each key once: the phase's first
    (the live row, with its latency), then the other journals in name order."""
    phase = journal_path(scratch, session_id, PHASE)
    others = sorted(set(scratch.glob(f"rows-*-{session_id}.jsonl")) - {phase})
    reads = [read_journal(path) for path in [phase, *others]]
    seen: set[tuple[str, str, str, str, str, int]] = set()
    judgements = []
    for read in reads:
        for cassette, rows in read.judgements:
            new = [row for row in rows if row.key not in seen]
            seen.update(row.key for row in new)
            if new:
                judgements.append((cassette, new))
    return JournalRead(judgements, [line for read in reads for line in read.damaged])
