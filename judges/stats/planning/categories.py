"""What a planted set can detect per category, from the recorded runs' own flips.

A detection gate compares two runs item by item; how many items flip between two runs of
an unchanged judge (the discordance) sets the drop it can see. The discordance comes from
a paired run (the retest against main, else the baseline against this run); without one,
from each category's detection rate r as 2 r (1 - r), the most two runs can differ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judges.core.results import JudgementRow
from judges.stats.estimates.floors import detected
from judges.stats.estimates.power import POWER, WORTH_DETECTING, assumed_discordance, mcnemar_drop
from judges.stats.regression.gates import PairedCounts, Regression

__all__ = [
    "CategoryPower",
    "Discordance",
    "category_power",
    "discordance_of",
]


@dataclass(frozen=True)
class Discordance:
    """Share of paired items that flipped between two runs, and which runs."""

    flipped: int
    n: int
    source: str  # e.g. "retest against main"

    @property
    def share(self) -> float:
        return self.flipped / self.n if self.n else math.nan

    def describe(self) -> str:
        return f"{self.flipped}/{self.n} items flipped, {self.source}"


@dataclass(frozen=True)
class CategoryPower:
    """The smallest detection drop of one category a paired gate sees with 80% power."""

    category: str
    n: int  # planted defects of the category judged in the main run
    discordance: float
    drop: float  # nan: no drop is detectable at this n, or there is nothing to drop
    basis: str
    detected: int | None = None  # set when nothing was detected: no drop to power for

    @property
    def nothing_to_drop(self) -> bool:
        return self.detected == 0

    @property
    def sees_worth_detecting(self) -> bool:
        return not math.isnan(self.drop) and self.drop <= WORTH_DETECTING + 1e-9

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "n": self.n,
            "discordance": round(self.discordance, 4),
            "drop": None if math.isnan(self.drop) else round(self.drop, 4),
            "power": POWER,
            "basis": self.basis,
            "detects_15_points": self.sees_worth_detecting,
        }


def discordance_of(gates: Sequence[Regression], source: str) -> Discordance | None:
    """The detection gate's flips (both ways) among `gates`, if it was evaluated."""
    for gate in gates:
        if gate.name.endswith("regression.detection") and isinstance(gate.result, PairedCounts):
            counts = gate.result
            if counts.n:
                return Discordance(counts.worse + counts.better, counts.n, source)
    return None


def category_power(
    main: Sequence[JudgementRow], discordance: Discordance | None, alpha: float = 0.05
) -> list[CategoryPower]:
    """Per defect category of the main run, the smallest drop its paired gate sees."""
    by_category: dict[str, list[JudgementRow]] = {}
    for row in main:
        # Every judged defect, an error row too (not detected), as detection counts them.
        if not row.control:
            by_category.setdefault(row.category, []).append(row)
    found = []
    for category, rows in sorted(by_category.items()):
        # Nothing detected leaves nothing to drop, whatever a retest's discordance says.
        if not any(map(detected, rows)):
            basis = f"nothing detected (0/{len(rows)}): no drop to detect"
            found.append(CategoryPower(category, len(rows), 0.0, math.nan, basis, detected=0))
            continue
        if discordance is not None:
            share, basis = discordance.share, f"discordance {discordance.describe()}"
        else:
            rate = sum(map(detected, rows)) / len(rows)
            share = assumed_discordance(rate)
            basis = (
                f"no paired run: discordance assumed 2 r (1 - r) = {share:.2f} at r = {rate:.2f}"
            )
        drop = mcnemar_drop(len(rows), share, alpha)
        found.append(CategoryPower(category, len(rows), share, drop, basis))
    return found
