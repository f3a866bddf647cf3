"""The corpus report's judge-versus-human section: agreement, quadratic kappa and the
confusion table held equal to scikit-learn's on the same pairs, the disagreeing judgements in
the review queue, and no section (nor a byte changed) without labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from judges.cli.corpus import corpus_files
from judges.corpus.importers.corpus_writer import ImportedRows, write_corpus
from judges.corpus.markdown import corpus_markdown
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus

SYSTEMS, ITEMS = ("a", "b", "c"), 40


def _corpus(tmp_path: Path, seed: int, labelled: float, scale: dict[str, object]) -> Path:
    rng = np.random.default_rng(seed)
    rows = ImportedRows(description="random", source="test", scale=scale)
    levels = np.arange(float(scale["low"]), float(scale["high"]) + 1)  # type: ignore[arg-type]
    for system in SYSTEMS:
        for n in range(ITEMS):
            item = f"i{n}"
            rows.item(item, {})
            rows.judge("j", "a judge")
            human = float(rng.choice(levels))
            # The judge agrees with the human two times in three, else it says anything.
            score = human if rng.random() < 2 / 3 else float(rng.choice(levels))
            rows.judgements.append(("t", {"system": system, "item": item, "judge": "j",
                                          "score": score}))  # fmt: skip
            if rng.random() < labelled:
                rows.labels.append(("t", {"system": system, "item": item, "score": human}))
    return write_corpus(rows, tmp_path / f"c{seed}", f"c{seed}").folder


PASS_FAIL = {"low": 0, "high": 1, "verdict": "level", "step": 1}
RUBRIC = {"low": 1, "high": 5, "verdict": "level", "step": 1}


@pytest.mark.parametrize(("seed", "scale"), [(1, PASS_FAIL), (2, RUBRIC), (3, RUBRIC)])
def test_agreement_kappa_and_confusion_equal_sklearns(
    tmp_path: Path, seed: int, scale: dict[str, object]
) -> None:
    folder = _corpus(tmp_path, seed, 0.5, scale)
    corpus = load_corpus(folder)
    report = build_report(corpus)
    [found] = report.human
    judged = {(j.system, j.item): j.score for j in corpus.judgements}
    human = [label.score for label in corpus.labels]
    judge = [judged[label.system, label.item] for label in corpus.labels]
    assert found.exact.n == len(human) == found.labels
    assert found.exact.successes == sum(h == j for h, j in zip(human, judge, strict=True))
    assert found.kappa.value == pytest.approx(cohen_kappa_score(human, judge, weights="quadratic"))
    assert found.kappa.low <= found.kappa.value <= found.kappa.high
    assert found.exact.low <= found.exact.rate <= found.exact.high
    codes = sorted(set(human) | set(judge))
    assert found.verdicts == tuple(f"{c:g}" for c in codes)
    assert np.array_equal(found.confusion, confusion_matrix(human, judge, labels=codes))
    # Adjacent agreement only where there are more than two levels.
    assert (found.adjacent is None) == (scale is PASS_FAIL)
    # Every disagreement is in the review queue, and only those.
    queued = {(r["system"], r["item"]) for r in report.review_rows if r.get("judge") == "j"}
    assert queued == {(label.system, label.item) for label, j in zip(corpus.labels, judge,
                                                                     strict=True)
                      if label.score != j}  # fmt: skip
    text = corpus_markdown(report)
    assert "## j against the human labels" in text
    assert f"exact {found.exact.successes}/{found.exact.n} = " in text
    queue = corpus_files(folder)["review_queue.jsonl"].decode("utf-8").splitlines()
    assert len(queue) == len(found.disagreeing) == found.exact.n - found.exact.successes
    assert all(json.loads(line)["reason"] == "j disagrees with the human label" for line in queue)


def test_no_labels_no_section(tmp_path: Path) -> None:
    report = build_report(load_corpus(_corpus(tmp_path, 4, 0.0, RUBRIC)))
    assert report.human == ()
    assert "human labels" not in corpus_markdown(report)
    assert report.review_rows == report.queue
