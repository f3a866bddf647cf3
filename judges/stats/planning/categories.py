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
    "category_power_lines",
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

    def warning(self) -> str | None:
        """A sentence for the report when the category cannot see a 15-point drop."""
        if self.sees_worth_detecting:
            return None
        if self.nothing_to_drop:
            return (
                f"category {self.category} ({self.n} items) detects 0/{self.n}: there is no "
                "detection to drop, so no power statement applies"
            )
        seen = (
            "no drop at all" if math.isnan(self.drop) else f"only a drop of {self.drop:.2f} or more"
        )
        return (
            f"category {self.category} ({self.n} items) cannot detect a "
            f"{WORTH_DETECTING * 100:.0f}-point drop in detection: it sees {seen} with "
            f"{POWER:.0%} power "
            f"({self.basis}); `python -m judges plan` says how many items it needs"
        )


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
        if discordance is not None:
            share, basis = discordance.share, f"discordance {discordance.describe()}"
        elif not any(map(detected, rows)):
            basis = f"nothing detected (0/{len(rows)}): no drop to detect"
            found.append(CategoryPower(category, len(rows), 0.0, math.nan, basis, detected=0))
            continue
        else:
            rate = sum(map(detected, rows)) / len(rows)
            share = assumed_discordance(rate)
            basis = (
                f"no paired run: discordance assumed 2 r (1 - r) = {share:.2f} at r = {rate:.2f}"
            )
        drop = mcnemar_drop(len(rows), share, alpha)
        found.append(CategoryPower(category, len(rows), share, drop, basis))
    return found


def category_power_lines(powers: Sequence[CategoryPower]) -> list[str]:
    """The report's markdown table: what a paired gate can see per category."""
    if not powers:
        return []
    bases = {p.basis for p in powers if not p.nothing_to_drop}
    basis = (
        "nothing detected in any category: no drop to detect"
        if not bases
        else bases.pop()
        if len(bases) == 1
        else "no paired run: discordance assumed 2 r (1 - r) at each category's detection rate r"
    )
    lines = [
        "Smallest detection drop a paired gate detects per category, with 80% power at one-"
        f"sided alpha ({basis}):",
        "",
        "| Category | Items | Discordance | Smallest detectable drop | Sees a 15-point drop |",
        "|---|---|---|---|---|",
    ]
    for p in powers:
        drop = "none at this n" if math.isnan(p.drop) else f"{p.drop:.2f}"
        drop = "none: nothing detected" if p.nothing_to_drop else drop
        sees = "yes" if p.sees_worth_detecting else "**no**"
        lines.append(f"| {p.category} | {p.n} | {p.discordance:.2f} | {drop} | {sees} |")
    return [*lines, ""]
