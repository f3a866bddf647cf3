"""The detection drop a report states its gate sees, held against the real gates.

`judges.stats.regression.sensitivity` states the smallest detection drop the regression
family fails with 80% power. Here rows are drawn from the model it states (items caught
always, missed always, or unsteady at q = 1/2, reproducing the baseline's rate and its
main-retest discordance; a drop d turns each catch of the new run into a miss with
probability d / r), written here independently of it, and every replicate goes through
`version_regressions`: the family the report decides with (Holm with Tarone's count, both
baseline draws, the control gate beside detection). At the stated drop the share of
replicates whose detection gate fails must be 80% within the simulation's error, at two set
sizes; five points less must be seen clearly less often.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from judges.core.results import JudgementRow
from judges.reports.sections import sensitivity
from judges.sets.planted import Gates
from judges.stats.estimates.power import WORTH_DETECTING, mcnemar_drop
from judges.stats.regression.family import version_regressions
from judges.stats.regression.sensitivity import (
    MOST_ITEMS,
    Sensitivity,
    detectable_drop,
    gate_power,
    gate_sensitivity,
)
from judges.verdicts.regressions import family_level

ALPHA = 0.05
RATE, DISCORDANCE = 0.8, 0.1  # unsteady items: 2 x 0.1 = 20%, always caught: 70%
CONTROLS = 30
REPLICATES = 500


def _row(item: str, met: bool, control: bool) -> JudgementRow:
    return JudgementRow(
        judge="j", prompt_version="1", prompt_hash="h", model="local:m", item_id=item,
        category="control" if control else "cousin", control=control, status="ok",
        verdict={"score": 1}, expect=[], met=met,
    )  # fmt: skip


class _Judge:
    """One set of items of fixed kinds; each run draws the unsteady ones again."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        # The shares exactly, as the report's figure takes the set's own rate and flips.
        kind = (np.arange(n) + 0.5) / n
        self.always = kind < RATE - DISCORDANCE
        self.unsteady = (kind >= RATE - DISCORDANCE) & (kind < RATE + DISCORDANCE)
        self.controls_unsteady = rng.random(CONTROLS) < 0.8  # flips enough to count
        self.rng = rng

    def run(self, drop: float = 0.0) -> list[JudgementRow]:
        rng = self.rng
        caught = self.always | (self.unsteady & (rng.random(self.always.size) < 0.5))
        caught &= rng.random(self.always.size) >= drop / RATE
        held = ~self.controls_unsteady | (rng.random(CONTROLS) < 0.5)
        return [_row(f"D-{i:03d}", bool(m), False) for i, m in enumerate(caught)] + [
            _row(f"C-{i:03d}", bool(m), True) for i, m in enumerate(held)
        ]


def _family(judge: _Judge, drop: float) -> list:
    baseline, retest, new = judge.run(), judge.run(), judge.run(drop)
    return version_regressions(baseline, new, "prompt 1 main run", (), {}, ALPHA, retest=retest)


def _detection_fails(family: list) -> bool:
    gate = next(g for g in family if g.name == "regression.detection")
    return gate.passed is False


@pytest.mark.parametrize("n", [40, 120])
def test_the_stated_drop_is_seen_80_percent_of_the_time_by_the_real_gates(n: int) -> None:
    rng = np.random.default_rng(n)
    judge = _Judge(n, rng)
    level = family_level(_family(judge, 0.0), ALPHA)
    assert level == pytest.approx(ALPHA / 2)  # detection and control, both counted
    stated = gate_sensitivity("detection", n, RATE, (round(DISCORDANCE * n), n), level, draws=2)
    assert not math.isnan(stated.drop)
    seen = np.mean([_detection_fails(_family(judge, stated.drop)) for _ in range(REPLICATES)])
    error = 3 * math.sqrt(0.8 * 0.2 / REPLICATES)  # the replicates' own, at 3 sd
    # The stated figure carries its own Monte Carlo error and half a point of grid.
    assert abs(seen - 0.8) <= error + 0.03, (n, stated.drop, seen)
    less = np.mean([_detection_fails(_family(judge, stated.drop - 0.05)) for _ in range(200)])
    assert less < 0.75, (n, stated.drop, less)


def test_one_draw_at_alpha_is_the_exact_mcnemar_power_where_the_models_meet() -> None:
    """With one baseline draw and no family, the gate is `judges plan`'s McNemar test. Its
    exact power takes a drop's flips as new discordant pairs on top of the unchanged ones;
    here a drop turns catches into misses, which also removes some of the missed->caught
    flips an unchanged judge would show: the same where few items flip, and a smaller
    drop (more power) where many do."""
    for n, discordance in ((100, 0.05), (200, 0.02), (60, 0.0)):
        exact = mcnemar_drop(n, discordance, ALPHA)
        simulated = detectable_drop(n, 0.7, discordance, ALPHA, 1)
        assert abs(simulated - exact) <= 0.02, (n, discordance, exact, simulated)
    assert detectable_drop(30, 0.7, 0.2, ALPHA, 1) <= mcnemar_drop(30, 0.2, ALPHA)


def test_power_rises_with_the_drop_and_with_the_set() -> None:
    drops = np.linspace(0.0, 0.4, 9)
    small = gate_power(40, RATE, DISCORDANCE, drops, ALPHA / 2, draws=2)
    large = gate_power(160, RATE, DISCORDANCE, drops, ALPHA / 2, draws=2)
    assert np.all(np.diff(small) >= 0) and np.all(np.diff(large) >= 0)
    assert small[0] <= ALPHA and np.all(large[1:] >= small[1:])


def test_two_draws_see_less_than_one() -> None:
    one = detectable_drop(60, RATE, DISCORDANCE, ALPHA / 2, 1)
    two = detectable_drop(60, RATE, DISCORDANCE, ALPHA / 2, 2)
    assert two > one


def test_a_blind_gate_says_what_would_see_the_declared_drop() -> None:
    found = gate_sensitivity("detection", 32, 0.85, (1, 32), ALPHA / 3, draws=2)
    assert found.blind and found.drop > WORTH_DETECTING
    assert found.needed is not None and found.needed > 32
    # What it names as enough is enough, and one in ten fewer is not.
    level, rate, share = found.level, found.rate, found.discordance
    assert detectable_drop(found.needed, rate, share, level, 2) <= WORTH_DETECTING + 0.005
    assert (
        sensitivity.blind_to(found)
        == f"blind to detection drops under {found.drop * 100:.0f} points"
    )
    assert f"{found.needed} planted defects would see 15 points (it has 32)" in sensitivity.needs(
        found
    )


def test_a_gate_that_sees_the_drop_is_not_blind() -> None:
    found = gate_sensitivity("detection", 400, 0.8, (20, 400), ALPHA / 3, draws=2)
    assert not found.blind and found.drop <= WORTH_DETECTING
    assert "it sees it" in sensitivity.describe(found)
    low, high = found.interval  # more flips than seen: a larger drop
    assert low <= found.drop <= high and low < high
    assert sensitivity.value(found) == f"{found.drop:.2f} [{low:.2f}, {high:.2f}]"


def test_too_few_defects_see_nothing() -> None:
    found = gate_sensitivity("detection", 3, 0.9, (0, 3), ALPHA, draws=2)
    assert math.isnan(found.drop) and found.blind
    assert sensitivity.blind_to(found) == "blind to any detection drop"
    assert isinstance(found, Sensitivity)


def test_a_drop_no_set_up_to_the_cap_sees_names_the_cap() -> None:
    found = gate_sensitivity("detection", 32, 0.85, (1, 32), ALPHA / 3, draws=2)
    beyond = replace(found, needed=None)  # what the search says past its last size
    assert beyond.most_items == MOST_ITEMS == 5000
    assert sensitivity.enough(beyond) == "over 5,000 planted defects"
    assert sensitivity.enough(replace(beyond, most_items=800)) == "over 800 planted defects"


def test_gates_toml_declares_the_drop_and_refuses_nonsense() -> None:
    assert Gates().min_detectable_drop == WORTH_DETECTING
    assert Gates(min_detectable_drop=0.3).min_detectable_drop == 0.3
    for bad in (0.0, 1.0, -0.1, math.nan):
        with pytest.raises(ValueError):
            Gates(min_detectable_drop=bad)


def test_no_control_held_leaves_nothing_to_drop() -> None:
    """A baseline that holds no control cannot lose 15 points of them: no power statement,
    and not blind (geval's baseline flags all 12 of its controls)."""
    found = gate_sensitivity("control_false_positive", 12, 0.0, (0, 12), ALPHA, draws=2)
    assert found.nothing_to_drop and not found.blind
    assert sensitivity.value(found) == "undefined (baseline controls held 0.00: nothing to drop)"
    assert sensitivity.seen(found).startswith("no rise in control false positives of 15 points")
