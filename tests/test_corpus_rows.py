"""The corpus loader refuses what it cannot read as documented, naming the file and the line
(`path:line`) or, for corpus.toml, the field; and what it accepts it keeps whole: an error
row is a row, counted, never dropped."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judges.corpus.manifest import CorpusError
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus
from judges.corpus.table import score_matrices

MANIFEST = """name = "tiny"
source = "written for this test"
licence = "unknown"

[scale]
low = 0
high = 1
verdict = "side"
midpoint = 0.5

[judges.old]
[judges.new]
"""
ITEMS = ("i1", "i2", "i3")


def _jsonl(path: Path, rows: list[dict[str, Any] | str]) -> None:
    """Rows as JSON lines; a str is written as it is (a line JSON cannot say otherwise)."""
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )


def _corpus(
    folder: Path,
    judgements: list[dict[str, Any] | str],
    manifest: str = MANIFEST,
    **extra: list[dict[str, Any] | str],
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.toml").write_text(manifest, encoding="utf-8")
    _jsonl(folder / "items.jsonl", [{"id": item, "inputs": {"q": item}} for item in ITEMS])
    _jsonl(folder / "judgements.jsonl", judgements)
    for name, rows in extra.items():
        _jsonl(folder / f"{name}.jsonl", rows)
    return folder


def _good() -> list[dict[str, Any] | str]:
    return [
        {"system": "a", "item": "i1", "judge": "old", "score": 1.0},
        {"system": "a", "item": "i2", "judge": "old", "score": 0},
    ]


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"score": "0.5"}, "score"),  # a string for a number
        ('{"system": "a", "item": "i3", "judge": "old", "score": NaN}', "not a finite number"),
        ('{"system": "a", "item": "i3", "judge": "old", "score": Infinity}', "not a finite"),
        ({"score": True}, "score"),  # a bool is no number either
        ({"score": 1.7}, "off the scale [0, 1]"),
        ({"score": -0.1}, "off the scale [0, 1]"),
        ({"score": 0.5, "error": "timed out"}, "exactly one"),
        ({}, "exactly one"),  # neither a score nor an error
        ({"judge": "nosuch", "score": 0.5}, "'nosuch' is not in corpus.toml"),
        ({"item": "i9", "score": 0.5}, "'i9' is not in items.jsonl"),
        ({"run": -1, "score": 0.5}, "run"),
        ({"score": 0.5, "note": "x"}, "note"),  # a field the format does not have
        ('{"system": "a", "item": "i3", "judge": "old", "score": 0.5', "not JSON"),
        ('{"system": "a", "item": "i3", "judge": "old", "score": 0.5, "score": 1}', "twice"),
    ],
)
def test_a_bad_judgement_is_refused_with_its_file_and_line(
    tmp_path: Path, bad: dict[str, Any] | str, says: str
) -> None:
    row: dict[str, Any] | str = (
        bad if isinstance(bad, str) else {"system": "a", "item": "i3", "judge": "old", **bad}
    )
    # A blank line first: the line named is the file's line, not the row's index.
    folder = _corpus(tmp_path / "c", [*_good(), "", row])
    with pytest.raises(CorpusError) as refused:
        load_corpus(folder)
    message = str(refused.value)
    assert message.startswith(f"{folder / 'judgements.jsonl'}:4: "), message
    assert says in message


def test_a_duplicate_judgement_names_both_lines_and_a_second_run_is_not_one(
    tmp_path: Path,
) -> None:
    again = {"system": "a", "item": "i1", "judge": "old", "score": 0.0}
    folder = _corpus(tmp_path / "c", [*_good(), again])
    with pytest.raises(CorpusError) as refused:
        load_corpus(folder)
    message = str(refused.value)
    assert message.startswith(f"{folder / 'judgements.jsonl'}:3: ")
    assert "already judged at line 1" in message
    # The same judgement with its own run number is a repeat, not a duplicate.
    folder = _corpus(tmp_path / "d", [*_good(), {**again, "run": 1}])
    assert len(load_corpus(folder).judgements) == 3


def test_an_unknown_item_in_labels_and_outputs_and_an_off_scale_label_are_refused(
    tmp_path: Path,
) -> None:
    cases = {
        "labels": ([{"system": "a", "item": "i1", "score": 1}, {"system": "a", "item": "i7",
                    "score": 1}], "'i7' is not in items.jsonl"),
        "outputs": ([{"system": "a", "item": "i1", "output": "x"}, {"system": "a", "item": "i8",
                     "output": "y"}], "'i8' is not in items.jsonl"),
    }  # fmt: skip
    for name, (rows, says) in cases.items():
        folder = _corpus(tmp_path / name, _good(), **{name: rows})
        with pytest.raises(CorpusError, match=f"^{folder / (name + '.jsonl')}:2: .*{says}"):
            load_corpus(folder)
    folder = _corpus(tmp_path / "scale", _good(), labels=[{"system": "a", "item": "i2",
                     "score": 2}])  # fmt: skip
    with pytest.raises(CorpusError, match=r"labels\.jsonl:1: score 2.0 is off the scale"):
        load_corpus(folder)


def test_an_item_given_twice_is_refused(tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "c", _good())
    _jsonl(folder / "items.jsonl", [{"id": "i1"}, {"id": "i2"}, {"id": "i1"}])
    with pytest.raises(CorpusError, match=r"items\.jsonl:3: item 'i1' given twice"):
        load_corpus(folder)


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        (MANIFEST.replace('licence = "unknown"\n', ""), "licence: Field required"),
        (MANIFEST.replace("midpoint = 0.5\n", ""), 'scale: Value error, verdict = "side" needs'),
        (MANIFEST.replace("low = 0", "low = 2"), "scale: Value error, low < high"),
        (MANIFEST.replace('name = "tiny"', 'name = "a tiny one"'), "name: String should match"),
        (MANIFEST.replace("[judges.old]", '[judges.old]\nrefrence = "x"'), "judges.old.refrence"),
        (MANIFEST.replace("midpoint = 0.5", 'midpoint = 0.5\nfactor = "x"'), "scale.factor"),
        (MANIFEST.split("[judges.old]")[0], "judges: Field required"),
    ],
)
def test_a_bad_manifest_names_the_field(tmp_path: Path, manifest: str, field: str) -> None:
    folder = _corpus(tmp_path / "c", _good(), manifest=manifest)
    with pytest.raises(CorpusError) as refused:
        load_corpus(folder)
    message = str(refused.value)
    assert message.startswith(f"{folder / 'corpus.toml'}: ")
    assert field in message


def test_a_manifest_that_is_not_toml_or_is_missing_is_named(tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "c", _good(), manifest=MANIFEST.replace("[scale]", "[scale"))
    with pytest.raises(CorpusError, match=r"corpus\.toml: not TOML .*line 5"):
        load_corpus(folder)
    (folder / "corpus.toml").unlink()
    with pytest.raises(CorpusError, match=r"corpus\.toml: no corpus\.toml"):
        load_corpus(folder)


def test_an_error_row_is_kept_and_counted_and_a_short_system_counted_as_it_is(
    tmp_path: Path,
) -> None:
    rows: list[dict[str, Any] | str] = [
        {"system": "a", "item": "i1", "judge": "old", "score": 1.0},
        {"system": "a", "item": "i2", "judge": "old", "error": "no reply"},
        {"system": "a", "item": "i3", "judge": "old", "score": 0.0},
        {"system": "b", "item": "i2", "judge": "old", "score": 0.5},  # judged on one item only
        {"system": "b", "item": "i3", "judge": "old", "score": 1},
    ]
    corpus = load_corpus(_corpus(tmp_path / "c", rows))
    assert len(corpus.judgements) == 5
    matrix = score_matrices(corpus)["old", 0]
    assert matrix.errors == {"a": 1, "b": 0}
    np.testing.assert_array_equal(matrix.row("a"), [1.0, np.nan, 0.0])
    np.testing.assert_array_equal(matrix.row("b"), [np.nan, 0.5, 1.0])
    report = build_report(corpus)
    assert report.errors == {"old": 1}
    scores = {s.system: s for s in report.judges[0].scores}
    assert (scores["a"].score.n, scores["a"].errors, scores["a"].score.mean) == (2, 1, 0.5)
    assert (scores["b"].score.n, scores["b"].errors, scores["b"].score.mean) == (2, 0, 0.75)


def test_a_system_with_only_error_rows_is_ranked_last_with_no_figures(tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        {"system": "a", "item": "i1", "judge": "old", "error": "no reply"},
        {"system": "b", "item": "i1", "judge": "old", "score": 0.0},
        {"system": "b", "item": "i2", "judge": "old", "score": 0.5},
    ]
    summary = build_report(load_corpus(_corpus(tmp_path / "c", rows))).judges[0]
    assert [s.system for s in summary.scores] == ["b", "a"]
    last = summary.scores[-1].score
    assert last.n == 0 and math.isnan(last.mean)
    assert summary.first == {"a": 0.0, "b": 1.0}
