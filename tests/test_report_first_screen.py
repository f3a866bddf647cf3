"""The first screen of each built-in report answers "can I trust this judge, and what
changed?": the verdict, at most five reasons, the deciding figures, one fingerprint row per
judge, and a warning when an accepted baseline is worse than the prompt before it."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from judges.reports import terminal
from judges.reports.model.result_line import LINE_LIMIT
from judges.reports.model.summary import MAX_REASONS, first_screen
from judges.reports.render.github import summary_markdown
from judges.reports.write import disk_reports

ROOT = Path(__file__).resolve().parent.parent
BUILT_IN = sorted(p.parent for p in (ROOT / "reports").glob("*/*/report.json"))
SCREEN_LINES = 40  # a report.md screen: everything before the header table fits in it


@pytest.fixture(scope="module")
def built() -> object:
    return disk_reports(ROOT / "reports", ROOT / "planted_sets")


def _head(report_md: str) -> list[str]:
    """report.md up to its header table (`| | |`)."""
    lines = report_md.splitlines()
    return lines[: lines.index("| | |")]


@pytest.mark.parametrize("folder", BUILT_IN, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_the_answer_is_on_the_first_screen(folder: Path) -> None:
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    head = _head(report_md)
    assert len(head) <= SCREEN_LINES, len(head)
    assert head[0].endswith(f": {report['verdict_word']}")
    assert head[2] == f"**Result: {report['verdict']}**"
    bullets = [line[2:] for line in head if line.startswith("- ")]
    reasons = report["first_screen"]["reasons"]
    assert 1 <= len(bullets) <= MAX_REASONS + 1
    if len(reasons) > MAX_REASONS:
        assert bullets[-1] == f"and {len(reasons) - MAX_REASONS} more (in the sections below)"
    assert bullets[:MAX_REASONS] == reasons[:MAX_REASONS]
    figures = [line for line in head if line.startswith("| ") and not line.startswith("| Deciding")]
    assert len(figures) == len(report["first_screen"]["figures"])
    for figure in report["first_screen"]["figures"]:
        assert f"| {figure['n']} |" in "\n".join(figures)  # each with its n
        # An end may be "none": no drop up to the whole rate is seen there.
        end = r"(-?\d\.\d\d|none)"
        assert re.search(rf"\[{end}, {end}\]|undefined", figure["value"]), figure
    # One row per judge that answered: identical fingerprints share it.
    rows = [line for line in report_md.splitlines() if line.startswith("| Judge fingerprint")]
    judges = [row.rsplit(" | ", 1)[1] for row in rows]
    assert len(judges) == len(set(judges))
    assert len(rows) <= len(report["fingerprints"])
    html = (folder / "index.html").read_text(encoding="utf-8")
    why = html.index('<div class="card first">')
    assert html.index('class="banner') < why < html.index("<h2>")
    for reason in reasons[:MAX_REASONS]:
        assert reason.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;") in html


def test_identical_fingerprints_collapse_into_one_row() -> None:
    report_md = (ROOT / "reports/product_identity/0.3.1/report.md").read_text(encoding="utf-8")
    (row,) = [line for line in report_md.splitlines() if line.startswith("| Judge fingerprint")]
    assert row.startswith("| Judge fingerprint (all 8 runs: main, noise, probe-authority, ")


def test_a_baseline_worse_than_its_predecessor_says_so_everywhere(built: object) -> None:
    folder = ROOT / "reports/product_identity/0.3.1"
    warning = (
        "this accepted baseline (gates.toml) is significantly worse than prompt 0.3 at "
        "detecting planted defects: 34/46 = 0.74 -> 16/46 = 0.35"
    )
    assert f"**Warning: {warning}" in (folder / "report.md").read_text(encoding="utf-8")
    banner = re.search(r'<div class="banner[^>]*>(.*?)</div>', (folder / "index.html").read_text())
    assert banner is not None
    assert "Warning: This accepted baseline (gates.toml) is significantly worse" in banner[1]
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["first_screen"]["warning"].startswith(warning)
    (screen,) = [first_screen(f) for f in built.folders if (f.judge, f.version) == (
        "product_identity", "0.3.1")]  # fmt: skip
    assert f"WARNING {warning}" in (terminal.warning_line(screen) or "")
    assert f"**Warning: {warning}" in summary_markdown(built.folders)
    # 0.3, better than 0.2 (no significant change), and every other report: no warning.
    others = [f for f in built.folders if (f.judge, f.version) != ("product_identity", "0.3.1")]
    assert all(first_screen(f).warning is None for f in others)


def test_the_terminal_and_step_summary_end_with_each_verdict_and_its_deciding_reason(
    built: object,
) -> None:
    lines = terminal.verdict_lines(built)
    summary = summary_markdown(built.folders)
    for folder in built.folders:
        screen = first_screen(folder)
        line = terminal.why_line(screen)
        assert line in lines and len(line) <= LINE_LIMIT, line
        assert line.startswith(f"{folder.judge} {folder.version}: {screen.label.split(';')[0]}")
        assert screen.deciding is not None and screen.deciding.name in line
        assert f"- {folder.judge} {folder.version}: **{screen.result()}**." in summary
    # The verdicts are the summary's last lines, after the report check.
    summary_lines = [line for line, _ in terminal.summary_lines([], {}, {}, None, built)]
    assert summary_lines[-len(lines) :] == lines


def test_against_its_baseline_the_regression_family_alone_says_worse(built: object) -> None:
    """0.3.1 detects fewer defects than 0.3 (34/46 -> 16/46). Gated against some other
    baseline, the first screen says so in a sentence of its own; gated against 0.3 itself,
    the regression family (Holm's correction over its gates) decides that comparison, and no
    second sentence may call the same flips "significantly worse" on their own p-value."""
    (folder,) = [f for f in built.folders if (f.judge, f.version) == ("product_identity", "0.3.1")]
    (model,) = folder.models
    said = "significantly worse than prompt 0.3 at detecting planted defects"

    def trust(baseline: str) -> tuple[str, ...]:
        gated = replace(model, baseline_version=baseline)
        return first_screen(replace(folder, models=(gated,))).reasons

    assert any(said in line for line in trust("0.2"))
    assert not any(said in line for line in trust("0.3"))
