"""A corpus report's per-system intervals stay on the scale without clipping, and a rank
correlation of fewer than three systems is said to be undefined in words, not printed as
nan: a pass rate gets Wilson's interval, a bounded score whose t interval would leave the
scale the percentile bootstrap of items."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judges.corpus.estimates import IntervalMethod, mean_interval
from judges.corpus.importers.corpus_writer import ImportedRows, write_corpus
from judges.corpus.markdown import corpus_markdown
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus
from judges.stats.estimates.intervals import wilson

PASS_FAIL = {"name": "pass rate", "low": 0, "high": 1, "verdict": "level", "step": 1,
             "factor": 100}  # fmt: skip
PARTIAL = {"name": "score", "low": 0, "high": 1, "verdict": "level", "step": 0.5, "factor": 100}


def _corpus(tmp_path: Path, scores: dict[str, dict[str, list[float]]], scale: dict) -> Path:
    """judge -> system -> one score per item, written through the importers' writer."""
    rows = ImportedRows(description="small", source="test", scale=scale)
    for judge, by_system in scores.items():
        rows.judge(judge, f"judge {judge}")
        for system, values in by_system.items():
            for n, value in enumerate(values):
                rows.item(f"q{n}", {})
                rows.judgements.append(("test", {"system": system, "item": f"q{n}",
                                                 "judge": judge, "score": value}))  # fmt: skip
    return write_corpus(rows, tmp_path / "small", "small").folder


def test_a_pass_rate_of_four_items_has_wilsons_interval_inside_0_100(tmp_path: Path) -> None:
    folder = _corpus(tmp_path, {"j": {"a": [1, 1, 1, 0], "b": [1, 0, 0, 0]}}, PASS_FAIL)
    report = build_report(load_corpus(folder))
    scores = {s.system: s.score for s in report.judges[0].scores}
    # The t interval is what the report printed before: 75.00 [-4.56, 154.56] n=4.
    t = mean_interval(np.array([1.0, 1.0, 1.0, 0.0]))
    assert t.low < 0 and t.high > 1
    expected = wilson(3, 4)
    assert scores["a"].method is IntervalMethod.WILSON
    assert (scores["a"].low, scores["a"].high) == (expected.low, expected.high)
    assert scores["b"].low > 0 and scores["b"].high < 1
    text = corpus_markdown(report)
    assert f"75.00 [{expected.low * 100:.2f}, {expected.high * 100:.2f}] n=4" in text
    assert "with a 95% Wilson interval (a pass rate)" in text
    assert "-4.56" not in text and "154.56" not in text


def test_a_perfect_pass_rate_keeps_an_interval_below_100(tmp_path: Path) -> None:
    folder = _corpus(tmp_path, {"j": {"a": [1, 1, 1, 1], "b": [0, 1, 0, 1]}}, PASS_FAIL)
    score = next(s.score for s in build_report(load_corpus(folder)).judges[0].scores
                 if s.system == "a")  # fmt: skip
    assert score.high == 1.0 and score.low == pytest.approx(wilson(4, 4).low) and score.low < 0.6


def test_partial_credit_whose_t_interval_leaves_the_scale_is_bootstrapped(
    tmp_path: Path,
) -> None:
    values = [1, 1, 1, 0.5, 1]
    folder = _corpus(tmp_path, {"j": {"a": values, "b": [0.5, 0, 0.5, 0.5, 1]}}, PARTIAL)
    report = build_report(load_corpus(folder))
    scores = {s.system: s.score for s in report.judges[0].scores}
    t = mean_interval(np.array(values, dtype=float))
    assert t.high > 1  # the t interval would leave the scale
    a = scores["a"]
    assert a.method is IntervalMethod.BOOTSTRAP
    # Every resampled mean is a mean of five of these scores, so on the scale unclipped: the
    # upper end is all five at 1, the lower 0.7 (three or more 0.5s: 5.8% of resamples).
    assert (a.low, a.mean, a.high) == (pytest.approx(0.7), pytest.approx(0.9), 1.0)
    # b's t interval stays on the scale, so it is kept as it was.
    assert scores["b"].method is IntervalMethod.T
    assert (scores["b"].low, scores["b"].high) == (
        mean_interval(np.array([0.5, 0, 0.5, 0.5, 1.0])).low,
        mean_interval(np.array([0.5, 0, 0.5, 0.5, 1.0])).high,
    )
    text = corpus_markdown(report)
    assert "where the t interval would leave the scale: a." in text
    assert "t interval (the percentile bootstrap of items where" in text


@pytest.mark.parametrize("systems", [1, 2])
def test_fewer_than_three_systems_have_no_rank_correlation_in_words(
    tmp_path: Path, systems: int
) -> None:
    by_system = {"a": [1, 1, 0, 1], "b": [0, 1, 0, 0]}
    chosen = dict(list(by_system.items())[:systems])
    folder = _corpus(tmp_path, {"old": chosen, "new": chosen}, PASS_FAIL)
    text = corpus_markdown(build_report(load_corpus(folder)))
    assert "nan" not in text
    assert (f"Spearman and Kendall undefined (a rank correlation needs 3 systems; {systems} "
            "here)") in text  # fmt: skip


def test_three_systems_keep_their_rank_correlation(tmp_path: Path) -> None:
    by_system = {"a": [1, 1, 0, 1], "b": [0, 1, 0, 0], "c": [0, 0, 0, 1]}
    folder = _corpus(tmp_path, {"old": by_system, "new": by_system}, PASS_FAIL)
    text = corpus_markdown(build_report(load_corpus(folder)))
    assert "Rankings: Spearman 1.00 [" in text and "n=3, Kendall 1.00 [" in text


def test_a_difference_and_a_shift_whose_t_interval_leaves_their_range_are_bootstrapped(
    tmp_path: Path,
) -> None:
    # On pass/fail, a paired difference lies in [-1, 1]; three items put its t interval far
    # outside it, the item bootstrap keeps it inside.
    by_system = {"a": [1, 1, 0], "b": [0, 1, 0], "c": [0, 0, 0]}
    after = {"a": [0, 1, 0], "b": [1, 1, 1], "c": [0, 1, 0]}
    folder = _corpus(tmp_path, {"old": by_system, "new": after}, PASS_FAIL)
    report = build_report(load_corpus(folder))
    differences = [d.difference for j in report.judges for d in j.differences]
    shifts = [s.shift for s in report.change.shifts]  # type: ignore[union-attr]
    for interval in differences + shifts:
        if interval.n >= 2 and not np.isnan(interval.low):
            assert -1 <= interval.low <= interval.mean <= interval.high <= 1, interval
    assert any(d.method is IntervalMethod.BOOTSTRAP for d in differences)
    assert any(s.method is IntervalMethod.BOOTSTRAP for s in shifts)
    text = corpus_markdown(report)
    assert "would leave a difference's range: " in text
    assert "would leave a shift's range: " in text


def test_kappa_with_one_verdict_throughout_is_undefined_in_words(tmp_path: Path) -> None:
    every_pass = {"a": [1, 1, 1], "b": [1, 1, 1], "c": [1, 1, 1]}
    folder = _corpus(tmp_path, {"old": every_pass, "new": every_pass}, PASS_FAIL)
    report = build_report(load_corpus(folder))
    assert report.change is not None and np.isnan(report.change.kappa.value)
    text = corpus_markdown(report)
    assert "nan" not in text
    assert "Spearman undefined (a judge ties every system), n=3" in text
    assert (
        "quadratic kappa undefined (every verdict the same, so no agreement beyond chance to "
        "measure), n=9"
    ) in text
