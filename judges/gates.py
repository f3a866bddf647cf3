"""Detection gates: per-category detection and control false positives, with Wilson intervals.

Pure functions over result rows; the plugin turns a failed gate into a failed test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judges.planted import Gates
from judges.results import JudgementRow
from judges.stats import Rate, wilson

CONTROL_FALSE_POSITIVE = "control_false_positive"
ERROR_RATE = "error_rate"


@dataclass(frozen=True)
class GateResult:
    name: str
    rate: Rate
    threshold: float | None
    at_least: bool  # True: rate must be >= threshold; False: rate must be <= threshold

    @property
    def passed(self) -> bool | None:
        if self.threshold is None or self.rate.n == 0:
            return None
        if self.at_least:
            return self.rate.rate >= self.threshold
        return self.rate.rate <= self.threshold

    def describe(self) -> str:
        sign = ">=" if self.at_least else "<="
        limit = "no threshold" if self.threshold is None else f"gate {sign} {self.threshold:.2f}"
        return f"{self.name}: {self.rate} ({limit})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            **self.rate.as_dict(),
            "threshold": self.threshold,
            "direction": ">=" if self.at_least else "<=",
            "passed": self.passed,
        }


def detected(row: JudgementRow) -> bool:
    return row.status == "ok" and bool(row.met)


def detection_rates(rows: list[JudgementRow]) -> dict[str, Rate]:
    """Detection per defect category (controls excluded)."""
    by_category: dict[str, list[bool]] = {}
    for row in rows:
        if not row.control:
            by_category.setdefault(row.category, []).append(detected(row))
    return {c: wilson(sum(hits), len(hits)) for c, hits in sorted(by_category.items())}


def control_false_positive_rate(rows: list[JudgementRow]) -> Rate:
    """Controls the judge moved: answered, but outside what a harmless change allows."""
    controls = [row for row in rows if row.control and row.status == "ok"]
    return wilson(sum(not row.met for row in controls), len(controls))


def error_rate(rows: list[JudgementRow]) -> Rate:
    return wilson(sum(row.status != "ok" for row in rows), len(rows))


def evaluate(rows: list[JudgementRow], gates: Gates | None) -> list[GateResult]:
    """Every gate of one (judge, prompt version, model), thresholds from `gates.toml`."""
    gates = gates or Gates()
    results = [
        GateResult(f"detection[{category}]", rate, gates.min_detection.get(category), True)
        for category, rate in detection_rates(rows).items()
    ]
    if any(row.control for row in rows):
        results.append(
            GateResult(
                CONTROL_FALSE_POSITIVE,
                control_false_positive_rate(rows),
                gates.max_control_false_positive,
                False,
            )
        )
    results.append(GateResult(ERROR_RATE, error_rate(rows), gates.max_error_rate, False))
    return results
