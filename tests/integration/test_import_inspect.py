"""Inspect, for real: inspect_ai installed in its own environment makes `.eval` logs offline
(mockllm systems, a model-graded scorer with a mockllm grader, `match`, two epochs, a
reviewer's "human" score added with Inspect's `edit_score`), `corpus import inspect` reads
them through inspect_ai, and the corpus report's figures equal what Inspect's own API
computes from the same logs. Cut, doubled and NaN-holding logs the tool wrote are refused or
counted as the corpus path refuses and counts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus

from ._tools import ROOT, run, tool_python

pytestmark = pytest.mark.proof

INSPECT = "inspect-ai==0.3.285"
MAKE_LOG = ROOT / "tests" / "fixtures" / "inspect" / "make_log.py"

# What Inspect's own API says of its logs: each (model, scorer)'s epoch-1 mean by
# value_to_float, and each scorer's agreement with the "human" score, as JSON.
EXPECTED = """
import json, sys
from pathlib import Path
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import value_to_float
to_float = value_to_float()
out = {"means": {}, "agree": {}, "n": {}}
for path in sorted(Path(sys.argv[1]).glob("*.eval")):
    log = read_eval_log(str(path))
    first = [s for s in log.samples if s.epoch == 1]
    for scorer in ("model_graded_qa", "match"):
        values = [to_float(s.scores[scorer].value) for s in first]
        out["means"][f"{log.eval.model} {scorer}"] = sum(values) / len(values)
        agree = sum(to_float(s.scores[scorer].value) == to_float(s.scores["human"].value)
                    for s in first)
        out["agree"][scorer] = out["agree"].get(scorer, 0) + agree
        out["n"][scorer] = out["n"].get(scorer, 0) + len(first)
print(json.dumps(out))
"""

NAN_EDIT = """
import sys
from inspect_ai.log import read_eval_log, write_eval_log, edit_score
from inspect_ai.scorer import ScoreEdit
log = read_eval_log(sys.argv[1])
edit_score(log, "q2", "match", ScoreEdit(value=float("nan")), epoch=1)
write_eval_log(log, sys.argv[2])
"""


@pytest.fixture(scope="module")
def inspect_python() -> Path:
    return tool_python("inspect-ai-0.3.285", INSPECT)


@pytest.fixture(scope="module")
def logs(inspect_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect-logs")
    made = run(inspect_python, str(MAKE_LOG), str(folder), "eval", cwd=folder)
    assert made.returncode == 0, made.stderr[-3000:]
    assert len(list(folder.glob("*.eval"))) == 2
    return folder


def _import(python: Path, source: Path, corpora: Path) -> Any:
    return run(python, "-m", "judges", "corpus", "import", "inspect", str(source),
               "--corpora", str(corpora), "--name", "inspect", cwd=corpora.parent)  # fmt: skip


def test_the_report_equals_what_inspects_api_computes(
    inspect_python: Path, logs: Path, tmp_path: Path
) -> None:
    corpora = tmp_path / "corpora"
    done = _import(inspect_python, logs, corpora)
    assert done.returncode == 0, done.stderr
    assert "imported 32 judgements (0 error rows kept) of 2 systems on 4 items" in done.stdout
    report = run(inspect_python, "-m", "judges", "corpus", "report", "inspect", "--corpora",
                 str(corpora), "--reports", str(tmp_path / "reports"), cwd=tmp_path)  # fmt: skip
    assert report.returncode == 0, report.stderr
    expected = run(inspect_python, "-c", EXPECTED, str(logs), cwd=tmp_path)
    assert expected.returncode == 0, expected.stderr
    truth = json.loads(expected.stdout)

    built = build_report(load_corpus(corpora / "inspect"))
    means = {f"{s.system} {summary.judge}": s.score.mean
             for summary in built.judges for s in summary.scores}  # fmt: skip
    assert means == pytest.approx(truth["means"])
    human = {h.judge: h for h in built.human}
    for scorer in ("model_graded_qa", "match"):
        assert (human[scorer].exact.successes, human[scorer].exact.n) == (
            truth["agree"][scorer], truth["n"][scorer],
        )  # fmt: skip
    text = (tmp_path / "reports" / "inspect" / "corpus_report.md").read_text(encoding="utf-8")
    assert "## model_graded_qa against the human labels" in text
    # Two epochs: Inspect's epochs are the corpus's runs, so test-retest is reported.
    assert "## Test-retest: model_graded_qa run 0 -> model_graded_qa run 1" in text


def test_a_cut_log_is_refused_naming_it(inspect_python: Path, logs: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut"
    cut.mkdir()
    whole = sorted(logs.glob("*.eval"))[0]
    (cut / whole.name).write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    done = _import(inspect_python, cut, tmp_path / "corpora")
    assert done.returncode == 2
    assert f"{cut / whole.name}: not a readable Inspect log" in done.stderr
    assert not (tmp_path / "corpora" / "inspect").exists()


def test_a_log_given_twice_is_refused(inspect_python: Path, logs: Path, tmp_path: Path) -> None:
    twice = tmp_path / "twice"
    twice.mkdir()
    log = sorted(logs.glob("*.eval"))[0]
    shutil.copy(log, twice / "a.eval")
    shutil.copy(log, twice / "b.eval")
    done = _import(inspect_python, twice, tmp_path / "corpora")
    assert done.returncode == 2
    assert "b.eval: sample 'q1' epoch 1" in done.stderr and "is also at" in done.stderr


def test_a_nan_the_tool_wrote_is_an_error_row(
    inspect_python: Path, logs: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "nan"
    folder.mkdir()
    log = sorted(logs.glob("*.eval"))[0]
    edited = run(inspect_python, "-c", NAN_EDIT, str(log), str(folder / log.name), cwd=tmp_path)
    assert edited.returncode == 0, edited.stderr
    done = _import(inspect_python, folder, tmp_path / "corpora")
    assert done.returncode == 0, done.stderr
    assert "(1 error rows kept)" in done.stdout
    errors = [j for j in load_corpus(tmp_path / "corpora" / "inspect").judgements if j.error]
    assert [(j.item, j.judge, j.error) for j in errors] == [("q2", "match", "score NaN in the log")]
