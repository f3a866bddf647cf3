"""Where GitHub annotations point: the threshold's line in gates.toml, the item's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.reports.render.github import Annotation, gate_key, gate_line, item_line, publish
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import wilson

GATES = """\
# thresholds per model and version
["local:m"."0.1"]
min_detection = { cousin = 0.5 }
max_error_rate = 0.0

["local:m"."0.2"]
max_error_rate = 0.1
min_detection = { sign_flip = 0.5, cousin = 0.9 }
noise_floor = { "max_sd.core" = 1.0, "max_sd.core_total" = 1.4, min_flag_stability = 0.8 }
sme = { min_kappa = 0.15 }
"""


def gate(name: str) -> Gate:
    return Gate(name, wilson(0, 4), 0.5, True)


@pytest.mark.parametrize(
    ("name", "version", "line"),
    [
        ("detection[cousin]", "0.1", 3),
        ("detection[cousin]", "0.2", 8),
        ("detection[sign_flip]", "0.2", 8),
        ("error_rate", "0.1", 4),
        ("error_rate", "0.2", 7),
        ("noise_floor.max_sd.core_total", "0.2", 9),
        ("noise_floor.min_flag_stability", "0.2", 9),
        ("sme.min_kappa", "0.2", 10),
        # No line sets it in that table: the table's header.
        ("control_false_positive", "0.2", 6),
        ("detection[fabrication]", "0.1", 2),
    ],
)
def test_gate_line_is_the_line_that_sets_the_threshold(
    tmp_path: Path, name: str, version: str, line: int
) -> None:
    path = tmp_path / "gates.toml"
    path.write_text(GATES, encoding="utf-8")

    assert gate_line(path, "local:m", version, gate(name)) == line


def test_gate_line_does_not_take_a_prefix_of_another_key(tmp_path: Path) -> None:
    path = tmp_path / "gates.toml"
    path.write_text('["local:m"."0.2"]\nnoise_floor = { "max_sd.core_total" = 1.4 }\n')

    # `max_sd.core` is not set: the header, not the line of `max_sd.core_total`.
    assert gate_line(path, "local:m", "0.2", gate("noise_floor.max_sd.core")) == 1


def test_gate_line_of_an_unknown_table_is_none(tmp_path: Path) -> None:
    path = tmp_path / "gates.toml"
    path.write_text(GATES, encoding="utf-8")

    assert gate_line(path, "local:m", "9.9", gate("error_rate")) is None
    assert gate_line(path, "openai:x", "0.1", gate("error_rate")) is None


def test_gate_key_of_every_gate_kind() -> None:
    assert gate_key(gate("detection[sign_flip]")) == ("min_detection", "sign_flip")
    assert gate_key(gate("control_false_positive")) == ("max_control_false_positive", None)
    assert gate_key(gate("test_retest.min_kappa.core")) == ("test_retest", "min_kappa.core")


def test_item_line_finds_the_item_and_skips_other_lines(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    lines = [json.dumps({"id": "PE-01"}), "", "not json", json.dumps({"id": "PE-10"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert item_line(path, "PE-10") == 4
    assert item_line(path, "PE-01") == 1
    assert item_line(path, "PE-1") is None


def test_annotation_escapes_what_github_would_misread() -> None:
    note = Annotation("planted_sets/a,b/gates.toml", 3, "gate failed: x", "50% below\nthe gate")

    assert note.command() == (
        "::error file=planted_sets/a%2Cb/gates.toml,line=3,title=gate failed%3A x::"
        "50%25 below%0Athe gate"
    )
    assert Annotation("f", None, "t", "m").command() == "::error file=f,title=t::m"


def test_publish_writes_nothing_without_the_variables(tmp_path: Path) -> None:
    assert publish([], tmp_path, tmp_path, environ={}) == []
    assert list(tmp_path.iterdir()) == []


def test_publish_appends_the_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("before\n", encoding="utf-8")

    publish([], tmp_path, tmp_path, environ={"GITHUB_STEP_SUMMARY": str(summary)})

    text = summary.read_text(encoding="utf-8")
    assert text.startswith("before\n## Judge verdicts\n")
    assert "Failed gates" not in text


def test_an_unwritable_summary_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "summary.md"

    lines = publish([], tmp_path, tmp_path, environ={"GITHUB_STEP_SUMMARY": str(missing)})

    assert len(lines) == 1
    assert lines[0].startswith(f"::warning::could not append the step summary to {missing}: ")
