"""promptfoo, for real: promptfoo installed from npm runs an eval offline (its `echo`
provider and a local JavaScript provider, a `javascript` and an `icontains` assertion), a
reviewer rates every result through promptfoo's own viewer server on 127.0.0.1, `promptfoo
export eval` writes the rated eval, and `corpus import promptfoo` reads the three files (the
eval's `--output` as JSON and as JSONL, and the export): the report's figures equal
promptfoo's own per-prompt metrics and its results' grading, the JSONL's the JSON's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus
from judges.storage.files import read_json

from ._tools import ROOT, run, tool_bin

pytestmark = pytest.mark.proof

PROMPTFOO = "promptfoo@0.121.20"  # the last release that runs on Node 20
MAKE_RESULTS = ROOT / "tests" / "fixtures" / "promptfoo" / "make_results.py"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    promptfoo = tool_bin("promptfoo-0.121.20", PROMPTFOO, "promptfoo")
    folder = tmp_path_factory.mktemp("promptfoo")
    done = run(Path(sys.executable), str(MAKE_RESULTS), str(promptfoo), str(folder), cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


def _report(made: Path, name: str, tmp_path: Path) -> object:
    corpora = tmp_path / "corpora"
    argv = ["corpus", "import", "promptfoo", str(made / name), "--corpora", str(corpora)]
    done = run(Path(sys.executable), "-m", "judges", *argv, "--name", "pf", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return build_report(load_corpus(corpora / "pf"))


def _components(result: dict[str, object]) -> dict[str, dict[str, object]]:
    grading = result["gradingResult"]
    assert isinstance(grading, dict)
    return {str(c["assertion"].get("metric") or c["assertion"]["type"]): c
            for c in grading["componentResults"]}  # fmt: skip


@pytest.mark.parametrize("name", ["results.json", "rated.json"])
def test_the_report_equals_promptfoos_own_figures(made: Path, tmp_path: Path, name: str) -> None:
    report = _report(made, name, tmp_path)
    data = read_json(made / name)
    means = {(j.judge, s.system): (s.score.mean, s.score.n)
             for j in report.judges for s in j.scores}  # type: ignore[attr-defined]  # fmt: skip
    for prompt in data["results"]["prompts"]:
        metrics = prompt["metrics"]
        count = metrics["namedScoresCount"]["correct"]
        assert means["correct", prompt["provider"]] == pytest.approx(
            (metrics["namedScores"]["correct"] / count, count)
        )
    results = data["results"]["results"]
    for provider in {r["provider"]["id"] for r in results}:
        passed = [_components(r)["icontains"]["pass"] for r in results
                  if r["provider"]["id"] == provider]  # fmt: skip
        assert means["icontains", provider] == pytest.approx((sum(passed) / len(passed), 4))
    human = {h.judge: h for h in report.human}  # type: ignore[attr-defined]
    if name == "results.json":
        assert human == {}  # not rated yet
        return
    for judge in ("correct", "icontains"):
        agree = sum(_components(r)[judge]["score"] == _components(r)["human"]["score"]
                    for r in results)  # fmt: skip
        assert (human[judge].exact.successes, human[judge].exact.n) == (agree, len(results))


def test_repeats_are_runs_of_one_item(made: Path, tmp_path: Path) -> None:
    promptfoo = tool_bin("promptfoo-0.121.20", PROMPTFOO, "promptfoo")
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(made / ".promptfoo"),
           "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}  # fmt: skip
    evaluated = subprocess.run(
        [str(promptfoo), "eval", "-c", "promptfooconfig.yaml", "--repeat", "2", "--output",
         "repeated.json", "--no-progress-bar"], cwd=made, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert evaluated.returncode in (0, 100), evaluated.stderr[-2000:]
    report = _report(made, "repeated.json", tmp_path)
    corpus = report.corpus  # type: ignore[attr-defined]
    assert len(corpus.items) == 4 and {j.run for j in corpus.judgements} == {0, 1}
    runs: dict[tuple[str, int], list[float]] = {}
    for j in corpus.judgements:
        if j.judge == "correct":
            runs.setdefault((j.system, j.run), []).append(float(j.score))
    for prompt in read_json(made / "repeated.json")["results"]["prompts"]:
        metrics = prompt["metrics"]
        both = runs[prompt["provider"], 0] + runs[prompt["provider"], 1]
        assert sum(both) / len(both) == pytest.approx(
            metrics["namedScores"]["correct"] / metrics["namedScoresCount"]["correct"]
        )


def test_the_jsonl_output_gives_the_json_outputs_report(made: Path, tmp_path: Path) -> None:
    """One eval written with `--output results.json --output results.jsonl`: every figure of
    the two reports is the same, and equals promptfoo's own per-prompt metrics."""
    (tmp_path / "jsonl").mkdir()
    (tmp_path / "json").mkdir()
    as_jsonl = _report(made, "results.jsonl", tmp_path / "jsonl")
    as_json = _report(made, "results.json", tmp_path / "json")

    def figures(report: object) -> list[tuple[object, ...]]:
        return [(j.judge, s.system, s.score.mean, s.score.low, s.score.high, s.score.n, s.errors)
                for j in report.judges for s in j.scores]  # type: ignore[attr-defined]  # fmt: skip

    assert figures(as_jsonl) == figures(as_json)
    corpus = as_jsonl.corpus  # type: ignore[attr-defined]
    assert len(corpus.judgements) == 16 and len(corpus.items) == 4
    means = {(judge, system): (mean, n) for judge, system, mean, _, _, n, _ in figures(as_jsonl)}
    for prompt in read_json(made / "results.json")["results"]["prompts"]:
        metrics = prompt["metrics"]
        count = metrics["namedScoresCount"]["correct"]
        assert means["correct", prompt["provider"]] == pytest.approx(
            (metrics["namedScores"]["correct"] / count, count)
        )
