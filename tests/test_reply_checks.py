"""A callable judge's reply-fixture outcomes beside its results (`reply_fixtures.jsonl`): a
run's outcomes replace the same checks on disk and keep the others, a line of another shape
is named with its file and line, and the report's section lists them apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from judges.reports.model.reply_checks import (
    REPLY_FIXTURES_FILE,
    checks_text,
    merged_checks,
    read_checks,
)
from judges.reports.sections.reply_fixtures import (
    ReplyCheck,
    reply_fixtures_markdown,
    short_message,
)


def test_a_run_s_outcomes_replace_the_same_checks_and_keep_the_others(tmp_path: Path) -> None:
    old = [
        ReplyCheck("RF-01", "fixture", True, "failed", "RF-01: expected doc"),
        ReplyCheck("RF-02", "property", False, "passed"),
    ]
    (tmp_path / REPLY_FIXTURES_FILE).write_text(checks_text(old), encoding="utf-8")
    new = [ReplyCheck("RF-01", "fixture", True, "passed")]
    merged = merged_checks(read_checks(tmp_path), new)
    assert merged == (new[0], old[1])
    assert read_checks(tmp_path / "elsewhere") == ()


def test_a_line_of_another_shape_is_named(tmp_path: Path) -> None:
    path = tmp_path / REPLY_FIXTURES_FILE
    path.write_text('{"fixture": "RF-01", "check": "fixture"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path}:1: not a reply-fixture outcome"):
        read_checks(tmp_path)


def test_the_section_lists_each_check_apart_and_is_absent_without_fixtures() -> None:
    assert reply_fixtures_markdown(()) == []
    lines = reply_fixtures_markdown(
        [ReplyCheck("RF-01", "property", True, "failed", "changed its <verdict>")]
    )
    assert lines[0] == "## Reply fixtures (no statistic)"
    assert "1 reply fixtures, 1 checks, 1 failed." in lines[2]
    assert "| RF-01 | control | property | FAILED | changed its &lt;verdict&gt; |" in lines


def test_a_failure_keeps_its_first_line_bounded_and_scrubbed() -> None:
    assert short_message("\n  first line\nsecond") == "first line"
    assert len(short_message("x" * 1000)) == 300
    assert "sk-" not in short_message("key sk-abcdefghijklmnopqrstuvwxyz0123456789 leaked")
