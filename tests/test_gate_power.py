"""The regression gates' calibration and power, simulated (judges.stats.planning.simulation).

Under no change each gate must fail 3-7% of runs (5% +/- 2) for 0/1 and 1-5 scores at n =
20, 46 and 200; at n = 46 the score gate must see a 20-point drop at least as often as
McNemar; and the drop each gate states it detects with 80% power must be detected about 80%
of the time. Fixed seeds, vectorised: a few seconds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from judges.core.results import JudgementRow
from judges.reports.sections.category_power import category_power_lines
from judges.stats.estimates.power import (
    assumed_discordance,
    items_for_mcnemar,
    items_for_mean,
    mcnemar_drop,
    mcnemar_power,
    mean_drop,
)
from judges.stats.planning.categories import Discordance, category_power
from judges.stats.planning.simulation import (
    NOISE_SD,
    Cell,
    detection_gate_fails,
    discordant_draws,
    paired_draws,
    score_gate_fails,
    simulate,
)
from judges.stats.regression.gates import mcnemar_one_sided, score_regression
from judges.verdicts.regressions import category_power_warning

SIZES = (20, 46, 200)


@pytest.fixture(scope="module")
def cells() -> dict[tuple[str, str, int, float], Cell]:
    found = [
        *simulate("0/1", SIZES, (0.0, 0.2), reps=1500, seed=0),
        *simulate("1-5", SIZES, (0.0,), reps=1500, seed=1),
    ]
    return {(c.gate, c.scores, c.n, c.drop): c for c in found}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(
    ("gate", "scores"), [("detection", "0/1"), ("score", "0/1"), ("score", "1-5")]
)
def test_false_fail_rate_under_no_change_is_5_percent_plus_minus_2(
    cells: dict[tuple[str, str, int, float], Cell], gate: str, scores: str, n: int
) -> None:
    cell = cells[(gate, scores, n, 0.0)]
    assert 0.03 <= cell.fails.rate <= 0.07, cell.row()


def test_score_gate_sees_a_20_point_drop_at_n_46_as_often_as_mcnemar(
    cells: dict[tuple[str, str, int, float], Cell],
) -> None:
    score = cells[("score", "0/1", 46, 0.2)].fails.rate
    mcnemar = cells[("detection", "0/1", 46, 0.2)].fails.rate
    assert score >= mcnemar >= 0.6


def test_simulation_goes_through_the_gate_functions() -> None:
    """The vectorised decisions are the gates' own, run by run."""
    rng = np.random.default_rng(4)
    for scores in ("0/1", "1-5"):
        base, new = paired_draws(scores, 20, 0.1, 40, rng)
        fails = score_gate_fails(base, new)
        for b, a, failed in zip(base, new, fails, strict=True):
            gate = score_regression(
                "s", "b", b.astype(float), a.astype(float), higher_is_better=True
            )
            assert (gate.passed is False) == bool(failed)
            if scores == "0/1":
                test = mcnemar_one_sided(list(b == 1), list(a == 1))
                assert (test.p_value < 0.05) == bool(detection_gate_fails(b[None], a[None])[0])


@pytest.mark.parametrize(("n", "discordance"), [(20, 0.33), (46, 0.33), (46, 0.57), (200, 0.2)])
def test_stated_mcnemar_drop_is_detected_80_percent_of_the_time(n: int, discordance: float) -> None:
    drop = mcnemar_drop(n, discordance)
    base, new = discordant_draws(n, discordance, drop, 4000, np.random.default_rng(n))
    assert 0.77 <= detection_gate_fails(base, new).mean() <= 0.86
    # Just below the stated drop the power is under 80%: the figure is the smallest one.
    assert mcnemar_power(n, discordance, drop - 0.0025)[0] < 0.8


def test_stated_score_drop_is_detected_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(9)
    base, new = paired_draws("1-5", 50_000, 0.0, 1, rng)
    sd = float(np.std(new - base, ddof=1))
    assert sd == pytest.approx(math.sqrt(2) * 0.75, abs=0.1)  # noise sd 0.7 plus rounding
    drop = mean_drop(sd, 46)
    # Clipping at 1 and 5 shrinks a shift of the levels: find the shift whose mean score
    # drop is the stated one (drops are shares of the 4-point range).
    base, new = paired_draws("1-5", 50_000, drop / 4.0, 1, rng)
    shift = drop / 4.0 * drop / float(np.mean(base - new))
    base, new = paired_draws("1-5", 46, shift, 3000, rng)
    assert float(np.mean(base - new)) == pytest.approx(drop, abs=0.02)
    assert 0.75 <= score_gate_fails(base, new).mean() <= 0.86
    assert NOISE_SD == 0.7


def test_mean_drop_matches_the_normal_design_formula() -> None:
    z = scipy.stats.norm.ppf(0.95) + scipy.stats.norm.ppf(0.8)
    assert mean_drop(1.0, 100) == pytest.approx(z / 10)
    assert items_for_mean(1.0, z / 10) == 100
    assert math.isnan(mean_drop(1.0, 1))


def test_mcnemar_power_matches_a_direct_sum() -> None:
    """Against a by-hand double sum over the discordant count and the bad flips."""
    n, psi0, drop = 15, 0.3, 0.2
    psi, bad = psi0 + drop, (psi0 / 2 + drop) / (psi0 + drop)
    total = 0.0
    for d in range(n + 1):
        for k in range(d + 1):
            midp = scipy.stats.binom.sf(k, d, 0.5) + scipy.stats.binom.pmf(k, d, 0.5) / 2
            if d and midp < 0.05:
                total += scipy.stats.binom.pmf(d, n, psi) * scipy.stats.binom.pmf(k, d, bad)
    assert mcnemar_power(n, psi0, drop)[0] == pytest.approx(total, rel=1e-9)


def test_items_for_mcnemar_is_the_smallest_n_with_the_power() -> None:
    n = items_for_mcnemar(0.33, 0.15)
    assert n is not None
    assert mcnemar_power(n, 0.33, 0.15)[0] >= 0.8 > mcnemar_power(n - 1, 0.33, 0.15)[0]
    assert mcnemar_drop(n, 0.33) <= 0.15 + 1e-9
    assert items_for_mcnemar(0.9, 0.01, limit=100) is None


def test_assumed_discordance_bounds_independent_runs() -> None:
    assert assumed_discordance(0.5) == 0.5
    assert assumed_discordance(1.0) == 0.0


def _rows(category: str, met: list[bool]) -> list[JudgementRow]:
    return [
        JudgementRow(
            judge="j", prompt_version="1", prompt_hash="h", model="m", item_id=f"{category}-{i}",
            category=category, control=False, status="ok", verdict={}, met=m,
        )
        for i, m in enumerate(met)
    ]  # fmt: skip


def test_category_power_warns_when_a_category_cannot_see_15_points() -> None:
    main = _rows("small", [True, False] * 4) + _rows("large", [True] * 300 + [False] * 100)
    flips = Discordance(10, 100, "retest against main")
    powers = {p.category: p for p in category_power(main, flips)}
    assert powers["small"].n == 8 and powers["small"].drop == mcnemar_drop(8, 0.1)
    warning = category_power_warning(powers["small"], "geval") or ""
    assert "small (8 items) cannot detect a 15-point drop" in warning
    assert warning.endswith("`python -m judges plan geval` says how many items it needs")
    assert powers["large"].sees_worth_detecting and category_power_warning(powers["large"]) is None
    assert powers["large"].as_dict()["detects_15_points"] is True
    # Without a paired run, the discordance is the most two runs can show at the rate.
    assumed = {p.category: p for p in category_power(main, None)}
    assert assumed["small"].discordance == assumed_discordance(0.5)
    assert "no paired run" in assumed["small"].basis
    assert "| small | 8 | 0.50 |" in "\n".join(category_power_lines(list(assumed.values())))


@pytest.mark.parametrize("flips", [None, Discordance(0, 15, "retest against main")])
def test_a_category_with_nothing_detected_has_no_drop_to_detect_with_or_without_a_retest(
    flips: Discordance | None,
) -> None:
    # A retest's discordance sizes a drop only where there is detection to drop.
    (power,) = category_power(_rows("none", [False] * 13), flips)
    assert power.nothing_to_drop and math.isnan(power.drop) and power.basis.startswith("nothing")
    assert "there is no detection to drop" in (category_power_warning(power) or "")
    assert "none: nothing detected" in "\n".join(category_power_lines([power]))


def test_report_states_power_per_gate_and_category() -> None:
    root = Path(__file__).resolve().parents[1] / "reports" / "product_identity" / "0.3.1"
    text = (root / "report.md").read_text(encoding="utf-8")
    assert "cannot detect a 15-point drop in detection" in text
    assert "with 80% power at n = 46 (observed discordance 26/46)" in text
    data = json.loads((root / "report.json").read_text(encoding="utf-8"))
    model = data["models"][0]
    assert model["retest_regressions"][0]["power"]["n"] == 46
    assert {p["category"] for p in model["category_power"]} >= {"cousin", "sign_flip"}
