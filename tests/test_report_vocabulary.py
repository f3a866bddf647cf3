"""One vocabulary in every report: a chance test reads better than, at or worse than
chance; a verdict is NOT FIT, FAIL, INCOMPLETE or PASS; no `nan`, no power statement
without spread, no phrase said twice."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from judges.reports.sections.fitness import (
    AT_CHANCE,
    BETTER,
    TOO_FEW,
    WORSE,
    chance_reading,
    figure_text,
    not_fit_phrase,
)
from judges.stats.estimates.power import Power
from judges.stats.fitness.chance import ChanceTest
from judges.stats.planning.set_sizes import plan_set
from tests._estimate_rows import estimate_row

REPORTS = Path(__file__).resolve().parent.parent / "reports"
BUILT_IN = sorted(p.parent for p in REPORTS.glob("*/*/report.json"))


def _test(value: float, low: float, high: float, p: float, p_worse: float) -> ChanceTest:
    return ChanceTest("noise: x", "alpha", value, low, high, 0.0, p, p_worse, 9)


def test_a_test_wholly_below_chance_reads_worse_than_chance() -> None:
    # The noise alpha of -0.13 [-0.20, -0.06]: its permutation test alone says "at chance".
    below = _test(-0.13, -0.20, -0.06, 0.964, 0.07)
    assert chance_reading(below) == WORSE
    assert chance_reading(_test(-0.03, -0.17, 0.12, 0.56, 0.44)) == AT_CHANCE
    assert chance_reading(_test(-0.2, -0.41, 0.01, 0.98, 0.038)) == WORSE  # by its test
    assert chance_reading(_test(0.4, 0.2, 0.6, 0.001, 0.999)) == BETTER
    untestable = ChanceTest("t", "AUC", 1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 2, testable=False)
    assert chance_reading(untestable) == TOO_FEW
    phrase = not_fit_phrase([below, _test(-0.03, -0.17, 0.12, 0.56, 0.44)])
    assert phrase == "worse than chance on noise: x; at chance on noise: x"


def test_an_undefined_figure_says_why_instead_of_nan() -> None:
    constant = ChanceTest(
        "SME Spearman: x", "Spearman", math.nan, math.nan, math.nan, 0.0, 1.0, 1.0, 17,
        detail="17 pairs; one side is constant: no correlation beyond chance",
    )  # fmt: skip
    text = figure_text(constant)
    assert "nan" not in text and "undefined (17 pairs; one side is constant" in text
    assert "p(better) = 1" in text


def test_no_power_statement_without_spread() -> None:
    assert "drop of" not in Power(0.0, 61, 0.8, "score points", "sd 0.00").describe()
    assert "no power statement at n = 61" in Power(0.0, 61, 0.8, "rate", "x").describe()
    assert "detects a drop of 0.34" in Power(0.34, 46, 0.8, "rate", "x").describe()


def test_plan_states_no_count_for_scores_that_never_vary() -> None:
    main = [estimate_row(f"D{i}", False, {"s": 2 if i % 2 else 1}) for i in range(20)]
    retest = [r.model_copy(update={"run": "retest"}) for r in main]  # every pair alike
    plan = plan_set("j", "1", "m", main + retest, ["s"], noise_sd={}, noise_items=9,
                    noise_repeats=5, kappa=None, drop=0.1)  # fmt: skip
    (line,) = [x for x in plan.lines() if "score s" in x]
    assert "needs" not in line and "(enough)" not in line
    assert "no count stated: the paired values did not vary" in line


def _texts(folder: Path) -> dict[str, str]:
    return {
        name: (folder / name).read_text(encoding="utf-8")
        for name in ("report.md", "index.html", "failures.md", "comparison.md")
        if (folder / name).is_file()
    }


@pytest.mark.parametrize("folder", BUILT_IN, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_built_in_reports_speak_one_vocabulary(folder: Path) -> None:
    texts = _texts(folder)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    for name, text in texts.items():
        assert not re.search(r"\bnan\b", text), (folder, name)
        assert "drop of 0.00" not in text, (folder, name)
        for sentence in re.split(r"(?<=\.) ", text):
            assert sentence.count("more repeats than any budget") <= 1, (folder, name)
    for m in report["models"]:
        for test in m.get("fitness", {}).get("tests", []):
            assert test["reading"] in {BETTER, AT_CHANCE, WORSE, TOO_FEW}
            if test["testable"] and test["high"] is not None and test["high"] < test["chance"]:
                assert test["reading"] == WORSE, test["name"]
            # The fitness table says the same word as report.json.
            row = f"| {test['name']} | {test['reading'].upper()} |"
            assert row in texts["report.md"], row
    # The verdict never lists a test worse than chance under "at chance on".
    worse = [
        t["name"]
        for m in report["models"]
        for t in m.get("fitness", {}).get("tests", [])
        if t["reading"] == WORSE
    ]
    verdict = report["verdict"]
    for part in verdict.split("; "):
        if part.startswith(f"{AT_CHANCE} on") or f": {AT_CHANCE} on" in part:
            assert not any(name in part for name in worse), verdict
    assert report["verdict_word"] in {"PASS", "FAIL", "NOT FIT", "INCOMPLETE"}
    assert re.search(r"(?m)^\| .* \| NOT FIT \|", texts["report.md"]) is None, (
        "NOT FIT is a verdict, never the reading of one test"
    )
