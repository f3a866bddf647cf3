"""What a planted set cannot show, said before any call: legal sets that are weak.

A detection set without controls cannot tell a judge that catches defects from one that
flags everything; a category with few defects cannot show, on its own, that a good judge
beats chance. Neither is an error (a set grows), so each is a warning with its fix.
"""

from __future__ import annotations

from collections import Counter

from judges.sets.planted import PlantedSet
from judges.stats.fitness.judge import is_ranking_set
from judges.stats.fitness.pairwise import is_pairwise_set
from judges.stats.fitness.power import GOOD, MIN_POWER, detection_power

__all__ = ["weak_set_lines"]


def weak_set_lines(planted: PlantedSet, suggest_plan: bool = True) -> list[str]:
    """One line per weakness of the set, naming its file and the fix; none for a sound one.
    `suggest_plan`: point to `judges plan` for the counts (not when it is `plan` speaking)."""
    if is_pairwise_set(planted.items) or is_ranking_set(planted.items):
        return []  # no controls by design: chance is a coin flip, or a random ranking
    items = planted.folder.items_path
    controls = sum(item.control for item in planted.items)
    defects = Counter(item.category for item in planted.items if not item.control)
    if not defects:
        return []
    if not controls:
        return [
            f'{items}: no control items ("control": true): detection is measured against the '
            "control false-positive rate, so no chance test can run and a judge that flags "
            "everything meets every detection floor; add controls (harmless answers the "
            "judge must leave alone), about as many as the largest category's defects"
        ]
    weak = {
        category: power
        for category, n in sorted(defects.items())
        if (power := detection_power(n, controls)) < MIN_POWER
    }
    if not weak:
        return []
    shown = ", ".join(
        f"{category} ({defects[category]} defects: {power:.2f})" for category, power in weak.items()
    )
    return [
        f"{items}: against its {controls} controls, a judge right {GOOD:.0%} of the time beats "
        f"chance with probability below {MIN_POWER} on {shown}: these categories are "
        "diagnostics, not deciding tests; add controls or defects "
        + (
            f"(`python -m judges plan {planted.judge}` says how many)"
            if suggest_plan
            else "(the categories above say how many)"
        )
    ]
