"""The first screen's score-gate figure: the smallest mean drop each score regression gate
sees with 80% power at the level it fails at in its family, checked against the gate itself."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from judges.reports.model.summary import _score_sensitivity_figure
from judges.stats.estimates.power import mean_drop, paired_t_drop
from judges.stats.regression.gates import score_regression
from judges.stats.regression.sensitivity import score_sensitivity

REPLICATES = 300


@pytest.mark.parametrize(("n", "level"), [(20, 0.05 / 6), (60, 0.05 / 9)])
def test_the_stated_drop_is_seen_80_percent_of_the_time_by_the_score_gate(
    n: int, level: float
) -> None:
    """Paired differences drawn at the stated mean drop (normal, sd 1) over base scores
    of a 1-5 scale; the real gate (score_regression's sign-flip test at `level`) must fail
    on about 80% of them, within the Monte Carlo error of REPLICATES draws."""
    stated = score_sensitivity("regression.score[coverage, defects]", 1.0, n, level)
    rng = np.random.default_rng(n)
    failed = 0
    for seed in range(REPLICATES):
        base = rng.integers(1, 6, n).astype(float)
        after = base + rng.normal(-stated.drop, 1.0, n)
        gate = score_regression(
            "g", "b", base, after, higher_is_better=True, alpha=level, seed=seed
        )
        failed += gate.passed is False
    error = math.sqrt(0.8 * 0.2 / REPLICATES)
    assert abs(failed / REPLICATES - 0.8) <= 3 * error, failed


def test_the_normal_figure_is_optimistic_at_few_items_and_a_holm_level() -> None:
    # The z-based figure promises less than the t test needs; at many items they agree.
    assert paired_t_drop(1.0, 20, 0.05 / 6) > mean_drop(1.0, 20, 0.05 / 6) * 1.05
    assert paired_t_drop(1.0, 2000, 0.05) == pytest.approx(mean_drop(1.0, 2000, 0.05), rel=0.01)
    # Against scipy's noncentral t directly: the power at the figure is 80%.
    drop = paired_t_drop(0.7, 30, 0.01)
    critical = scipy.stats.t.ppf(0.99, 29)
    assert scipy.stats.nct.sf(critical, 29, drop * math.sqrt(30) / 0.7) == pytest.approx(0.8)
    assert math.isnan(paired_t_drop(1.0, 1)) and paired_t_drop(0.0, 10) == 0.0


def test_the_first_screen_names_the_weakest_and_the_strongest_score_gate() -> None:
    found = [
        score_sensitivity("regression.score[coverage, defects]", 1.2, 8, 0.005),
        score_sensitivity("regression.score[fluency, controls]", 0.4, 12, 0.005),
        score_sensitivity("regression.score[overall, controls]", math.nan, 1, 0.005),
    ]
    figure = _score_sensitivity_figure("m", found)
    assert figure is not None
    assert figure.what == "smallest mean score drop the 2 score gates see (80% power)"
    strong, weak = found[1].drop, found[0].drop
    low, high = found[0].interval
    assert low < weak < high
    assert figure.value == (
        f"{strong:.2f} to {weak:.2f} [{low:.2f}, {high:.2f}] (coverage on defects)"
    )
    assert figure.n == 8 and figure.reads == "stated"
    one = _score_sensitivity_figure("m", found[:1])
    assert one is not None and one.what.startswith("smallest mean score drop the score gate sees")
    assert _score_sensitivity_figure("m", found[2:]) is None  # nothing to state
