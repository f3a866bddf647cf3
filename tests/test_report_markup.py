"""Report text stays in its place: a table cell in one cell, Markdown emphasis as HTML tags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judges.core.quoting import md_cell as table_cell
from judges.reports.sections.prose import inline_html

REPORTS = Path(__file__).resolve().parents[1] / "reports"
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("*Biased* counts", "<em>Biased</em> counts"),
        ("**all** of it", "<strong>all</strong> of it"),
        ("run `probe-noise` first", "run <code>probe-noise</code> first"),
        ("`*raw*` stays", "<code>*raw*</code> stays"),
        ("2 * 3 * 4 and a*b*c", "2 * 3 * 4 and a*b*c"),
        ("<script>*x*</script>", "&lt;script&gt;<em>x</em>&lt;/script&gt;"),
        ("`<b>`", "<code>&lt;b&gt;</code>"),
    ],
)
def test_inline_markdown_becomes_escaped_html(text: str, html: str) -> None:
    assert inline_html(text) == html


def test_a_table_cell_holds_pipes_and_line_breaks() -> None:
    cell = table_cell("cpu=[SSE3 = 1 | AVX = 1]\nnext line")
    assert cell == "cpu=[SSE3 = 1 \\| AVX = 1] next line"
    assert f"| Judge fingerprint | {cell} |".count("|") - cell.count("\\|") == 3


def test_every_committed_header_row_has_two_cells() -> None:
    reports = sorted(REPORTS.glob("*/*/report.md"))
    assert reports, f"no committed reports under {REPORTS}"
    for path in reports:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("| Judge fingerprint"):
                assert len(UNESCAPED_PIPE.findall(line)) == 3, f"{path}: {line[:120]}"
