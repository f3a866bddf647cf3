"""`corpus import FORMAT SOURCE`: the generic JSONL/CSV reader and Inspect's logs mapped onto
the corpus, on logs Inspect itself wrote (tests/fixtures/inspect/, read here as JSON without
inspect_ai; the proof reads `.eval` logs through inspect_ai), with every hostile case refused
or counted, never dropped."""

from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main
from judges.corpus.importers.corpus_writer import SCORE_FORMS, write_corpus
from judges.corpus.importers.inspect_log import header_from_dict, map_samples, score_value
from judges.corpus.manifest import CorpusError
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus
from judges.storage.files import read_json

FIXTURES = Path(__file__).parent / "fixtures" / "inspect"
LOGS = ("alpha.json", "beta.json")


def _log(name: str) -> dict[str, Any]:
    return read_json(FIXTURES / name)


def _mapped(logs: list[tuple[str, dict[str, Any]]], **options: Any) -> Any:
    return map_samples(
        ((header_from_dict(Path(name), log), log["samples"]) for name, log in logs),
        "fixtures", **options,
    )  # fmt: skip


def _means(folder: Path) -> dict[tuple[str, str], tuple[float, int, int]]:
    report = build_report(load_corpus(folder))
    return {
        (summary.judge, s.system): (s.score.mean, s.score.n, s.errors)
        for summary in report.judges
        for s in summary.scores
    }


def test_inspect_logs_map_models_samples_scorers_epochs_and_the_reviewers_labels(
    tmp_path: Path,
) -> None:
    rows = _mapped([(name, _log(name)) for name in LOGS])
    written = write_corpus(rows, tmp_path / "inspect", "inspect")
    corpus = load_corpus(written.folder)
    assert corpus.systems == ("mockllm/alpha", "mockllm/beta")
    assert set(corpus.manifest.judges) == {"model_graded_qa", "match"}  # "human" is no judge
    # 2 systems x 4 samples x 2 epochs x 2 scorers; each epoch its own run.
    assert len(corpus.judgements) == 32
    assert {j.run for j in corpus.judgements} == {0, 1}
    assert len(corpus.labels) == 8
    # Every figure against the log itself: each sample's value as Inspect wrote it.
    for name in LOGS:
        log = _log(name)
        model = log["eval"]["model"]
        for scorer in ("model_graded_qa", "match"):
            values = [score_value(s["scores"][scorer]["value"])[0] for s in log["samples"]
                      if s["epoch"] == 1]  # fmt: skip
            mean, n, errors = _means(written.folder)[scorer, model]
            assert (n, errors) == (4, 0)
            assert mean == pytest.approx(sum(values) / len(values))  # type: ignore[arg-type]
    # The grader's verdicts that make_log.py scripted (GRADE: C/I per question).
    assert _means(written.folder)["model_graded_qa", "mockllm/alpha"][0] == 0.75
    assert _means(written.folder)["match", "mockllm/beta"][0] == 0.5
    inputs = {item.id: item.inputs for item in corpus.items}
    assert inputs["q4"]["input"] == "Élan — 5 \u00d7 3?"


def test_inspect_literals_read_as_inspects_value_to_float_reads_them() -> None:
    assert [score_value(v)[0] for v in ("C", "P", "I", "N", "yes", "False", "0.25", True, 3)] == [
        1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.25, 1.0, 3.0,
    ]  # fmt: skip
    # What Inspect would read as 0 with a warning is an error here, with its reason.
    assert score_value("maybe") == (None, f"value 'maybe' is not a score ({SCORE_FORMS})")
    assert score_value(float("nan"))[1] == "score NaN in the log"
    assert score_value([1, 0])[1] == f"a list value is not a score ({SCORE_FORMS})"


def _hostile(edit: Any) -> dict[str, Any]:
    log = copy.deepcopy(_log("alpha.json"))
    edit(log)
    return log


def test_a_missing_score_a_nan_an_errored_sample_and_odd_values_are_error_rows(
    tmp_path: Path,
) -> None:
    def damage(log: dict[str, Any]) -> None:
        sample = {(s["id"], s["epoch"]): s for s in log["samples"]}
        del sample["q1", 1]["scores"]["match"]  # the scorer gave nothing
        sample["q2", 1]["scores"]["match"]["value"] = float("nan")
        sample["q3", 1]["scores"] = {}
        sample["q3", 1]["error"] = {"message": "RuntimeError: the tool crashed"}
        sample["q1", 2]["scores"]["match"]["value"] = "maybe"
        sample["q2", 2]["scores"]["match"]["value"] = ["C", "I"]

    rows = _mapped([("alpha.json", _hostile(damage))])
    folder = write_corpus(rows, tmp_path / "hostile", "hostile").folder
    errors = [j for j in load_corpus(folder).judgements if j.error is not None]
    reasons = sorted(j.error or "" for j in errors if j.judge == "match")
    assert reasons == [
        f"a list value is not a score ({SCORE_FORMS})",
        "no score from this scorer in the log",
        "score NaN in the log",
        "the sample errored: RuntimeError: the tool crashed",
        f"value 'maybe' is not a score ({SCORE_FORMS})",
    ]
    assert sum(j.judge == "model_graded_qa" for j in errors) == 1  # the errored sample
    _, n, errored = _means(folder)["match", "mockllm/alpha"]
    assert (n, errored) == (1, 3)  # run 0: q4 scored; q1, q2, q3 error rows, counted


def test_a_sample_id_given_twice_and_a_log_imported_twice_are_refused(tmp_path: Path) -> None:
    def twice(log: dict[str, Any]) -> None:
        log["samples"][1]["id"] = log["samples"][0]["id"]

    with pytest.raises(CorpusError, match=r"sample 'q1' epoch 1 .* is also at .*sample 'q1'"):
        write_corpus(_mapped([("alpha.json", _hostile(twice))]), tmp_path / "a", "a")
    again = [("alpha.json", _log("alpha.json")), ("copy.json", _log("alpha.json"))]
    with pytest.raises(CorpusError, match=r"copy.json: sample 'q1'.*also at alpha.json"):
        write_corpus(_mapped(again), tmp_path / "b", "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_two_labels_of_one_output_that_differ_are_refused(tmp_path: Path) -> None:
    def relabel(log: dict[str, Any]) -> None:
        second = next(s for s in log["samples"] if s["id"] == "q1" and s["epoch"] == 2)
        second["scores"]["human"] = {"value": 0}

    with pytest.raises(CorpusError, match=r"labelled 0 here and 1 at .*keep one label"):
        write_corpus(_mapped([("alpha.json", _hostile(relabel))]), tmp_path / "c", "c")


NASTY = ("mockllm/ünï\u2028cödé 🙂", "../../etc", "a\tb\"c'\\")


@pytest.mark.parametrize("model", NASTY)
def test_any_unicode_model_and_sample_name_round_trips(tmp_path: Path, model: str) -> None:
    def rename(log: dict[str, Any]) -> None:
        log["eval"]["model"] = model
        for sample in log["samples"]:
            sample["id"] = f"{model}/{sample['id']}"

    folder = write_corpus(_mapped([("alpha.json", _hostile(rename))]), tmp_path / "u", "u").folder
    corpus = load_corpus(folder)
    assert corpus.systems == (model,)
    assert {i.id for i in corpus.items} == {f"{model}/q{n}" for n in (1, 2, 3, 4)}
    assert not any(p.name != "u" for p in tmp_path.iterdir())  # nothing outside the folder


def test_a_scorer_with_a_dict_value_gives_a_judge_per_key(tmp_path: Path) -> None:
    def split(log: dict[str, Any]) -> None:
        for sample in log["samples"]:
            sample["scores"]["match"]["value"] = {"exact": "C", "partial": 0.5}

    corpus = load_corpus(write_corpus(
        _mapped([("alpha.json", _hostile(split))]), tmp_path / "d", "d"
    ).folder)  # fmt: skip
    assert set(corpus.manifest.judges) == {"model_graded_qa", "match/exact", "match/partial"}
    assert corpus.manifest.scale.step == 0.5  # partial credit: three levels


def test_samples_a_log_lacks_are_counted_and_named(tmp_path: Path) -> None:
    def cut(log: dict[str, Any]) -> None:
        log["status"] = "error"
        del log["samples"][5:]

    rows = _mapped([("alpha.json", _hostile(cut))])
    assert dict(rows.unmapped) == {
        "samples alpha.json does not hold (the eval planned 8, ended 'error')": 3
    }


def test_without_inspect_ai_the_command_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    argv = ["corpus", "import", "inspect", str(FIXTURES), "--corpora", str(tmp_path)]
    assert main(argv) == 2
    assert "pip install 'pytest-judges[inspect]'" in capsys.readouterr().err


# The generic reader.

CSV = (
    "model,question,grader,verdict,reviewer,latency\n"
    "gpt-a,Q1,rubric,pass,1,0.3\n"
    "gpt-a,Q2,rubric,fail,0,0.4\n"
    "gpt-b,Q1,rubric,1,1,0.2\n"
    "gpt-b,Q2,rubric,,,0.9\n"
    '"gpt-\u2028c",Q1,rubric,0,,0.1\n'
)
MAP = ["--map", "system=model", "--map", "item=question", "--map", "judge=grader",
       "--map", "score=verdict", "--map", "label=reviewer"]  # fmt: skip


def _import(tmp_path: Path, source: Path, *extra: str) -> int:
    fmt = source.suffix.lstrip(".")
    return main(["corpus", "import", fmt, str(source), "--corpora", str(tmp_path / "corpora"),
                 "--name", "mine", *extra])  # fmt: skip


def test_a_csv_by_a_stated_mapping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "grades.csv"
    source.write_text(CSV, encoding="utf-8")
    assert _import(tmp_path, source, *MAP) == 0
    out = capsys.readouterr().out
    assert "imported 5 judgements (1 error rows kept) of 3 systems on 2 items by 1 judges" in out
    assert "3 human labels" in out
    assert "not imported: 5 values of the column 'latency' (no --map names it)" in out
    corpus = load_corpus(tmp_path / "corpora" / "mine")
    assert corpus.systems == ("gpt-a", "gpt-b", "gpt-\u2028c")
    assert [j.error for j in corpus.judgements if j.score is None] == ["no score in the log"]


def test_a_jsonl_with_nested_columns_runs_and_nan(tmp_path: Path) -> None:
    rows = [
        {"system": "s", "item": "i1", "judge": "j", "grading": {"score": 0.5}, "run": 0},
        {"system": "s", "item": "i1", "judge": "j", "grading": {"score": 1}, "run": 1},
        {"system": "s", "item": "i2", "judge": "j", "grading": {"score": math.nan}},
    ]
    source = tmp_path / "log.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert _import(tmp_path, source, "--map", "score=grading.score") == 0
    corpus = load_corpus(tmp_path / "corpora" / "mine")
    assert [(j.run, j.score, j.error) for j in corpus.judgements] == [
        (0, 0.5, None), (1, 1.0, None), (0, None, "score NaN in the log"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"system": "s", "system": "t", "item": "i", "judge": "j", "score": 1}\n',
         "log.jsonl:1: the key 'system' appears twice"),
        ('{"system": "s", "item": "i", "score": 1}\n', "log.jsonl:1: no judge (column 'judge')"),
        ('{"system": "s", "item": "i", "judge": "j", "score": "good"}\n',
         "log.jsonl:1: score value 'good' is not a score (a number, or pass/fail"),
        ('{"system": "s", "item": "i", "judge": "j", "score": 1}\n{"system": "s", "item"',
         "log.jsonl:2: not JSON"),
        ('{"system": "s", "item": "i", "judge": "j", "score": 7}\n',
         "log.jsonl:1: score 7 is off the scale [0, 1]"),
        ('{"system": "s", "item": "i", "judge": "j", "score": 1}\n' * 2,
         "log.jsonl:2: s on i by j run 0 is also at"),
    ],
)  # fmt: skip
def test_a_bad_jsonl_is_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    source = tmp_path / "log.jsonl"
    source.write_text(text, encoding="utf-8")
    assert _import(tmp_path, source, "--low", "0", "--high", "1", "--step", "1") == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "corpora" / "mine").exists()


def test_a_csv_with_a_column_twice_or_a_cut_row_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "grades.csv"
    source.write_text("system,item,judge,score,score\ns,i,j,1,0\n", encoding="utf-8")
    assert _import(tmp_path, source) == 2
    assert "grades.csv:1: the column 'score' is named twice" in capsys.readouterr().err
    source.write_text("system,item,judge,score\ns,i,j,1\ns,i2\n", encoding="utf-8")
    assert _import(tmp_path, source) == 2
    assert "grades.csv:3: 2 cells for 4 columns" in capsys.readouterr().err


def test_scores_off_pass_fail_need_the_scale_stated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "grades.csv"
    source.write_text("system,item,judge,score\ns,i,j,7\ns,i2,j,3\n", encoding="utf-8")
    assert _import(tmp_path, source) == 2
    assert "they span [3, 7]; state the scale with --low and --high" in capsys.readouterr().err
    assert _import(tmp_path, source, "--low", "1", "--high", "10", "--step", "1") == 0
    scale = load_corpus(tmp_path / "corpora" / "mine").manifest.scale
    assert (scale.low, scale.high, scale.step, scale.verdict) == (1, 10, 1, "level")


def test_a_failed_import_keeps_the_corpus_there_and_replace_swaps_it_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "grades.csv"
    source.write_text(CSV, encoding="utf-8")
    assert _import(tmp_path, source, *MAP) == 0
    folder = tmp_path / "corpora" / "mine"
    before = (folder / "judgements.jsonl").read_bytes()
    assert _import(tmp_path, source, *MAP) == 2  # there already, no --replace
    assert "already there; pass --replace" in capsys.readouterr().err
    source.write_text(CSV + "gpt-d,Q1,rubric,maybe,,0\n", encoding="utf-8")
    assert _import(tmp_path, source, *MAP, "--replace") == 2
    assert (folder / "judgements.jsonl").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "corpora").iterdir()) == ["mine"]  # no leftovers
    source.write_text(CSV.replace("gpt-b,Q1,rubric,1", "gpt-b,Q1,rubric,0"), encoding="utf-8")
    assert _import(tmp_path, source, *MAP, "--replace") == 0
    assert "replaced the corpus" in capsys.readouterr().out
    assert (folder / "judgements.jsonl").read_bytes() != before


def test_alpaca_evals_repository_layout_imports_as_its_release_does(tmp_path: Path) -> None:
    records = [{"instruction": f"Q{n}", "dataset": "d", "generator_1": "ref",
                "generator_2": "sys", "preference": 1 + n % 2} for n in range(3)]  # fmt: skip
    for layout, path in (("release", "annotations/sys/ann.json"),
                         ("repository", "results/sys/ann/annotations.json")):  # fmt: skip
        file = tmp_path / layout / path
        file.parent.mkdir(parents=True)
        file.write_text(json.dumps(records), encoding="utf-8")
        argv = ["corpus", "import", "alpaca-eval", str(tmp_path / layout), "--corpora",
                str(tmp_path / "corpora"), "--name", layout]  # fmt: skip
        assert main(argv) == 0
    release, repository = (tmp_path / "corpora" / n / "judgements.jsonl" for n in
                           ("release", "repository"))  # fmt: skip
    assert release.read_bytes() == repository.read_bytes()


def test_an_option_another_format_reads_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["corpus", "import", "inspect", str(FIXTURES), "--corpora", str(tmp_path)]
    assert main([*argv, "--map", "system=model", "--experiment", "x"]) == 2
    err = capsys.readouterr().err
    assert "--map, --experiment: not an option of `corpus import inspect`" in err


@pytest.mark.parametrize("name", ["..", "../elsewhere", "a/b"])
def test_a_corpus_name_that_leads_out_of_the_corpora_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    source = tmp_path / "grades.csv"
    source.write_text("system,item,judge,score\n..,../x,j,1\n", encoding="utf-8")
    argv = ["corpus", "import", "csv", str(source), "--corpora", str(tmp_path / "corpora")]
    assert main([*argv, "--name", name]) == 2
    assert "is not a folder name under" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists() and not (tmp_path / "corpora").exists()
    assert main(argv) == 0  # the same rows under the source's own name: names are data
    corpus = load_corpus(tmp_path / "corpora" / "grades")
    assert (corpus.systems, corpus.items[0].id) == ((("..",)), "../x")


def test_a_csv_nan_is_an_error_row_and_a_row_given_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "grades.csv"
    source.write_text("system,item,judge,score\ns,i1,j,1\ns,i2,j,NaN\n", encoding="utf-8")
    assert _import(tmp_path, source) == 0
    corpus = load_corpus(tmp_path / "corpora" / "mine")
    assert [(j.item, j.score, j.error) for j in corpus.judgements] == [
        ("i1", 1.0, None), ("i2", None, "score NaN in the log"),
    ]  # fmt: skip
    source.write_text("system,item,judge,score\ns,i1,j,1\ns,i1,j,0\n", encoding="utf-8")
    assert _import(tmp_path, source, "--replace") == 2
    err = capsys.readouterr().err
    assert "grades.csv:3: s on i1 by j run 0 is also at" in err and "grades.csv:2" in err


def test_a_jsonl_with_any_unicode_names_round_trips(tmp_path: Path) -> None:
    names = {"system": "ünï\u2028cödé 🙂", "item": "q\u2029\u00851", "judge": "a\tb\"c'\\"}
    source = tmp_path / "log.jsonl"
    source.write_text(json.dumps({**names, "score": 1}, ensure_ascii=False) + "\n",
                      encoding="utf-8")  # fmt: skip
    assert _import(tmp_path, source) == 0
    [row] = load_corpus(tmp_path / "corpora" / "mine").judgements
    assert (row.system, row.item, row.judge, row.score) == (*names.values(), 1.0)
    assert not any(p.name != "corpora" for p in tmp_path.iterdir() if p.is_dir())
