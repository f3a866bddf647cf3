"""The committed AlpacaEval corpus reproduces every figure its release published, and the
committed corpus reports are what `corpus report` would write today.

The figures are recomputed twice: by the report (`published.py`), and here from
judgements.jsonl with plain numpy and AlpacaEval's own rule (PROVENANCE.md: the score is
preference - 1, a win rate is 100 x its mean, the standard error the sample one), so a bug
shared by the report and its check cannot pass unseen.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from judges.cli.main import main
from judges.corpus.report import CorpusReport, build_report
from judges.corpus.rows import load_corpus

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "planted_sets" / "corpora"
ALPACA = CORPORA / "alpaca_eval"
REPORTS = ROOT / "reports" / "corpora"
JUDGES = ("alpaca_eval_gpt4", "weighted_alpaca_eval_gpt4_turbo")


@pytest.fixture(scope="module")
def report() -> CorpusReport:
    # ~3 s: built once for every test of the module.
    return build_report(load_corpus(ALPACA))


def _scores(judge: str, system: str) -> np.ndarray:
    """The system's scores under the judge, read straight from the file (error rows left
    out: they are no judgement), in file order."""
    found = []
    with (ALPACA / "judgements.jsonl").open(encoding="utf-8") as stream:
        for line in stream:
            row = json.loads(line)
            if row["judge"] == judge and row["system"] == system and "score" in row:
                found.append(row["score"])
    return np.asarray(found, dtype=float)


def _published(judge: str, system: str) -> dict[str, float]:
    """The release's own numbers, keyed by the release's column names."""
    found = {}
    with (ALPACA / "published.jsonl").open(encoding="utf-8") as stream:
        for line in stream:
            row = json.loads(line)
            if row["judge"] == judge and row["system"] == system:
                found[row["published_as"]] = row["value"]
    return found


def _printed_decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text else 0


def test_all_154_published_figures_are_recomputed_and_agree(report: CorpusReport) -> None:
    checks = report.published
    assert len(checks) == 154
    disagreeing = [
        (c.figure.judge, c.figure.system, c.figure.statistic, c.figure.value, c.recomputed)
        for c in checks
        if not c.agrees
    ]
    assert disagreeing == []
    # 11 systems x 2 judges x 7 statistics: no pair and no statistic is missing or doubled.
    per_pair = Counter((c.figure.judge, c.figure.system) for c in checks)
    assert set(judge for judge, _ in per_pair) == set(JUDGES)
    assert len(per_pair) == 22
    assert set(per_pair.values()) == {7}
    per_statistic = Counter(c.figure.statistic for c in checks)
    assert per_statistic == dict.fromkeys(
        ("mean", "standard_error", "n_total", "n_above", "n_below", "n_at", "discrete_mean"), 22
    )


@pytest.mark.parametrize(
    ("judge", "system"),
    [
        # continuous preferences (1 + P("m")), against gpt4_1106_preview
        ("weighted_alpaca_eval_gpt4_turbo", "claude-2"),
        # 1 / 1.5 / 2 preferences with 4 null ones, against text_davinci_003
        ("alpaca_eval_gpt4", "gpt35_turbo_instruct"),
        # its recomputed win rate differs from the printed one in the last digit
        ("alpaca_eval_gpt4", "falcon-40b-instruct"),
    ],
)
def test_a_figure_recomputed_here_with_numpy_matches_the_report_and_the_release(
    report: CorpusReport, judge: str, system: str
) -> None:
    x = _scores(judge, system)
    assert x.size > 700  # the file was read, not an empty selection
    ours = {
        "win_rate": 100 * float(np.mean(x)),
        "standard_error": 100 * float(np.std(x, ddof=1)) / np.sqrt(x.size),
        "n_total": x.size,
        "n_wins": int(np.sum(x > 0.5)),
        "n_wins_base": int(np.sum(x < 0.5)),
        "n_draws": int(np.sum(x == 0.5)),
        "discrete_win_rate": 100
        * float(np.mean(np.where(x > 0.5, 1.0, np.where(x < 0.5, 0, 0.5)))),
    }
    in_report = {
        c.figure.published_as: c.recomputed
        for c in report.published
        if c.figure.judge == judge and c.figure.system == system
    }
    published = _published(judge, system)
    assert set(in_report) == set(published) == set(ours)
    for name, value in ours.items():
        if name.startswith("n_"):
            assert in_report[name] == value == published[name], name
            continue
        # The report sums in item order, this test in file order: equal to rounding.
        assert in_report[name] == pytest.approx(value, rel=1e-13, abs=0), name
        # The release printed 15-17 digits; all but the last one are reproduced.
        unit = 10.0 ** -(_printed_decimals(published[name]) - 1)
        assert abs(value - published[name]) <= unit, (name, value, published[name])


def test_error_rows_are_counted_not_judged(report: CorpusReport) -> None:
    rows = [json.loads(line) for line in (ALPACA / "judgements.jsonl").open(encoding="utf-8")]
    errors = Counter(row["judge"] for row in rows if "error" in row)
    assert report.errors == {judge: errors.get(judge, 0) for judge in JUDGES}
    assert sum(errors.values()) > 0  # the committed corpus does hold null preferences
    for summary in report.judges:
        for score in summary.scores:
            assert score.errors == sum(
                1
                for row in rows
                if row["judge"] == summary.judge and row["system"] == score.system
                and "error" in row
            )  # fmt: skip


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_committed_corpus_reports_are_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    before = _digest(REPORTS)
    argv = ["corpus", "report", "--check", "--corpora", str(CORPORA), "--reports", str(REPORTS)]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "corpus report files match their corpora" in out
    assert _digest(REPORTS) == before  # --check writes nothing


def test_an_altered_report_file_fails_the_check_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(REPORTS, reports)
    altered = reports / "product_answers" / "corpus_report.md"
    altered.write_text(altered.read_text(encoding="utf-8") + "\nan edit by hand\n")
    copied = _digest(reports)
    argv = ["corpus", "report", "--check", "--corpora", str(CORPORA), "--reports", str(reports)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    named = [line for line in err.splitlines() if line.startswith("differs from its corpus:")]
    assert named == [f"differs from its corpus: {altered}"]  # that file, and no other
    assert _digest(reports) == copied  # --check rewrote nothing, the edit included
