"""Every format leads with the verdict and the one reason that decides it, in one line.

The reason is chosen once (`judges.verdicts.deciding`): a regression against the accepted
baseline before a floor, a NOT FIT's failing chance test (never a test the judge passes).
report.md's Result line, report.json's `verdict`, the index's column, the terminal's last
lines and the step summary all give it, in at most 160 characters; the whole verdict
follows on the next line.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from judges.cli.main import main
from judges.core.spec import load_catalog
from judges.reports import terminal
from judges.reports.model.data import FolderReport
from judges.reports.model.folders import Results, build_folder
from judges.reports.model.result_line import LINE_LIMIT, one_line
from judges.reports.model.summary import first_screen
from judges.reports.render.files import render_report_json
from judges.reports.render.github import summary_markdown
from judges.reports.render.overview import render_overview
from judges.reports.write import disk_reports
from judges.stats.fitness.chance import ChanceTest, Fitness
from judges.verdicts.deciding import Cause, Reason, deciding, ordered
from judges.verdicts.inputs import load_sources
from judges.verdicts.vocabulary import FAIL, NOT_FIT, PASS

ROOT = Path(__file__).resolve().parent.parent
BUILT_IN = sorted(p.parent for p in (ROOT / "reports").glob("*/*/report.json"))
MODEL = "local:smollm2-135m"


def _result_line(folder: Path) -> str:
    (line,) = [x for x in (folder / "report.md").read_text().splitlines() if "**Result:" in x]
    return line


@pytest.mark.parametrize("folder", BUILT_IN, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_every_committed_result_line_is_one_screen_line_naming_its_deciding_reason(
    folder: Path,
) -> None:
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    line = _result_line(folder)
    assert len(line) <= LINE_LIMIT, (len(line), line)
    assert line == f"**Result: {report['verdict']}**"
    reason = report["first_screen"]["deciding"]["reason"]
    assert line.startswith(f"**Result: {report['first_screen']['label'].split(';')[0]}")
    assert reason in line  # named whole, never cut
    # Nothing is lost: the whole verdict is the next line, and the deciding reason's
    # sentence is the first of the reasons.
    assert report["first_screen"]["reasons"][0].startswith(reason)
    text = (folder / "report.md").read_text(encoding="utf-8")
    for detail in report["verdict_details"]:
        assert f"{line}\n\nIn full: {detail}\n" in text


def test_a_not_fit_verdict_is_decided_by_a_failing_chance_test_in_the_index() -> None:
    """relevance 1.1 passes its noise and retest tests and fails its ranking ones: the index
    row gave the first figure ("noise: score ... better than chance"); now its reason."""
    page = (ROOT / "reports/index.html").read_text(encoding="utf-8")
    cells = dict(
        re.findall(r'<td>([a-z_]+ [\d.]+)</td><td>[^<]*</td><td><span class="w [a-z]+">[^<]*'
                   r'</span>.*?</td><td class="cut" title="([^"]*)"', page)
    )  # fmt: skip
    assert cells["relevance 1.1"].startswith("at chance on ranking: planted queries (nDCG@10")
    assert cells["relevance 1.0"].startswith("worse than chance on ranking: planted queries")
    for judge_version, cell in cells.items():
        assert "better than chance" not in cell, (judge_version, cell)


# --------------------------------------------------------------------------- a worse version


@pytest.fixture(scope="module")
def worse(tmp_path_factory: pytest.TempPathFactory) -> FolderReport:
    """product_identity 0.3.1 (34/46 -> 16/46 detection against 0.3) gated against 0.3 as
    its accepted baseline, with 0.3's floors: it fails two floors by a little and regresses
    against the baseline by a lot."""
    tmp = tmp_path_factory.mktemp("worse")
    planted, reports = tmp / "planted_sets", tmp / "reports"
    shutil.copytree(ROOT / "planted_sets/product_identity", planted / "product_identity")
    shutil.copytree(ROOT / "reports/product_identity", reports / "product_identity")
    gates = planted / "product_identity/gates.toml"
    text = gates.read_text(encoding="utf-8")
    mine = text.index(f'["{MODEL}"."0.3.1"]')
    table = text[text.index(f'["{MODEL}"."0.3"]') : mine]
    gates.write_text(text[:mine] + table.replace('"0.3"]', '"0.3.1"]\nbaseline = "0.3"', 1))
    sources = load_sources("product_identity", load_catalog(), planted)
    return build_folder(Results(reports), "product_identity", "0.3.1", sources)


def test_a_worse_version_leads_with_its_regression_not_a_borderline_floor(
    worse: FolderReport,
) -> None:
    screen = first_screen(worse)
    assert worse.verdict_word() == FAIL
    floors = [r for r in screen.reasons if r.startswith("gate detection[")]
    assert len(floors) == 2  # failed, but by a little: detection[cousin] 0.50 against 0.60
    assert screen.reasons[0].startswith("regression.detection worse than prompt 0.3 main run")
    result = screen.result()
    assert result == (
        "FAIL: regression.detection worse than prompt 0.3 main run (22 caught->missed vs 4 "
        "missed->caught, mid-p = 0.0002)"
    )
    # The same line in every format, each within one screen line.
    line = terminal.why_line(screen)
    assert line == f"product_identity 0.3.1: {result}" and len(line) <= LINE_LIMIT
    assert f"- product_identity 0.3.1: **{result}**." in summary_markdown([worse])
    report = json.loads(render_report_json(worse))
    assert report["verdict"] == result
    assert report["verdict_details"] == [worse.verdict()]  # "FAIL: 4 gates failed; ..."
    assert report["first_screen"]["deciding"] == {
        "cause": "regression",
        "reason": "regression.detection worse than prompt 0.3 main run",
    }


def test_fail_and_not_fit_rows_of_the_index_give_different_reasons(worse: FolderReport) -> None:
    accepted = json.loads((ROOT / "reports/product_identity/0.3.1/report.json").read_text())
    page = render_overview([json.loads(render_report_json(worse)), accepted])
    fail_cell, not_fit_cell = re.findall(r'<td class="cut" title="([^"]*)"', page)
    assert fail_cell.startswith("regression.detection worse than prompt 0.3 main run (22 ")
    assert not_fit_cell.startswith("at chance on test-retest: factual_accuracy (quadratic kappa")
    assert "Deciding reason (95%)" in page


# --------------------------------------------------------------------------- counts agree


def test_the_figures_count_deciding_tests_as_the_verdict_does() -> None:
    """geval 1.0 said "3 of 3 deciding tests" above a figure saying "3 of 5": the five
    included two tests too small to decide. Both now count deciding tests, and say so."""
    report = json.loads((ROOT / "reports/geval/1.0/report.json").read_text())
    (figure,) = [f for f in report["first_screen"]["figures"] if f["what"].startswith("planted")]
    assert figure["note"] == ("3 of 3 deciding tests not better than chance, 2 more decide nothing")
    assert "3 of 3 deciding tests fail" in _result_line(ROOT / "reports/geval/1.0")
    for folder in BUILT_IN:  # every figure's counts, against the tests report.json lists
        report = json.loads((folder / "report.json").read_text())
        for figure in report["first_screen"]["figures"]:
            counted = re.match(r"(\d+) of (\d+) deciding tests", figure["note"])
            if counted is None:
                continue
            (model,) = [m for m in report["models"] if m["model"] == figure["model"]]
            family = figure["what"].split(":")[0]
            tests = [t for t in model["fitness"]["tests"] if t["name"].split(":")[0] == family]
            decisive = [t for t in tests if t["testable"]]
            failing = [t for t in decisive if t["reading"] != "better than chance"]
            assert (int(counted[1]), int(counted[2])) == (len(failing), len(decisive)), figure


# --------------------------------------------------------------------------- PASS, blind


def test_a_blind_pass_says_so_in_its_result_line_and_the_details_follow(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """geval 1.0's gates are blind to a 15-point drop; were it fit, it would read PASS."""
    built = disk_reports(ROOT / "reports", ROOT / "planted_sets", "geval")
    (folder,) = built.folders
    fit = ChanceTest("planted detection", "detection - control FP", 0.5, 0.3, 0.7, 0.0,
                     0.001, 0.999, 44)  # fmt: skip
    (model,) = folder.models
    passing = dataclasses.replace(model, fitness=Fitness((fit,)), accept_not_fit="")
    report = dataclasses.replace(folder, models=(passing,))
    assert report.verdict_word() == PASS
    screen = first_screen(report)
    assert screen.result() == (
        "PASS, but blind to detection drops under 21 points: 48 planted defects would see 15 "
        "points (it has 32)"
    )
    assert len(f"**Result: {screen.result()}**") <= LINE_LIMIT
    (detail,) = screen.details()
    assert "`python -m judges plan geval --drop 0.15` plans the set" in detail
    # The hint on the line after the Result line runs as printed, from the project root.
    (hint,) = re.findall(r"`(python -m judges [^`]*)`", detail)
    monkeypatch.chdir(ROOT)
    assert main(shlex.split(hint)[3:]) == 0
    assert "planted defects" in capsys.readouterr().out


# --------------------------------------------------------------------------- the rules


def _reason(cause: Cause, name: str, figure: str = "") -> Reason:
    return Reason(cause, name, name, figure, MODEL)


def test_precedence_picks_the_reason_that_can_make_the_word() -> None:
    floor = _reason(Cause.FLOOR, "gate detection[cousin] failed")
    regression = _reason(Cause.REGRESSION, "regression.detection worse than prompt 1.0")
    failures = _reason(Cause.NEW_FAILURE, "49 new failures of 61 items")
    at_chance = _reason(Cause.NOT_FIT_ACCEPTED, "at chance on planted detection")
    blind = _reason(Cause.BLIND, "blind to detection drops under 21 points")
    found = [blind, floor, failures, at_chance, regression]
    assert deciding(found, FAIL) is regression
    assert ordered(found, FAIL) == (regression, floor, failures, at_chance, blind)
    assert deciding(found, NOT_FIT) is at_chance
    assert ordered(found, NOT_FIT)[0] is at_chance
    unaccepted = _reason(Cause.NOT_FIT, "worse than chance on SME kappa")
    assert deciding([*found, unaccepted], NOT_FIT) is unaccepted
    assert deciding(found, PASS) is blind
    assert deciding([floor], PASS) is None


def test_a_line_too_long_loses_its_figure_first_then_the_end_of_the_name() -> None:
    reason = _reason(Cause.REGRESSION, "regression.detection worse than prompt 0.3",
                     "22 caught->missed vs 4 missed->caught, mid-p = 0.0002; in all 4")  # fmt: skip
    full = one_line(FAIL, FAIL, reason, 200)
    assert full.endswith("(22 caught->missed vs 4 missed->caught, mid-p = 0.0002; in all 4)")
    shorter = one_line(FAIL, FAIL, reason, 110)
    assert shorter.endswith("(22 caught->missed vs 4 missed->caught, mid-p = 0.0002)")
    assert one_line(FAIL, FAIL, reason, 60) == f"{FAIL}: {reason.name}"
    long_model = "local:" + "m" * 120
    named = _reason(Cause.FLOOR, f"{long_model}: gate detection[cousin] failed", "8/16")
    cut = one_line(FAIL, FAIL, named, 100)
    assert len(cut) <= 100 and cut.endswith(" ...") and cut.startswith(f"{FAIL}: local:")


def test_the_readmes_example_of_a_last_line_is_a_committed_one() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    found = re.search(r"`(relevance 1\.1: NOT FIT \(accepted\): [^`]*) \.\.\.\)`", readme)
    assert found is not None
    report = json.loads((ROOT / "reports/relevance/1.1/report.json").read_text())
    assert f"relevance 1.1: {report['verdict']}".startswith(found[1])


def test_the_judges_section_ends_with_the_verdicts_not_the_notices() -> None:
    from judges.pytest_plugin.session.outputs import Outcome

    verdict = ("geval 1.0: NOT FIT (accepted): at chance on planted detection", {"bold": True})
    outcome = Outcome(None, [verdict], ["1 set-level test(s) skipped their gates: ..."])
    assert outcome.terminal_lines()[-1] == verdict
