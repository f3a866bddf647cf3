"""reports/index.html: every judge, prompt version and model on one page, written by the
same run as the reports, checked by --check-reports, and readable on one screen."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from judges.reports.write import disk_reports
from tests._chromium import chromium, needs_chromium, page_errors, png_size, widest_run

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"
OVERVIEW = REPORTS / "index.html"
# The verdict badges' backgrounds (render/overview.py) and the first-screen card's border.
BADGES = {
    "PASS": (0xDA, 0xFB, 0xE1),
    "NOT FIT": (0xFF, 0xF1, 0xE5),
    "INCOMPLETE": (0xEA, 0xEE, 0xF2),
}
FIRST_CARD = (0x09, 0x69, 0xDA)


def _reports() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(REPORTS.glob("*/*/report.json"))]


def test_the_overview_lists_every_judge_version_and_model() -> None:
    page = OVERVIEW.read_text(encoding="utf-8")
    assert "<script" not in page and "http" not in page.replace("https://", "")
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    rows = body.split("<tr>")[1:]
    expected = [(r["judge"], r["prompt_version"], m) for r in _reports() for m in r["models"]]
    assert len(rows) == len(expected)
    for judge, version, m in expected:
        assert f">{m['model']}<" in "".join(rows)
        assert f'href="{judge}/{version}/index.html"' in page
        assert (REPORTS / judge / version / "index.html").is_file()
    for r in _reports():
        for m in r["models"]:
            d = m["all_defects"]
            if d["n"]:  # detection with its interval, as report.json has it
                assert f"{d['successes']}/{d['n']} = {d['rate']:.2f} [{d['low']:.2f}, " in page
            assert m["verdict_label"] in page
        for reason in r["first_screen"]["reasons"][:5]:
            assert reason.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in page
    # An accepted baseline worse than the prompt before it is flagged in its row.
    assert "baseline worse than 0.3</span>" in page
    # Cost per 1,000 judgements where tokens were counted, and why time is not shown.
    assert "$0.0000; -" in page and "unknown; -" in page


def test_the_run_writes_and_checks_the_overview_byte_for_byte() -> None:
    built = disk_reports(REPORTS, ROOT / "planted_sets")
    assert OVERVIEW in built.files
    assert built.files[OVERVIEW] == OVERVIEW.read_text(encoding="utf-8")
    checked = built.check()
    assert OVERVIEW not in checked.differing
    # Rebuilt for one judge only, the page still lists every judge (from the disk).
    one = disk_reports(REPORTS, ROOT / "planted_sets", judge="geval")
    assert one.files[OVERVIEW] == built.files[OVERVIEW]


def test_a_stale_overview_is_named_by_the_check(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "reports"
    shutil.copytree(REPORTS, copy)
    (copy / "index.html").write_text("stale", encoding="utf-8")
    checked = disk_reports(copy, ROOT / "planted_sets").check()
    assert checked.differing == (copy / "index.html",)


def _badges(image: Image.Image, colour: tuple[int, int, int]) -> int:
    """Badges of `colour`: runs along a vertical line through their left padding (no text
    there), so each badge counts once however close the rows are."""
    xs = [
        x
        for y in range(image.height)
        for x in range(image.width)
        if image.getpixel((x, y)) == colour
    ]
    if not xs:
        return 0
    x = min(xs) + 4
    inside = [image.getpixel((x, y)) == colour for y in range(image.height)]
    return sum(1 for y, hit in enumerate(inside) if hit and (y == 0 or not inside[y - 1]))


@needs_chromium
def test_every_verdict_is_visible_without_scrolling(tmp_path: Path) -> None:
    shot = tmp_path / "overview.png"
    done = chromium(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,800",
                    OVERVIEW.as_uri())  # fmt: skip
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    assert png_size(shot) == (1280, 800)
    assert page_errors(done.stderr) == []
    image = Image.open(shot).convert("RGB")
    words = [m["verdict_word"] for r in _reports() for m in r["models"]]
    for word, colour in BADGES.items():
        assert _badges(image, colour) == words.count(word), word


@needs_chromium
@pytest.mark.parametrize("report", ["product_identity/0.3.1", "relevance/1.1", "geval/1.0"])
def test_a_reports_answer_is_on_its_first_screen(tmp_path: Path, report: str) -> None:
    page = REPORTS / report / "index.html"
    shot = tmp_path / "report.png"
    done = chromium(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,800",
                    page.as_uri())  # fmt: skip
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    # The NOT FIT banner near the top, and the first-screen card (its blue left border)
    # starting and ending inside the 800 pixels: reasons and deciding figures are visible.
    assert widest_run(image, (0xFF, 0xF1, 0xE5), range(60, 200, 4)) > 1000
    column = [
        y
        for y in range(image.height)
        if any(image.getpixel((x, y)) == FIRST_CARD for x in range(40, 120))
    ]
    assert column, "no first-screen card on the first screen"
    assert column[-1] < image.height - 10, "the first-screen card runs past the screen"
    html = page.read_text(encoding="utf-8")
    assert re.search(r"<li>", html[html.index('class="card first"') :])
