"""`corpus import mlflow`'s mapping of trace assessments (judges' and humans' under one name)
onto the corpus, on traces in the neutral form the reader takes from MLflow's client; the
proof (tests/integration/test_import_mlflow.py) reads a store MLflow itself wrote."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main
from judges.corpus.importers.corpus_writer import SCORE_FORMS, write_corpus
from judges.corpus.importers.mlflow_traces import (
    feedback_value,
    item_of,
    map_traces,
    tracking_uri,
)
from judges.corpus.manifest import CorpusError
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus


def _assessment(name: str, source: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "source_type": source, "source_id": extra.pop("source_id", "s"),
            "value": value, "error": None, "valid": None, "expectation": False,
            "rationale": None, **extra}  # fmt: skip


def _trace(n: int, system: str | None, question: str, *assessments: dict[str, Any]) -> dict:
    return {"trace": f"tr-{n}", "system": system, "request": f'{{"question": "{question}"}}',
            "assessments": list(assessments)}  # fmt: skip


def _traces() -> list[dict[str, Any]]:
    return [
        _trace(1, "alpha", "q1", _assessment("correct", "LLM_JUDGE", "yes"),
               _assessment("correct", "HUMAN", True)),
        _trace(2, "alpha", "q2", _assessment("correct", "LLM_JUDGE", "no"),
               _assessment("correct", "HUMAN", True)),
        _trace(3, "beta", "q1", _assessment("correct", "LLM_JUDGE", "yes"),
               _assessment("correct", "HUMAN", False)),
        _trace(4, "beta", "q2", _assessment("correct", "LLM_JUDGE", 1)),
    ]  # fmt: skip


def test_judges_and_humans_of_one_name_become_judgements_and_labels(tmp_path: Path) -> None:
    rows = map_traces(_traces(), "mlflow.db", None)
    corpus = load_corpus(write_corpus(rows, tmp_path / "ml", "ml").folder)
    assert corpus.systems == ("alpha", "beta")
    assert len(corpus.items) == 2  # the same request is one item across systems
    assert [(j.system, j.score) for j in corpus.judgements] == [
        ("alpha", 1.0), ("alpha", 0.0), ("beta", 1.0), ("beta", 1.0),
    ]  # fmt: skip
    assert sorted(label.score for label in corpus.labels) == [0.0, 1.0, 1.0]
    [human] = build_report(corpus).human
    assert (human.exact.successes, human.exact.n) == (1, 3)


def test_errors_overrides_expectations_and_runs(tmp_path: Path) -> None:
    traces = _traces()
    traces[0]["assessments"] += [
        _assessment("correct", "LLM_JUDGE", None, error="judge timed out"),  # a second run
        _assessment("correct", "LLM_JUDGE", "yes", valid=False),  # overridden
        _assessment("expected_answer", "HUMAN", "4", expectation=True),
        _assessment("correct", "LLM_JUDGE", "maybe"),  # a third run, no score
    ]
    traces.append(_trace(5, None, "q3", _assessment("correct", "LLM_JUDGE", "yes")))
    rows = map_traces(traces, "mlflow.db", None)
    assert dict(rows.unmapped) == {
        "assessments an override superseded": 1,
        "expectations 'expected_answer' (ground-truth values, no score)": 1,
        "traces logged outside any run (no system to file them under)": 1,
    }
    corpus = load_corpus(write_corpus(rows, tmp_path / "ml", "ml").folder)
    first = [(j.run, j.score, j.error) for j in corpus.judgements if j.item == corpus.items[0].id
             and j.system == "alpha"]  # fmt: skip
    assert first == [(0, 1.0, None), (1, None, "judge timed out"),
                     (2, None, f"value 'maybe' is not a score ({SCORE_FORMS})")]  # fmt: skip


def test_several_human_names_need_labels_chosen() -> None:
    traces = _traces()
    traces[0]["assessments"].append(_assessment("tone", "HUMAN", 1))
    with pytest.raises(CorpusError, match=r"human assessments under 2 names \(correct, tone\)"):
        map_traces(traces, "mlflow.db", None)
    rows = map_traces(traces, "mlflow.db", "correct")
    assert rows.unmapped["human assessments 'tone' (--labels names another)"] == 1


def test_two_judges_of_one_name_are_told_apart_by_source_and_two_reviewers_must_agree(
    tmp_path: Path,
) -> None:
    traces = _traces()
    traces[3]["assessments"][0]["source_id"] = "other-judge"
    rows = map_traces(traces, "mlflow.db", None)
    assert set(rows.judges) == {"correct (s)", "correct (other-judge)"}
    traces = _traces()
    traces[0]["assessments"].append(_assessment("correct", "HUMAN", False, source_id="bo"))
    with pytest.raises(CorpusError, match=r"labelled 0 here and 1 at .*keep one label"):
        write_corpus(map_traces(traces, "mlflow.db", None), tmp_path / "x", "x")


def test_values_and_uris() -> None:
    assert [feedback_value(v)[0] for v in (True, "Yes", "fail", 0.25, "3")] == [
        1.0, 1.0, 0.0, 0.25, 3.0,
    ]  # fmt: skip
    assert feedback_value(float("nan"))[1] == "score NaN in the log"
    assert feedback_value({"a": 1})[0] is None
    assert tracking_uri(Path("/x/mlflow.db")) == "sqlite:////x/mlflow.db"
    assert tracking_uri(Path("/x/mlruns")) == "file:///x/mlruns"


def test_without_mlflow_the_command_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)
    argv = ["corpus", "import", "mlflow", str(tmp_path / "mlflow.db"), "--corpora", str(tmp_path)]
    assert main(argv) == 2
    assert "pip install 'pytest-judges[mlflow]'" in capsys.readouterr().err


def test_a_request_traced_twice_in_one_run_is_a_second_run(tmp_path: Path) -> None:
    traces = _traces()
    again = _trace(9, "alpha", "q1", _assessment("correct", "LLM_JUDGE", "no"))
    traces.append({**again, "time": 2})
    traces[0]["time"] = 1
    corpus = load_corpus(write_corpus(map_traces(traces, "mlflow.db", None), tmp_path / "m",
                                      "m").folder)  # fmt: skip
    first = item_of('{"question": "q1"}')[0]
    assert [(j.run, j.score) for j in corpus.judgements
            if j.system == "alpha" and j.item == first] == [(0, 1.0), (1, 0.0)]  # fmt: skip
    assert [r.before for r in build_report(corpus).retests] == ["correct run 0"]


def test_a_trace_read_twice_is_refused_not_taken_for_a_second_run() -> None:
    traces = _traces()
    traces.append(dict(traces[0]))
    with pytest.raises(
        CorpusError, match=r"trace tr-1 is read twice \(traces 0 and 4 .*--experiment"
    ):
        map_traces(traces, "mlflow.db", None)


def test_a_nan_value_and_a_missing_value_are_error_rows(tmp_path: Path) -> None:
    traces = _traces()
    traces[0]["assessments"][0]["value"] = float("nan")
    traces[1]["assessments"][0]["value"] = None
    corpus = load_corpus(write_corpus(map_traces(traces, "mlflow.db", None), tmp_path / "m",
                                      "m").folder)  # fmt: skip
    errors = sorted(j.error or "" for j in corpus.judgements if j.error)
    assert errors == ["no score in the log", "score NaN in the log"]


@pytest.mark.parametrize("run", ["ünï\u2028cödé 🙂", "../../etc", "a\tb\"c'\\"])
def test_any_unicode_run_name_and_request_round_trip(tmp_path: Path, run: str) -> None:
    traces = _traces()
    for trace in traces:
        if trace["system"] == "alpha":
            trace["system"] = run
        trace["request"] = trace["request"].replace(': "q', ': "q\u2028é')
    corpus = load_corpus(write_corpus(map_traces(traces, "mlflow.db", None), tmp_path / "m",
                                      "m").folder)  # fmt: skip
    assert corpus.systems == (run, "beta")
    assert {i.inputs["question"] for i in corpus.items} == {"q\u2028é1", "q\u2028é2"}
    assert not any(p.name != "m" for p in tmp_path.iterdir())  # nothing outside the folder
