"""The corpus intervals cover what they claim, by simulation with a fixed seed.

Each simulated corpus draws fresh items, and every system's score on an item is the item's
effect (shared by all systems: a hard item is hard for everyone) plus the system's effect
plus noise. The paired difference interval must cover the true difference of the two
systems' effects, and a system's t interval its true mean (its effect plus the population
mean of item effects), each in 93-97% of 2,000 corpora: with 2,000 replicates a true 95%
lands outside that band with probability below 1e-4.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import scipy.stats

from judges.corpus.estimates import mean_interval, paired_differences

pytestmark = pytest.mark.proof  # 2,000 simulated corpora: tests/conftest.py

REPLICATES = 2000
SYSTEMS = ("a", "b", "c")
EFFECTS = np.array([0.0, 0.25, 0.6])
BAND = (0.93, 0.97)


def _latent(rng: np.random.Generator, items: int, noise: float) -> np.ndarray:
    item = rng.normal(0.0, 1.0, items)  # the shared item effect, population mean 0
    return EFFECTS[:, None] + item[None, :] + rng.normal(0.0, noise, (len(EFFECTS), items))


def _three_levels(latent: np.ndarray) -> np.ndarray:
    """A win / tie / loss against a reference: 1, 0.5 or 0."""
    return np.where(latent > 0.5, 1.0, np.where(latent < -0.5, 0.0, 0.5))


def _three_level_means(noise: float) -> np.ndarray:
    # latent ~ N(effect, 1 + noise^2) over fresh items and noise
    sd = np.sqrt(1 + noise**2)
    above = scipy.stats.norm.sf(0.5, EFFECTS, sd)
    between = scipy.stats.norm.cdf(0.5, EFFECTS, sd) - scipy.stats.norm.cdf(-0.5, EFFECTS, sd)
    return np.asarray(above + 0.5 * between)


def _coverage(
    score: Callable[[np.ndarray], np.ndarray], items: int, noise: float, true_means: np.ndarray
) -> tuple[float, float]:
    rng = np.random.default_rng(20261204)
    paired = single = 0
    for _ in range(REPLICATES):
        scores = score(_latent(rng, items, noise))
        for pair in paired_differences(SYSTEMS, scores):
            better, worse = SYSTEMS.index(pair.better), SYSTEMS.index(pair.worse)
            truth = true_means[better] - true_means[worse]
            paired += pair.difference.low <= truth <= pair.difference.high
        for index, row in enumerate(scores):
            interval = mean_interval(row)
            single += interval.low <= true_means[index] <= interval.high
    intervals = REPLICATES * len(SYSTEMS)  # three pairs, three systems
    return paired / intervals, single / intervals


def test_normal_scores_paired_and_per_system_intervals_cover_95() -> None:
    paired, single = _coverage(lambda latent: latent, 30, 0.5, EFFECTS)
    assert BAND[0] <= paired <= BAND[1], f"paired difference coverage {paired:.3f}"
    assert BAND[0] <= single <= BAND[1], f"per-system coverage {single:.3f}"


def test_win_tie_loss_scores_paired_and_per_system_intervals_cover_95() -> None:
    noise = 0.7
    paired, single = _coverage(_three_levels, 120, noise, _three_level_means(noise))
    assert BAND[0] <= paired <= BAND[1], f"paired difference coverage {paired:.3f}"
    assert BAND[0] <= single <= BAND[1], f"per-system coverage {single:.3f}"


def test_the_paired_interval_is_the_narrow_one_when_items_are_shared() -> None:
    # Why the pairing: with the item effect (sd 1) dominating the noise (sd 0.5), the
    # difference of two per-system intervals would be far wider than the paired one.
    rng = np.random.default_rng(1)
    scores = _latent(rng, 30, 0.5)
    pair = next(p for p in paired_differences(SYSTEMS, scores) if {p.better, p.worse} == {"a", "c"})
    unpaired = np.hypot(
        mean_interval(scores[0]).standard_error, mean_interval(scores[2]).standard_error
    )
    assert pair.difference.standard_error < unpaired / 1.5
