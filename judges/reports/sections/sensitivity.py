"""What a version's paired regression gates can see, in words: the Result line's "blind to
detection drops under 21 points", the first screen's figures, `plan` and `baseline`."""

from __future__ import annotations

import math

from judges.sets.folder import GATES_FILE
from judges.stats.regression.sensitivity import ScoreSensitivity, Sensitivity

__all__ = [
    "basis",
    "blind_to",
    "describe",
    "enough",
    "needs",
    "points",
    "score_range",
    "score_seen",
    "seen",
    "title",
    "value",
]

# Per gate: what drops, the items it is measured on, what "the rate" is.
_WORDS = {
    "detection": ("detection drop", "planted defects", "detection"),
    "control_false_positive": ("rise in control false positives", "controls", "controls held"),
}


def title(found: Sensitivity) -> str:
    """The first screen's figure name."""
    return f"smallest {_WORDS[found.gate][0]} the gate sees (80% power, 0-1)"


def points(found: Sensitivity) -> str:
    """The drop in detection points: "21 points"."""
    return "no drop at all" if math.isnan(found.drop) else f"{found.drop * 100:.0f} points"


def value(found: Sensitivity) -> str:
    """The drop with its interval, as a first screen's figure: "0.21 [0.18, 0.24]"."""
    if found.nothing_to_drop:
        return f"undefined (baseline {_WORDS[found.gate][2]} {found.rate:.2f}: nothing to drop)"
    if math.isnan(found.drop):
        return "undefined (no drop up to the whole rate is seen)"
    low, high = (f"{x:.2f}" if not math.isnan(x) else "none" for x in found.interval)
    return f"{found.drop:.2f} [{low}, {high}]"


def blind_to(found: Sensitivity) -> str:
    """The Result line's qualifier: "blind to detection drops under 21 points"."""
    what = _WORDS[found.gate][0]
    if math.isnan(found.drop):
        return f"blind to any {what}"
    plural = what.replace("drop", "drops").replace("rise in", "rises in")
    return f"blind to {plural} under {points(found)}"


def enough(found: Sensitivity) -> str:
    """How many items would see the declared drop: "168 planted defects"."""
    items = _WORDS[found.gate][1]
    if found.needed is None:
        return f"over {found.most_items:,} {items}"
    return f"{found.needed} {items}"


def needs(found: Sensitivity) -> str:
    """What it would take: "48 planted defects would see 15 points (it has 32)"."""
    required = f"{found.required * 100:.0f} points"
    if found.needed is None:
        return f"{enough(found)} would see {required}"
    return f"{enough(found)} would see {required} (it has {found.n})"


def seen(found: Sensitivity) -> str:
    """ "sees a detection drop of 21 points with 80% power at n = 32 planted defects"."""
    drop, items, rate = _WORDS[found.gate]
    if found.nothing_to_drop:
        return (
            f"no {drop} of {found.required * 100:.0f} points can happen: baseline {rate} "
            f"{found.rate:.2f} at n = {found.n} {items}"
        )
    what = f"sees no {drop}" if math.isnan(found.drop) else f"sees a {drop} of {points(found)}"
    return f"{what} with {found.power:.0%} power at n = {found.n} {items}"


def basis(found: Sensitivity) -> str:
    """What the figure was computed from."""
    if found.flips is None:
        where = f"no baseline retest: discordance assumed 2 r (1 - r) = {found.discordance:.2f}"
    else:
        flipped, paired = found.flips
        where = (
            f"{flipped}/{paired} {_WORDS[found.gate][1]} flipped between the baseline's main "
            "run and retest"
        )
    against = "both baseline draws" if found.draws == 2 else "the baseline's main run"
    return (
        f"{where}; baseline {_WORDS[found.gate][2]} {found.rate:.2f}; fails below "
        f"{found.level:.4g} (Holm's first step in the family) against {against}"
    )


def describe(found: Sensitivity) -> str:
    """The whole statement: what it sees, from what, and against gates.toml's drop."""
    return (
        f"{seen(found)} ({basis(found)}); {GATES_FILE} asks for {found.required * 100:.0f} points: "
        + ("blind to it; " + needs(found) if found.blind else "it sees it")
    )


def _score_name(found: ScoreSensitivity) -> str:
    """`regression.score[coverage, defects]` -> "coverage on defects"."""
    inner = found.gate.partition("[")[2].rstrip("]")
    field, _, side = inner.partition(", ")
    return f"{field} on {side}" if side else inner or found.gate


def score_range(weakest: ScoreSensitivity, strongest: ScoreSensitivity) -> str:
    """The first screen's figure: "0.40 to 0.56 [0.38, 1.14] (fluency on defects, the weakest)"."""
    low, high = weakest.interval
    interval = f"{weakest.drop:.2f} [{low:.2f}, {high:.2f}]"
    if weakest is strongest:
        return f"{interval} ({_score_name(weakest)})"
    return f"{strongest.drop:.2f} to {interval} ({_score_name(weakest)})"


def score_seen(found: ScoreSensitivity) -> str:
    """ "coverage on defects: sees a mean drop of 0.62 score points with 80% power at n = 32"."""
    if math.isnan(found.drop):
        return f"{_score_name(found)}: too few pairs (n = {found.n}) for a power statement"
    return (
        f"{_score_name(found)}: sees a mean drop of {found.drop:.2f} score points with "
        f"{found.power:.0%} power at n = {found.n} (sd of paired differences {found.sd:.2f}, "
        f"drop interval {found.interval[0]:.2f}-{found.interval[1]:.2f}; "
        f"fails below {found.level:.4g}, Holm's first step in the family)"
    )
