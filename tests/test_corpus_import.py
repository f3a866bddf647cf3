"""`corpus import-alpaca-eval` on a release written here by hand: what the release says
(ties, nulls, fewer instructions, no licence file) arrives in the corpus as it is, nothing
is dropped, and a corpus already there is never replaced without `--replace`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main
from judges.corpus.alpaca_eval import item_id
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus

QUESTIONS = ("Name a prime.", "Say hello.", "Add 2 and 2.")
LEADERBOARD = (
    ",win_rate,standard_error,n_wins,n_wins_base,n_draws,n_total,discrete_win_rate\n"
    "sys_a,50.0,28.86751345948129,1,1,1,3,50.0\n"
)


def _release(root: Path, preferences: dict[str, list[Any]], licence: str | None = None) -> Path:
    for system, prefs in preferences.items():
        folder = root / "annotations" / system
        folder.mkdir(parents=True)
        records = [
            {"instruction": q, "dataset": "hand", "generator_1": "ref", "generator_2": system,
             "preference": p}
            for q, p in zip(QUESTIONS, prefs, strict=False)
        ]  # fmt: skip
        (folder / "annotator.json").write_text(json.dumps(records), encoding="utf-8")
    (root / "leaderboards").mkdir()
    (root / "leaderboards" / "annotator_leaderboard.csv").write_text(LEADERBOARD)
    if licence is not None:
        (root / "LICENSE").write_text(licence, encoding="utf-8")
    return root


def _import(release: Path, corpora: Path, *extra: str) -> int:
    argv = ["corpus", "import-alpaca-eval", str(release), "--corpora", str(corpora), *extra]
    return main([*argv, "--name", "hand"])


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_ties_nulls_and_a_short_system_arrive_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release(
        tmp_path / "release",
        # sys_a: the system wins, loses and ties (1.5); sys_b: a legacy tie (0), a null, and
        # judged on two of the three instructions only.
        {"sys_a": [2, 1, 1.5], "sys_b": [0, None]},
    )
    assert _import(release, tmp_path / "corpora") == 0
    folder = tmp_path / "corpora" / "hand"
    judgements = {(r["system"], r["item"]): r for r in _rows(folder / "judgements.jsonl")}
    ids = [item_id(q) for q in QUESTIONS]
    assert [judgements["sys_a", i]["score"] for i in ids] == [1.0, 0.0, 0.5]
    assert judgements["sys_b", ids[0]]["score"] == 0.5
    assert "score" not in judgements["sys_b", ids[1]]
    assert "null" in judgements["sys_b", ids[1]]["error"]
    assert ("sys_b", ids[2]) not in judgements  # not in the release: not invented
    assert len(judgements) == 5
    assert 'licence = "unknown"' in (folder / "corpus.toml").read_text(encoding="utf-8")
    assert not (folder / "LICENSE").exists()

    report = build_report(load_corpus(folder))
    scores = {s.system: s for s in report.judges[0].scores}
    assert (scores["sys_a"].score.n, scores["sys_a"].errors) == (3, 0)
    assert (scores["sys_b"].score.n, scores["sys_b"].errors) == (1, 1)
    # The one leaderboard row (sys_a) is recomputed from the judgements and agrees.
    published = [r for r in _rows(folder / "published.jsonl") if r["system"] == "sys_a"]
    assert {r["statistic"] for r in published} >= {"mean", "n_total", "n_at", "discrete_mean"}
    assert report.published and all(f.agrees for f in report.published), report.published


def test_a_licence_file_is_named_and_copied(tmp_path: Path) -> None:
    release = _release(
        tmp_path / "release", {"sys_a": [2, 1, 1.5]}, licence="Apache License\nVersion 2.0\n"
    )
    assert _import(release, tmp_path / "corpora") == 0
    folder = tmp_path / "corpora" / "hand"
    assert 'licence = "Apache-2.0"' in (folder / "corpus.toml").read_text(encoding="utf-8")
    assert (folder / "LICENSE").read_text(encoding="utf-8").startswith("Apache License")


def test_an_existing_corpus_is_kept_without_replace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    corpora = tmp_path / "corpora"
    assert _import(release, corpora) == 0
    judgements = corpora / "hand" / "judgements.jsonl"
    before = judgements.read_bytes()
    (release / "annotations" / "sys_a" / "annotator.json").write_text("[]")
    capsys.readouterr()
    assert _import(release, corpora) != 0
    err = capsys.readouterr().err
    assert "already there" in err and "--replace" in err
    assert judgements.read_bytes() == before


@pytest.mark.parametrize(
    ("preference", "says"),
    [("2", "is not a number"), (True, "is not a number"), (2.5, "outside [1, 2]")],
)
def test_a_bad_preference_names_the_file_and_the_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], preference: Any, says: str
) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, preference]})
    assert _import(release, tmp_path / "corpora") != 0
    err = capsys.readouterr().err
    assert "annotator.json: record 1" in err and says in err
    assert not (tmp_path / "corpora" / "hand" / "corpus.toml").exists()  # nothing half-made


def test_a_published_figure_the_judgements_do_not_give_is_reported_as_differing(
    tmp_path: Path,
) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    board = release / "leaderboards" / "annotator_leaderboard.csv"
    board.write_text(LEADERBOARD.replace("sys_a,50.0,", "sys_a,60.0,"))
    assert _import(release, tmp_path / "corpora") == 0
    report = build_report(load_corpus(tmp_path / "corpora" / "hand"))
    differing = [f for f in report.published if not f.agrees]
    assert [(f.figure.statistic, float(f.figure.value)) for f in differing] == [("mean", 60.0)]


def test_counts_written_as_floats_are_read_as_counts(tmp_path: Path) -> None:
    """pandas writes an integer column that once held a NaN as floats ("805.0"), as the
    release's alpaca_eval_cot_gpt4_turbo_fn leaderboard has it."""
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    board = release / "leaderboards" / "annotator_leaderboard.csv"
    board.write_text(LEADERBOARD.replace(",1,1,1,3,", ",1.0,1.0,1.0,3.0,"))
    assert _import(release, tmp_path / "corpora") == 0
    rows = _rows(tmp_path / "corpora" / "hand" / "published.jsonl")
    counts = {r["published_as"]: r["value"] for r in rows if r["published_as"].startswith("n_")}
    assert counts == {"n_wins": 1, "n_wins_base": 1, "n_draws": 1, "n_total": 3}
    report = build_report(load_corpus(tmp_path / "corpora" / "hand"))
    assert all(f.agrees for f in report.published)


@pytest.mark.parametrize(("cell", "says"), [("3.5", "is not a count"), ("nan", "is not a finite")])
def test_a_count_that_is_no_count_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str, says: str
) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    board = release / "leaderboards" / "annotator_leaderboard.csv"
    board.write_text(LEADERBOARD.replace(",1,1,1,3,", f",1,1,1,{cell},"))
    assert _import(release, tmp_path / "corpora") == 2
    assert f"annotator_leaderboard.csv:2: n_total {cell!r} {says}" in capsys.readouterr().err


def test_a_leaderboard_row_named_otherwise_is_pointed_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    board = release / "leaderboards" / "annotator_leaderboard.csv"
    board.write_text(LEADERBOARD.replace("sys_a,", "sys-a-v1,"))
    assert _import(release, tmp_path / "corpora") == 0
    out = capsys.readouterr().out
    assert "note: no published leaderboard row for sys_a under annotator" in out
    assert "the leaderboard has a row 'sys-a-v1'" in out


def test_replace_says_what_it_replaces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    corpora = tmp_path / "corpora"
    assert _import(release, corpora) == 0
    assert "replaced" not in capsys.readouterr().out
    assert _import(release, corpora, "--replace") == 0
    out = capsys.readouterr().out
    assert f"replaced the corpus {corpora / 'hand'}, which held 3 judgement rows" in out


def test_a_data_licence_declared_apart_from_the_code_is_the_corpus_licence(
    tmp_path: Path,
) -> None:
    """AlpacaEval's code is Apache-2.0, its README's badge declares the data CC BY-NC 4.0:
    the annotations imported are data."""
    release = _release(
        tmp_path / "release", {"sys_a": [2, 1, 1.5]}, licence="Apache License\nVersion 2.0\n"
    )
    (release / "README.md").write_text(
        "[![Data License](https://img.shields.io/badge/Data%20License-CC%20By%20NC%204.0-red.svg)]"
    )
    assert _import(release, tmp_path / "corpora") == 0
    manifest = (tmp_path / "corpora" / "hand" / "corpus.toml").read_text(encoding="utf-8")
    assert (
        'licence = "CC-BY-NC-4.0 (the data, as README.md states; the code\'s LICENSE: Apache-2.0)"'
    ) in manifest


def test_the_shipped_alpaca_eval_corpus_states_its_data_licence() -> None:
    root = Path(__file__).resolve().parent.parent
    folder = root / "planted_sets" / "corpora" / "alpaca_eval"
    assert load_corpus(folder).manifest.licence.startswith("CC-BY-NC-4.0")
    assert "CC BY-NC 4.0" in (folder / "DATA_LICENSE").read_text(encoding="utf-8")
    assert "licence: CC-BY-NC-4.0" in (
        root / "reports" / "corpora" / "alpaca_eval" / "corpus_report.md"
    ).read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "`planted_sets/corpora/alpaca_eval/` | CC BY-NC 4.0" in readme


def test_a_cut_annotations_file_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    path = release / "annotations" / "sys_a" / "annotator.json"
    path.write_text(path.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    assert _import(release, tmp_path / "corpora") != 0
    assert f"{path}:1: not a readable JSON file" in capsys.readouterr().err
    assert not (tmp_path / "corpora" / "hand").exists()


def test_a_nan_preference_is_an_error_row_saying_so(tmp_path: Path) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, float("nan"), 1]})
    assert _import(release, tmp_path / "corpora") == 0
    rows = _rows(tmp_path / "corpora" / "hand" / "judgements.jsonl")
    assert [r.get("error") for r in rows] == [None, "no preference in the release (NaN)", None]


def test_an_instruction_given_twice_is_refused_naming_both_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release(tmp_path / "release", {"sys_a": [2, 1, 1.5]})
    path = release / "annotations" / "sys_a" / "annotator.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps([*records, records[0]]), encoding="utf-8")
    assert _import(release, tmp_path / "corpora") != 0
    err = capsys.readouterr().err
    assert "annotator.json: record 3: sys_a on" in err and "is also at" in err
    assert "annotator.json: record 0" in err


def test_any_unicode_system_folder_round_trips(tmp_path: Path) -> None:
    system = "ünï\u2028cödé 🙂"
    release = _release(tmp_path / "release", {system: [2, 1, 1.5]})
    assert _import(release, tmp_path / "corpora") == 0
    assert load_corpus(tmp_path / "corpora" / "hand").systems == (system,)
