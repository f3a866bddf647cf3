"""`corpus import promptfoo` on the JSONL `promptfoo eval --output results.jsonl` writes (one
result per line: tests/fixtures/promptfoo/results.jsonl, written by promptfoo 0.121.20 with
make_results.py there): the same mapping as the JSON output, each row named by its line, and
hostile files (a cut line, a line given twice, a null or NaN score, any Unicode name)
refused or kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus

RESULTS = Path(__file__).parent / "fixtures" / "promptfoo" / "results.jsonl"


def _import(tmp_path: Path, source: Path, *extra: str) -> int:
    return main(["corpus", "import", "promptfoo", str(source), "--corpora",
                 str(tmp_path / "corpora"), "--name", "pf", *extra])  # fmt: skip


def _lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RESULTS.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, results: list[dict[str, Any]], name: str = "results.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results),
                    encoding="utf-8")  # fmt: skip
    return path


def _components(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(c["assertion"].get("metric") or c["assertion"]["type"]): c
            for c in result["gradingResult"]["componentResults"]}  # fmt: skip


def test_each_line_is_a_result_and_the_figures_are_the_lines_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _import(tmp_path, RESULTS) == 0
    assert "imported 16 judgements (0 error rows kept) of 2 systems on 4 items by 2 judges " in (
        capsys.readouterr().out
    )
    report = build_report(load_corpus(tmp_path / "corpora" / "pf"))
    means = {(j.judge, s.system): (s.score.mean, s.score.n) for j in report.judges
             for s in j.scores}  # fmt: skip
    for judge in ("correct", "icontains"):
        for provider in ("echo", "answers-v1"):
            scores = [_components(r)[judge]["score"] for r in _lines()
                      if r["provider"]["id"] == provider]  # fmt: skip
            assert means[judge, provider] == pytest.approx((sum(scores) / len(scores), 4))


def test_the_same_results_as_one_json_document_import_alike(tmp_path: Path) -> None:
    document = {"evalId": "eval-1", "results": {"results": _lines()}}
    as_json = tmp_path / "results.json"
    as_json.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    assert _import(tmp_path / "a", RESULTS) == 0
    assert _import(tmp_path / "b", as_json) == 0
    for name in ("judgements.jsonl", "items.jsonl", "outputs.jsonl"):
        a = (tmp_path / "a" / "corpora" / "pf" / name).read_text(encoding="utf-8")
        assert a == (tmp_path / "b" / "corpora" / "pf" / name).read_text(encoding="utf-8")


def test_a_cut_last_line_is_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(RESULTS.read_text(encoding="utf-8")[:-200], encoding="utf-8")
    assert _import(tmp_path, path) == 2
    assert f"{path}:8: not JSON" in capsys.readouterr().err
    assert not (tmp_path / "corpora" / "pf").exists()


def test_a_line_given_twice_is_refused_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines()
    assert _import(tmp_path, _write(tmp_path, [*lines, lines[0]])) == 2
    err = capsys.readouterr().err
    assert "results.jsonl:9 assertion 'correct'" in err and "is also at" in err
    assert "results.jsonl:1 assertion 'correct'" in err


def test_a_null_and_a_nan_score_are_error_rows_a_line_without_test_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines()
    component = _components(lines[0])["correct"]
    component.pop("pass")
    component["score"] = None
    _components(lines[1])["correct"]["score"] = float("nan")  # json.dumps writes NaN
    del lines[2]["testIdx"]
    assert _import(tmp_path, _write(tmp_path, lines)) == 0
    assert "not imported: 1 results with no testIdx" in capsys.readouterr().out
    errors = sorted(j.error or "" for j in load_corpus(tmp_path / "corpora" / "pf").judgements
                    if j.error)  # fmt: skip
    assert errors == ["no score nor pass in the log", "score NaN in the log"]


def test_any_unicode_provider_label_inside_a_line(tmp_path: Path) -> None:
    lines = _lines()
    for result in lines:
        result["provider"]["label"] = f"ünï\u2028{result['provider']['id']}\u0085 🙂"
    assert _import(tmp_path, _write(tmp_path, lines)) == 0
    systems = load_corpus(tmp_path / "corpora" / "pf").systems
    assert set(systems) == {f"ünï\u2028{p}\u0085 🙂" for p in ("echo", "answers-v1")}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            '{"results": {"results": []}}\n',
            "no line is a promptfoo result (an object with a testIdx)",
        ),
        ("", "no line is a promptfoo result"),
        ('{"testIdx": 0, "testIdx": 1}\n', "results.jsonl:1: the key 'testIdx' appears twice"),
    ],
)
def test_a_jsonl_that_is_no_promptfoo_output_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(text, encoding="utf-8")
    assert _import(tmp_path, path) == 2
    err = capsys.readouterr().err
    assert str(path) in err and says in err
