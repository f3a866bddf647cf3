"""The report's table of what each defect category's paired gate can see."""

from __future__ import annotations

from collections.abc import Sequence

from judges.reports.format import number
from judges.stats.planning.categories import CategoryPower

__all__ = ["category_power_lines"]


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
        drop = number(p.drop, nan="none at this n")
        drop = "none: nothing detected" if p.nothing_to_drop else drop
        sees = "yes" if p.sees_worth_detecting else "**no**"
        lines.append(f"| {p.category} | {p.n} | {p.discordance:.2f} | {drop} | {sees} |")
    return [*lines, ""]
