"""Agreement between two judges on a corpus, when an item's judgements are not independent.

The systems of a corpus share its items, and an item that is hard for one judge is hard
for every system's output of it: disagreements stick to items. An interval over the
judgements (Wilson's) then covers far less than it says; `change.agreement` resamples
items instead. Both claims are measured here by simulation, with a fixed seed.
"""

from __future__ import annotations

import numpy as np

from judges.corpus.change import agreement
from judges.stats.estimates.intervals import wilson
from judges.stats.reliability.agreement import quadratic_kappa

SYSTEMS, ITEMS, REPLICATES = 8, 150, 400


def _corpus(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """Two judges' level verdicts (0..3) on SYSTEMS x ITEMS, disagreeing with an item's own
    probability (Beta(2, 3): mean 0.4); the true agreement rate is 0.6."""
    truth = rng.integers(0, 4, (SYSTEMS, ITEMS)).astype(float)
    disagree = rng.beta(2, 3, ITEMS)
    flips = rng.random((SYSTEMS, ITEMS)) < disagree[None, :]
    step = rng.choice([-1.0, 1.0], (SYSTEMS, ITEMS))
    other = np.where(truth == 0, 1.0, np.where(truth == 3, 2.0, truth + step))  # one level off
    return truth, np.where(flips, other, truth), 0.6


def test_agreement_intervals_resampling_items_cover_and_judgement_wilson_does_not() -> None:
    rng = np.random.default_rng(20261204)
    covered = wilson_covered = 0
    for replicate in range(REPLICATES):
        before, after, true_rate = _corpus(rng)
        exact, adjacent, _ = agreement(before, after, True, seed=replicate)
        covered += exact.low <= true_rate <= exact.high
        naive = wilson(exact.successes, exact.n)
        wilson_covered += naive.low <= true_rate <= naive.high
        assert adjacent is not None and adjacent.rate >= exact.rate
    coverage = covered / REPLICATES
    # 400 replicates: a 95% interval's coverage lands in [0.925, 0.97] about 95% of the time.
    assert 0.925 <= coverage <= 0.975, coverage
    # The cause fixed: the same data, an interval over judgements, covers far less.
    assert wilson_covered / REPLICATES < 0.85, wilson_covered / REPLICATES


def test_the_point_figures_equal_the_plain_counts_and_kappa() -> None:
    rng = np.random.default_rng(7)
    before, after, _ = _corpus(rng)
    before[0, :5] = np.nan  # not judged by one judge: left out of both
    exact, adjacent, kappa = agreement(before, after, True, seed=0)
    both = ~np.isnan(before) & ~np.isnan(after)
    assert exact.n == adjacent.n == int(both.sum())  # type: ignore[union-attr]
    assert exact.successes == int(np.sum(before[both] == after[both]))
    assert adjacent is not None
    assert adjacent.successes == int(np.sum(np.abs(before[both] - after[both]) <= 1))
    assert abs(kappa.value - quadratic_kappa(before[both], after[both]).value) < 1e-12
    assert kappa.low < kappa.value < kappa.high


def test_no_judgement_in_common_gives_undefined_figures_not_zero() -> None:
    before = np.array([[1.0, np.nan]])
    after = np.array([[np.nan, 2.0]])
    exact, adjacent, kappa = agreement(before, after, False, seed=0)
    assert exact.n == 0 and np.isnan(exact.rate) and adjacent is None
    assert kappa.n == 0 and np.isnan(kappa.value)
