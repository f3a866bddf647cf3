"""MLflow, for real: mlflow installed in its own environment writes a SQLite tracking store
offline (two runs answering four questions through a traced function, an LLM_JUDGE and a
HUMAN feedback of one name on each trace, by `mlflow.log_feedback`), `corpus import mlflow`
reads it through MLflow's client, and the corpus report's figures equal what MLflow's own API
says of the same traces. A judge's failed feedback, a second reviewer who disagrees, and a
run name in any script are kept, refused or carried as the corpus path does."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus

from ._tools import ROOT, run, tool_python

pytestmark = pytest.mark.proof

MLFLOW = "mlflow==3.17.2"
MAKE_TRACES = ROOT / "tests" / "fixtures" / "mlflow" / "make_traces.py"

# What MLflow's API says of the store: per run, the judge's feedback as 1/0 and the
# agreement with the human's, as JSON.
EXPECTED = """
import json, sys
from mlflow import MlflowClient
client = MlflowClient(tracking_uri=f"sqlite:///{sys.argv[1]}")
[experiment] = [e for e in client.search_experiments() if e.name == "support answers"]
out = {"judge": {}, "agree": 0, "n": 0}
for trace in client.search_traces(locations=[experiment.experiment_id]):
    run = client.get_run(trace.info.request_metadata["mlflow.sourceRun"]).info.run_name
    by = {a.source.source_type: a.feedback.value for a in trace.info.assessments}
    judge = 1.0 if by["LLM_JUDGE"] == "yes" else 0.0
    out["judge"].setdefault(run, []).append(judge)
    out["agree"] += judge == float(by["HUMAN"])
    out["n"] += 1
print(json.dumps(out))
"""

DAMAGE = """
import os, sys
os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
import mlflow
from mlflow.entities import AssessmentSource, AssessmentSourceType
mlflow.set_tracking_uri(f"sqlite:///{sys.argv[1]}")
mlflow.set_experiment("support answers")
judge = AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE, source_id="gpt-judge")
bo = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="bo")
with mlflow.start_run(run_name="gamma \u00fcn\u00ef\\u2028 \U0001f642"):
    @mlflow.trace(name="answer")
    def answer(question):
        return "no idea"
    answer(question="2 + 2?")
    trace_id = mlflow.get_last_active_trace_id()
    mlflow.log_feedback(trace_id=trace_id, name="correctness", source=judge,
                        error=RuntimeError("the judge timed out"))
    if sys.argv[2] == "disagree":
        human = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="ana")
        mlflow.log_feedback(trace_id=trace_id, name="correctness", value=True, source=human)
        mlflow.log_feedback(trace_id=trace_id, name="correctness", value=False, source=bo)
"""


@pytest.fixture(scope="module")
def mlflow_python() -> Path:
    return tool_python("mlflow-3.17.2", MLFLOW)


@pytest.fixture(scope="module")
def store(mlflow_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mlflow")
    made = run(mlflow_python, str(MAKE_TRACES), str(folder), cwd=folder)
    assert made.returncode == 0, made.stderr[-3000:]
    return folder / "mlflow.db"


def _import(python: Path, db: Path, corpora: Path) -> subprocess.CompletedProcess[str]:
    return run(python, "-m", "judges", "corpus", "import", "mlflow", str(db), "--corpora",
               str(corpora), "--name", "ml", cwd=corpora.parent)  # fmt: skip


def test_the_report_equals_what_mlflows_api_says(
    mlflow_python: Path, store: Path, tmp_path: Path
) -> None:
    done = _import(mlflow_python, store, tmp_path / "corpora")
    assert done.returncode == 0, done.stderr
    assert "of 2 systems on 4 items by 1 judges (correctness), 8 human labels" in done.stdout
    expected = run(mlflow_python, "-c", EXPECTED, str(store), cwd=tmp_path)
    assert expected.returncode == 0, expected.stderr
    truth = json.loads(expected.stdout)
    report = build_report(load_corpus(tmp_path / "corpora" / "ml"))
    means = {s.system: (s.score.mean, s.score.n) for s in report.judges[0].scores}
    assert means == {run_name: pytest.approx((sum(v) / len(v), len(v)))
                     for run_name, v in truth["judge"].items()}  # fmt: skip
    [human] = report.human
    assert (human.exact.successes, human.exact.n) == (truth["agree"], truth["n"])


def test_a_failed_judge_and_any_run_name_are_kept(
    mlflow_python: Path, store: Path, tmp_path: Path
) -> None:
    db = tmp_path / "mlflow.db"
    shutil.copy(store, db)
    damaged = run(mlflow_python, "-c", DAMAGE, str(db), "fail", cwd=tmp_path)
    assert damaged.returncode == 0, damaged.stderr[-3000:]
    done = _import(mlflow_python, db, tmp_path / "corpora")
    assert done.returncode == 0, done.stderr
    assert "(1 error rows kept) of 3 systems" in done.stdout
    corpus = load_corpus(tmp_path / "corpora" / "ml")
    [error] = [j for j in corpus.judgements if j.error]
    assert error.system == "gamma \u00fcn\u00ef\u2028 \U0001f642"
    assert "the judge timed out" in (error.error or "")


def test_two_reviewers_who_disagree_are_refused(
    mlflow_python: Path, store: Path, tmp_path: Path
) -> None:
    db = tmp_path / "mlflow.db"
    shutil.copy(store, db)
    damaged = run(mlflow_python, "-c", DAMAGE, str(db), "disagree", cwd=tmp_path)
    assert damaged.returncode == 0, damaged.stderr[-3000:]
    done = _import(mlflow_python, db, tmp_path / "corpora")
    assert done.returncode == 2
    assert "keep one label per output" in done.stderr
    assert not (tmp_path / "corpora" / "ml").exists()


def test_a_cut_store_is_refused_naming_it(mlflow_python: Path, store: Path, tmp_path: Path) -> None:
    db = tmp_path / "mlflow.db"
    db.write_bytes(store.read_bytes()[: store.stat().st_size // 2])  # an interrupted copy
    done = _import(mlflow_python, db, tmp_path / "corpora")
    assert done.returncode == 2, done.stdout
    assert f"sqlite:///{db}: MLflow could not read it" in done.stderr
    assert "point at the tracking store" in done.stderr
    assert not (tmp_path / "corpora" / "ml").exists()
