"""Figures as a reader sees them: a failing value never prints equal to its threshold, and
a statistic shown in two places of a built-in report shows one value."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from judges.stats.estimates.floors import Gate, distinct_digits
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
