"""`corpus import promptfoo` on an eval promptfoo itself ran and exported, with a reviewer's
ratings given through its viewer (tests/fixtures/promptfoo/, made by make_results.py there):
the figures equal promptfoo's own per-prompt metrics, the ratings become labels, and hostile
files are refused or counted."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

from judges.cli.main import main
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus
from judges.storage.files import read_json

RATED = Path(__file__).parent / "fixtures" / "promptfoo" / "rated.json"


def _import(tmp_path: Path, source: Path, *extra: str) -> int:
    return main(["corpus", "import", "promptfoo", str(source), "--corpora",
                 str(tmp_path / "corpora"), "--name", "pf", *extra])  # fmt: skip


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_figures_equal_promptfoos_own_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _import(tmp_path, RATED) == 0
    out = capsys.readouterr().out
    assert "imported 16 judgements (0 error rows kept) of 2 systems on 4 items by 2 judges " in out
    assert "(correct, icontains), 8 human labels" in out
    corpus = load_corpus(tmp_path / "corpora" / "pf")
    report = build_report(corpus)
    means = {(j.judge, s.system): s.score.mean for j in report.judges for s in j.scores}
    for prompt in read_json(RATED)["results"]["prompts"]:
        metrics = prompt["metrics"]
        correct = metrics["namedScores"]["correct"] / metrics["namedScoresCount"]["correct"]
        assert means["correct", prompt["provider"]] == pytest.approx(correct)
    # The reviewer's thumbs (make_results.py's HUMAN): labels, not a judge.
    assert "human" not in corpus.manifest.judges
    labels = {(label.system, label.item): label.score for label in corpus.labels}
    assert labels["answers-v1", "test-0"] == 1 and labels["echo", "test-2"] == 1
    assert sum(labels.values()) == 3
    [correct] = [h for h in report.human if h.judge == "correct"]
    assert (correct.exact.successes, correct.exact.n) == (6, 8)
    # A failed assertion is the judge's own flag.
    flagged = {(j.system, j.item) for j in corpus.judgements if j.judge == "correct" and j.flagged}
    assert ("echo", "test-0") in flagged and ("answers-v1", "test-0") not in flagged


def _edited(edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(read_json(RATED))
    edit(data["results"]["results"])
    return data


def test_a_provider_error_a_null_score_and_a_result_without_test_are_kept_or_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def damage(results: list[dict[str, Any]]) -> None:
        results[0].pop("gradingResult")
        results[0]["error"] = "API error: 500 Internal Server Error"
        component = results[1]["gradingResult"]["componentResults"][1]
        component.pop("pass")
        component["score"] = None  # JSON's NaN: JavaScript writes null
        del results[2]["testIdx"]

    assert _import(tmp_path, _write(tmp_path, _edited(damage))) == 0
    out = capsys.readouterr().out
    assert "(3 error rows kept)" in out
    assert "not imported: 1 results with no testIdx (no test to file them under)" in out
    errors = sorted(j.error or "" for j in load_corpus(tmp_path / "corpora" / "pf").judgements
                    if j.error)  # fmt: skip
    assert errors == ["API error: 500 Internal Server Error"] * 2 + ["no score nor pass in the log"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"results": {"results": [], "results": []}}', "the key 'results' appears twice"),
        ('{"results": {"table": []}}', "no results.results list"),
        ('{"results": {"results": [', "not a readable JSON file"),
    ],
)
def test_a_file_that_is_no_promptfoo_output_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    assert _import(tmp_path, path) == 2
    err = capsys.readouterr().err
    assert str(path) in err and says in err
    assert not (tmp_path / "corpora" / "pf").exists()


def test_a_result_given_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _import(tmp_path, _write(tmp_path, _edited(lambda r: r.append(r[0])))) == 2
    assert "results.results[8] assertion 'correct'" in capsys.readouterr().err


def test_any_unicode_provider_and_several_prompts(tmp_path: Path) -> None:
    def rename(results: list[dict[str, Any]]) -> None:
        for result in results:
            result["provider"]["label"] = f"ünï\u2028{result['provider']['id']} 🙂"
            result["prompt"]["label"] = "v1" if result["testIdx"] % 2 else "v2"

    assert _import(tmp_path, _write(tmp_path, _edited(rename))) == 0
    systems = load_corpus(tmp_path / "corpora" / "pf").systems
    assert set(systems) == {f"ünï\u2028{p} 🙂 | {v}" for p in ("echo", "answers-v1")
                            for v in ("v1", "v2")}  # fmt: skip


def test_prompts_as_systems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def two_prompts(results: list[dict[str, Any]]) -> None:
        for result in results:
            result["prompt"]["label"] = "v1" if result["provider"]["id"] == "echo" else "v2"

    assert _import(tmp_path, _write(tmp_path, _edited(two_prompts)), "--system", "prompt") == 0
    assert set(load_corpus(tmp_path / "corpora" / "pf").systems) == {"v1", "v2"}
    # Two providers on one prompt would be one system judged twice: refused, both named.
    assert _import(tmp_path, RATED, "--system", "prompt", "--replace") == 2
    assert "is also at" in capsys.readouterr().err


def test_a_system_choice_of_another_tool_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _import(tmp_path, RATED, "--system", "task") == 2
    assert "a promptfoo system is its provider or its prompt" in capsys.readouterr().err


def test_non_finite_scores_never_reach_the_corpus() -> None:
    from judges.corpus.importers.promptfoo import _score

    assert _score({"score": math.inf}) == (None, "score Infinity in the log")
    assert _score({"pass": True}) == (1.0, None)


def test_a_repeated_test_is_one_item_its_copies_runs(tmp_path: Path) -> None:
    """`promptfoo eval --repeat 2` copies each test under a new testIdx, same vars."""

    def repeat(results: list[dict[str, Any]]) -> None:
        for result in list(results):
            copy_ = copy.deepcopy(result)
            copy_["testIdx"] += 4
            copy_["id"] += "-repeat"
            results.append(copy_)

    assert _import(tmp_path, _write(tmp_path, _edited(repeat))) == 0
    corpus = load_corpus(tmp_path / "corpora" / "pf")
    assert len(corpus.items) == 4
    assert {j.run for j in corpus.judgements} == {0, 1}
    report = build_report(corpus)
    assert [r.before for r in report.retests] == ["correct run 0", "icontains run 0"]
