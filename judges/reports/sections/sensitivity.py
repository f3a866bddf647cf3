"""What a version's detection regression gate can see, in words: the Result line's "blind
to detection drops under 21 points", the first screen's figure, `plan` and `baseline`."""

from __future__ import annotations

import math

from judges.stats.regression.sensitivity import MOST_ITEMS, Sensitivity

__all__ = ["basis", "blind_to", "describe", "needs", "points", "seen", "value"]


def points(found: Sensitivity) -> str:
    """The drop in detection points: "21 points"."""
    return "no drop at all" if math.isnan(found.drop) else f"{found.drop * 100:.0f} points"


def value(found: Sensitivity) -> str:
    """The drop with its interval, as a first screen's figure: "0.21 [0.18, 0.24]"."""
    if math.isnan(found.drop):
        return "undefined (no drop up to every catch is seen)"
    low, high = (f"{x:.2f}" if not math.isnan(x) else "none" for x in found.interval)
    return f"{found.drop:.2f} [{low}, {high}]"


def blind_to(found: Sensitivity) -> str:
    """The Result line's qualifier: "blind to detection drops under 21 points"."""
    if math.isnan(found.drop):
        return "blind to any detection drop"
    return f"blind to detection drops under {points(found)}"


def needs(found: Sensitivity) -> str:
    """What it would take: "48 planted defects would see 15 points (it has 32)"."""
    required = f"{found.required * 100:.0f} points"
    if found.needed is None:
        return f"over {MOST_ITEMS:,} planted defects would see {required}"
    return f"{found.needed} planted defects would see {required} (it has {found.n})"


def seen(found: Sensitivity) -> str:
    """ "sees a detection drop of 21 points with 80% power at n = 32 planted defects"."""
    what = (
        "sees no detection drop"
        if math.isnan(found.drop)
        else f"sees a detection drop of {points(found)}"
    )
    return f"{what} with {found.power:.0%} power at n = {found.n} planted defects"


def basis(found: Sensitivity) -> str:
    """What the figure was computed from."""
    if found.flips is None:
        where = f"no baseline retest: discordance assumed 2 r (1 - r) = {found.discordance:.2f}"
    else:
        flipped, paired = found.flips
        where = f"{flipped}/{paired} defects flipped between the baseline's main run and retest"
    against = "both baseline draws" if found.draws == 2 else "the baseline's main run"
    return (
        f"{where}; baseline detection {found.rate:.2f}; fails below {found.level:.4g} (Holm's "
        f"first step in the family) against {against}"
    )


def describe(found: Sensitivity) -> str:
    """The whole statement: what it sees, from what, and against gates.toml's drop."""
    return (
        f"{seen(found)} ({basis(found)}); gates.toml asks for {found.required * 100:.0f} points: "
        + ("blind to it; " + needs(found) if found.blind else "it sees it")
    )
