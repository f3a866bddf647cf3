"""index.html in a real browser: headless Chromium renders it without a console error.

Screenshots go to a temporary folder only; report folders never hold one.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from judges.core.results import Expectation, JudgementRow, Status
from judges.reports.model.build import build_report
from judges.reports.model.data import FolderReport
from judges.reports.render.files import render_files
from judges.verdicts.inputs import Sources
from tests._chromium import chromium, needs_chromium, page_errors, png_size, widest_run

pytestmark = needs_chromium
CATEGORIES = ("cousin", "fabrication", "dropped_edge_case", "control")


def sample_rows(version: str, shift: int) -> list[JudgementRow]:
    """Twenty-four items over four categories; `shift` moves which ones are caught."""
    rows = []
    for index in range(24):
        category = CATEGORIES[index % 4]
        met = (index + shift) % 3 != 0
        status: Status = "unparseable" if index == 5 else "ok"
        score = 1 if met else 3
        rows.append(
            JudgementRow(
                judge="demo",
                prompt_version=version,
                prompt_hash=f"hash-{version}",
                model="local:smollm2-135m",
                item_id=f"PE-{index + 1:02d}",
                category=category,
                control=category == "control",
                status=status,
                verdict=None
                if status != "ok"
                else {
                    "factual_accuracy": score,
                    "completeness": (index % 4),
                    "causal_reasoning": 1 + index % 3,
                    "rationale": "<b>not markup</b> & more",
                    "raw": json.dumps({"factual_accuracy": score}),
                },
                error=None if status == "ok" else "no JSON object in the reply",
                expect=[Expectation(field="factual_accuracy", op="<=", value=1)],
                met=met if status == "ok" else None,
            )
        )
    return rows


def failing_report(rows: list[JudgementRow], **previous: Any) -> FolderReport:
    """The sample's report with its NOT FIT accepted, as gates.toml would: the sample has
    no planted set to test it against chance, and these tests look at the FAIL page."""
    built = build_report("demo", "1.1", rows, Sources(), **previous)
    models = tuple(
        dataclasses.replace(model, accept_not_fit="a sample with no planted set")
        for model in built.models
    )
    built = dataclasses.replace(built, models=models)
    assert built.verdict_word() == "FAIL", built.verdict()
    return built


FAIL_BACKGROUND = (0xFF, 0xEB, 0xE9)  # the fail banner
NEW_FAILURE = (0xCF, 0x22, 0x2E)  # the new-failure badge of the failures section


def badge_rows(image: Image.Image, colour: tuple[int, int, int], start: int) -> list[int]:
    """Rows below `start` holding a badge-sized run (40 to 200 pixels) of `colour`."""
    return [
        y
        for y in range(start, image.height, 3)
        if 40 <= widest_run(image, colour, range(y, y + 1)) <= 200
    ]


def test_index_html_renders_in_headless_chromium(tmp_path: Path) -> None:
    folder = tmp_path / "reports" / "demo" / "1.1"
    built = failing_report(sample_rows("1.1", 1), previous=("1.0", sample_rows("1.0", 0)))
    folder.mkdir(parents=True)
    for name, text in render_files(built).items():
        (folder / name).write_text(text, encoding="utf-8")
    page = (folder / "index.html").as_uri()

    shot = tmp_path / "shots" / "shot.png"
    shot.parent.mkdir()
    rendered = chromium(
        tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2000", page
    )
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    assert shot.is_file(), rendered.stderr[-2000:]
    assert png_size(shot) == (1280, 2000)
    # A blank page compresses to a few kilobytes; charts and tables do not.
    assert shot.stat().st_size > 20_000
    assert page_errors(rendered.stderr) == []

    dom = chromium(tmp_path / "profile-dom", "--dump-dom", page)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert '<svg class="detection"' in dom.stdout
    assert 'class="histogram"' in dom.stdout
    assert "PE-" in dom.stdout  # the flipped items' table
    assert "<script" not in dom.stdout
    assert page_errors(dom.stderr) == []
    # The banner is at the top and says what failed; the failures are a section of the page.
    assert '<div class="banner fail" role="status">FAIL<span class="decides">' in dom.stdout
    assert "8 new failures" in dom.stdout
    assert '<div class="card failures">' in dom.stdout
    assert "new failure</span>" in dom.stdout


def test_banner_and_failures_section_are_visible(tmp_path: Path) -> None:
    folder = tmp_path / "reports" / "demo" / "1.1"
    folder.mkdir(parents=True)
    built = failing_report(sample_rows("1.1", 1))
    for name, text in render_files(built).items():
        (folder / name).write_text(text, encoding="utf-8")
    shot = tmp_path / "page.png"
    done = chromium(
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,5000",
        (folder / "index.html").as_uri(),
    )
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    # A band of the fail colour nearly as wide as the page near the top: the banner.
    assert widest_run(image, FAIL_BACKGROUND, range(60, 160, 4)) > 1000
    # The failures section is drawn: its eight new-failure badges, one per table row,
    # below the banner and the charts.
    found = badge_rows(image, NEW_FAILURE, 400)
    bands = [y for i, y in enumerate(found) if i == 0 or y - found[i - 1] > 12]  # one a badge
    assert len(bands) == 8, found


CORPUS_REPORTS = Path(__file__).resolve().parents[1] / "reports" / "corpora"
DOT = (0x2F, 0x5F, 0xB3)  # judges/corpus/html.py: a system's mean and its interval


def test_each_corpus_page_shows_every_judges_ranking_on_the_first_screen(tmp_path: Path) -> None:
    pages = sorted(CORPUS_REPORTS.glob("*/index.html"))
    assert pages, f"no corpus report under {CORPUS_REPORTS}"
    for page in pages:
        shot = tmp_path / f"{page.parent.name}.png"
        done = chromium(
            tmp_path / f"profile-{page.parent.name}", f"--screenshot={shot}",
            "--window-size=1280,800", page.as_uri(),
        )  # fmt: skip
        assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
        assert page_errors(done.stderr) == []
        image = Image.open(shot).convert("RGB")
        # Both judges' charts, side by side, are drawn within 1280 x 800: dots in each half.
        for half in ((0, 640), (640, 1280)):
            box = image.crop((half[0], 0, half[1], 800))
            dots = int(np.all(np.asarray(box) == DOT, axis=2).sum())
            assert dots > 200, (page, half, dots)
