"""The regression reference: the accepted baseline as two draws, not one.

A baseline is one draw of its judge; a lucky one (every defect caught by chance) makes every
later honest re-record look worse against it. Where the accepted version also has a retest
run (an independent re-recording of the same prompt over the same items), each gate is taken
against both draws and fails only where the run is significantly worse than each: an
intersection-union test (Berger, Technometrics 1982), whose p-value is the larger of the two
and which needs no correction for taking two tests, since both must fail.

Why this and not a pooled reference: under no change, whatever the main draw turned out to
be, the retest and the new run are two fresh draws of one judge, so the test against the
retest fails at most alpha of the time, and the pair at most that. A lucky main draw (or a
lucky retest) therefore cannot raise the false-alarm rate above alpha. A reference that pools
the draws (each item's new value against picks from its three draws) still gives the lucky
draw a third of the weight: in tests/test_false_alarms.py it failed 12-16% of honest
re-records against lucky baselines.

The price is power: the pair fails a regressed run only when both tests do, and
P(both) >= P(main) + P(retest) - 1, so each gate states the drop that each of its two tests
detects with 90% power: the pair then detects it with 80% at least.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import scipy.stats

from judges.core.results import JudgementRow
from judges.stats.estimates.power import Power
from judges.stats.regression.gates import PairedCounts, Regression, paired_power

__all__ = ["EACH", "against_both_draws", "retest_as_draw"]

EACH = 0.9  # each draw's test at this power gives both together 80% at least


def retest_as_draw(
    baseline: Sequence[JudgementRow], retest: Sequence[JudgementRow]
) -> list[JudgementRow] | None:
    """The retest's rows as a second main run the gates can pair, or None where it does not
    answer every item the main run answered (the main run alone then decides)."""
    again = {row.item_id for row in retest if row.repeat == 0 and row.status == "ok"}
    answered = {row.item_id for row in baseline if row.repeat == 0 and row.status == "ok"}
    if not retest or not answered <= again:
        return None
    return [row.model_copy(update={"run": "main"}) for row in retest if row.repeat == 0]


def _power_of_both(gate: Regression, alpha: float) -> Power | None:
    """The drop both tests detect together with the gate's stated power (each at EACH)."""
    power = gate.power
    if power is None or math.isnan(power.drop):
        return power
    if isinstance(gate.result, PairedCounts):
        drop = paired_power(gate.result, alpha, EACH).drop
    else:  # a mean's drop is (z_(1-alpha) + z_power) times its standard error
        z = scipy.stats.norm.ppf
        drop = power.drop * (z(1 - alpha) + z(EACH)) / (z(1 - alpha) + z(power.power))
    basis = f"{power.basis}; each baseline draw's test at {EACH:.0%}, both must fail"
    return replace(power, drop=drop, basis=basis)


def against_both_draws(on_main: Regression, on_retest: Regression, alpha: float) -> Regression:
    """The gate decided against both baseline draws: it fails only where both tests do.

    `on_retest` is the same gate with the baseline's retest as the reference. A gate either
    test could not evaluate stays as `on_main` (the main draw alone decides)."""
    if on_main.p_value is None or on_retest.p_value is None or on_main.passed is None:
        return on_main
    p_value = max(on_main.p_value, on_retest.p_value)
    shown = "p < 0.0001" if on_retest.p_value < 0.0001 else f"p = {on_retest.p_value:.4f}"
    why = (
        f"{on_main.why}; against the baseline's retest {shown}: fails only where worse than "
        f"both baseline draws (the larger p decides, below {alpha:g})"
    )
    # The larger p can be no smaller than either test's smallest possible p.
    bounds = [b for b in (on_main.min_p, on_retest.min_p) if b is not None]
    return replace(
        on_main,
        passed=p_value >= alpha,
        p_value=p_value,
        min_p=max(bounds) if bounds else None,
        why=why,
        power=_power_of_both(on_main, alpha),
    )
