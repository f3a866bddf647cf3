"""A corpus's published figures gate as a benchmark's do: a figure the judgements do not
reproduce fails `corpus report` and `corpus report --check` (exit 1, the figure named), and
NaN or Infinity is no published value (refused with the file and the line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main

MANIFEST = """name = "gate"
source = "written for this test"
licence = "unknown"

[scale]
low = 0
high = 1
verdict = "side"
midpoint = 0.5
factor = 100

[judges.annotator]
reference = "ref"
"""
# sys_a wins, loses and ties: a win rate of 50 on 3 judgements.
SCORES = {"Q1": 1.0, "Q2": 0.0, "Q3": 0.5}
TRUE_FIGURES = {"mean": 50.0, "n_total": 3, "n_at": 1}


def _corpus(root: Path, figures: dict[str, Any], raw_value: str | None = None) -> list[str]:
    folder = root / "corpora" / "gate"
    folder.mkdir(parents=True)
    (folder / "corpus.toml").write_text(MANIFEST)
    items = "".join(json.dumps({"id": q, "inputs": {}}) + "\n" for q in SCORES)
    (folder / "items.jsonl").write_text(items)
    rows = [{"system": "sys_a", "item": q, "judge": "annotator", "score": s}
            for q, s in SCORES.items()]  # fmt: skip
    (folder / "judgements.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    published = [{"judge": "annotator", "system": "sys_a", "statistic": name, "value": value}
                 for name, value in figures.items()]  # fmt: skip
    text = "".join(json.dumps(r) + "\n" for r in published)
    if raw_value is not None:
        text += ('{"judge": "annotator", "system": "sys_a", "statistic": "mean", '
                 f'"value": {raw_value}}}\n')  # fmt: skip
    (folder / "published.jsonl").write_text(text)
    return ["--corpora", str(root / "corpora"), "--reports", str(root / "reports")]


def test_figures_that_agree_pass_the_report_and_its_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _corpus(tmp_path, TRUE_FIGURES)
    assert main(["corpus", "report", *args]) == 0
    assert main(["corpus", "report", "--check", *args]) == 0
    assert "not reproduced" not in capsys.readouterr().err


def test_a_figure_the_judgements_do_not_reproduce_fails_report_and_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _corpus(tmp_path, {**TRUE_FIGURES, "mean": 75.0, "n_total": 4})
    assert main(["corpus", "report", *args]) == 1
    err = capsys.readouterr().err
    assert "published.jsonl: annotator on sys_a: mean published 75.0, recomputed 50.0" in err
    assert "n_total published 4, recomputed 3.0" in err
    assert "2 published figures differ from the judgements" in err
    assert (tmp_path / "reports" / "gate" / "corpus_report.md").is_file()  # still written
    assert main(["corpus", "report", "--check", *args]) == 1
    assert "mean published 75.0" in capsys.readouterr().err


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_published_value_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: str
) -> None:
    args = _corpus(tmp_path, TRUE_FIGURES, raw_value=raw)
    assert main(["corpus", "report", "--check", *args]) == 2
    err = capsys.readouterr().err
    assert "published.jsonl:4: value: Input should be a finite number" in err
