"""The outcomes of a callable judge's reply fixtures and their properties, kept beside its
results as `reply_fixtures.jsonl`: they test the team's parsing and scoring on raw replies,
feed no statistic, and the report lists them in a section of their own.

A session's outcomes replace those of the same fixture and check on disk (a run of some
fixtures keeps the others'), so `python -m judges report` rebuilds the section from the
file alone. A judge without reply fixtures has no file and no section.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from judges.reports.sections.reply_fixtures import ReplyCheck
from judges.storage.files import json_lines

REPLY_FIXTURES_FILE = "reply_fixtures.jsonl"


def read_checks(folder: Path) -> tuple[ReplyCheck, ...]:
    """The outcomes in a report folder's file, in its order; none when it has no file."""
    path = folder / REPLY_FIXTURES_FILE
    if not path.is_file():
        return ()
    found = []
    for line, fields in json_lines(path):
        try:
            found.append(ReplyCheck(**fields))
        except TypeError as error:  # a line of another shape: named, never dropped
            raise ValueError(
                f"{path}:{line}: not a reply-fixture outcome ({error}); delete the file and "
                "run the reply fixtures again (python -m pytest -k reply), which rewrites it"
            ) from None
    return tuple(found)


def merged_checks(old: Iterable[ReplyCheck], new: Iterable[ReplyCheck]) -> tuple[ReplyCheck, ...]:
    """`new` over `old`, one per fixture and check, sorted by fixture then check."""
    found = {check.key: check for check in old}
    found |= {check.key: check for check in new}
    return tuple(found[key] for key in sorted(found))


def checks_text(checks: Iterable[ReplyCheck]) -> str:
    return "".join(json.dumps(asdict(c), ensure_ascii=False, sort_keys=True) + "\n" for c in checks)
