"""Figures as a reader sees them: a failing value never prints equal to its threshold, and
a statistic shown in two places of a built-in report shows one value."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judges.core.thresholds import distinct_digits
from judges.stats.estimates.floors import Gate
from judges.stats.estimates.intervals import wilson

REPORTS = Path(__file__).resolve().parent.parent / "reports"
BUILT_IN = sorted(p.parent for p in REPORTS.glob("*/*/report.json"))


@pytest.mark.parametrize(
    ("k", "n", "threshold", "at_least", "value", "limit"),
    [
        (11, 526, 0.02, False, "11/526 = 0.021", "gate <= 0.02"),  # 0.0209 fails <= 0.02
        (28, 47, 0.6, True, "28/47 = 0.596", "gate >= 0.60"),  # 0.5957 fails >= 0.60
        (30, 50, 0.6, True, "30/50 = 0.60", "gate >= 0.60"),  # exactly at it: passes
        (1, 200, 0.005, False, "1/200 = 0.005", "gate <= 0.005"),  # threshold's own digits
    ],
)
def test_a_value_never_reads_equal_to_the_threshold_it_fails(
    k: int, n: int, threshold: float, at_least: bool, value: str, limit: str
) -> None:
    gate = Gate("g", wilson(k, n), threshold, at_least)
    assert gate.describe().startswith(f"g: {value} [")
    assert f"({limit})" in gate.describe()
    shown = float(gate.value_text().split(" = ")[1].split()[0])
    shown_limit = float(gate.threshold_text().split()[1])
    if gate.passed is False:
        assert shown != shown_limit
        assert (shown < shown_limit) if at_least else (shown > shown_limit)


def test_the_digits_grow_only_as_far_as_needed() -> None:
    assert distinct_digits(0.5957, 0.6) == 3
    assert distinct_digits(0.60001, 0.6) == 5
    assert distinct_digits(0.55, 0.6) == 2
    assert distinct_digits(0.6, 0.6) == 2
    assert distinct_digits(0.3, None) == 2


def _gate_rows(report_md: str) -> list[tuple[str, str, str, str]]:
    """Every row of a `| Gate | Value | Threshold | Result |` table with a threshold."""
    rows = []
    for line in report_md.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) == 4 and re.fullmatch(r"(>=|<=) [0-9.]+", cells[2]):
            rows.append((cells[0], cells[1], cells[2], cells[3]))
    return rows


@pytest.mark.parametrize("folder", BUILT_IN, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_every_gate_of_a_built_in_report_reads_as_its_result(folder: Path) -> None:
    """Each gate row's printed value and threshold agree with its pass or FAIL."""
    rows = _gate_rows((folder / "report.md").read_text(encoding="utf-8"))
    gates = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    expected = sum(
        g["threshold"] is not None and g["passed"] is not None
        for m in gates["models"]
        for g in m["gates"]["results"]
    )
    assert len(rows) == expected
    for name, value, threshold, result in rows:
        point = float(re.search(r"(?:= )?(-?[0-9]+\.[0-9]+)", value).group(1))
        sign, limit = threshold.split()
        holds = point >= float(limit) if sign == ">=" else point <= float(limit)
        assert holds == (result == "pass"), (folder, name, value, threshold, result)


def _same(a: dict, b: dict, *keys: str) -> None:
    for key in keys:
        assert a[key] == b[key], (key, a, b)


def _twins(report: dict) -> list[tuple[str, dict, dict]]:
    """Pairs of places in report.json that hold one statistic: (what, one, the other)."""
    found = []
    for m in report["models"]:
        tests = {t["name"]: t for t in m.get("fitness", {}).get("tests", [])}
        sme = m.get("sme")
        if sme is not None:
            for field, name in (("spearman", "SME Spearman"), ("kappa", "SME kappa")):
                test = tests.get(f"{name}: {sme['dimension']}")
                if test is not None and sme.get(field) is not None:
                    found.append((name, test, sme[field] | {"value": sme[field]["value"]}))
        retest = m.get("test_retest") or {"dimensions": {}}
        for dim, figures in retest["dimensions"].items():
            test = tests.get(f"test-retest: {dim}")
            if test is not None and figures["kappa"] is not None:
                found.append((f"retest kappa {dim}", test, figures["kappa"]))
        for category, rate in m["detection"].items():
            test = tests.get(f"planted detection: {category}")
            if test is not None:
                counts = f"defects flagged {rate['successes']}/{rate['n']},"
                assert test["detail"].startswith(counts), (test["detail"], counts)
        for gate in m["gates"]["results"]:
            if gate["name"].startswith("detection["):
                rate = m["detection"][gate["name"][len("detection[") : -1]]
                _same(gate, rate, "successes", "n", "rate", "low", "high")
    return found


def _interval(figure: dict) -> str:
    return f"[{figure['low']:.2f}, {figure['high']:.2f}]"


@pytest.mark.parametrize("folder", BUILT_IN, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_a_figure_shown_twice_shows_one_value(folder: Path) -> None:
    """Every statistic that two sections show (the fitness table and the SME, retest,
    detection and gates sections) has one value, one interval and one n, in report.json,
    report.md and index.html; a comparison's 'before' is the earlier report's figure."""
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    for what, test, figure in _twins(report):
        assert (test["value"], test["low"], test["high"], test["n"]) == (
            figure["value"],
            figure["low"],
            figure["high"],
            figure["n"],
        ), (folder, what)
        if figure["value"] is None:  # undefined in both places, in words, never nan
            assert f"undefined n={figure['n']}" in report_md, (folder, what)
            # A test that cannot decide (one value on a side) reads so; else it is at chance.
            reads = "AT CHANCE" if test["testable"] else "TOO FEW TO TEST"
            assert f"| {test['name']} | {reads} | " in report_md, (folder, what)
            continue
        shown = f"{figure['value']:.2f} {_interval(figure)} n={figure['n']}"
        assert shown in report_md, (folder, what, shown)
        assert f"| {test['value']:.2f} | {_interval(test)} |" in report_md, (folder, what)
    for m in report["models"]:
        c = m.get("comparison")
        earlier = folder.parent / (c or {}).get("before", "") / "report.json"
        if c is None or not earlier.is_file():
            continue
        before = [x for x in json.loads(earlier.read_text())["models"] if x["model"] == m["model"]]
        if before and c["n_pairs"] == before[0]["main_rows"] == m["main_rows"]:  # same items
            before = before[0]
            _same(c["detection_before"], before["all_defects"], "successes", "n", "low", "high")
            _same(c["detection_after"], m["all_defects"], "successes", "n", "low", "high")
