"""What a regression gate can see: the smallest drop it detects with a given power at its n.

Two designs, both one-sided at alpha like the gates:

- detection (paired 0/1, mid-p McNemar): unchanged, a share `discordance` of the items flips
  between two runs, half each way. A drop of `drop` adds that share of caught -> missed
  flips. The power is exact: a binomial number of discordant pairs, each bad with the
  resulting probability, against the mid-p test's critical count.
- mean scores and agreement coefficients: the normal design formula on the standard
  deviation of the paired differences (or the change's standard error).

A set with no paired run yet has no observed discordance; 2 r (1 - r) of its detection rate
r is then the largest discordance two independent runs can show (items all alike), so the
drop stated from it is conservative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.optimize
import scipy.stats

__all__ = [
    "POWER",
    "WORTH_DETECTING",
    "Power",
    "assumed_discordance",
    "items_for_mcnemar",
    "items_for_mean",
    "mcnemar_drop",
    "mcnemar_power",
    "mean_drop",
    "paired_t_drop",
]

POWER = 0.8
WORTH_DETECTING = 0.15  # a category that cannot see a 15-point detection drop is flagged
_GRID = 0.0025  # resolution of the detectable detection drop


@dataclass(frozen=True)
class Power:
    """The smallest drop a gate detects with `power` at its `n` (nan: none it can see)."""

    drop: float
    n: int
    power: float
    unit: str  # "detection rate", "score points", "kappa"
    basis: str  # what the figure was computed from, in words
    # A score gate's sd of paired differences the figure used (nan: another kind): the
    # same gate's figure at another level (Holm's, in its family) follows from it.
    sd: float = math.nan

    def describe(self) -> str:
        if math.isnan(self.drop):
            return f"at n = {self.n} no drop is detected with {self.power:.0%} power ({self.basis})"
        if self.drop < 0.005:
            # Zero spread (no pair changed, or no discordant pair) gives a "drop of 0.00":
            # that is no power figure at all, so none is stated.
            return (
                f"no power statement at n = {self.n}: the paired values did not vary ({self.basis})"
            )
        return (
            f"detects a drop of {self.drop:.2f} ({self.unit}) with {self.power:.0%} power at "
            f"n = {self.n} ({self.basis})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "drop": None if math.isnan(self.drop) else round(self.drop, 4),
            "n": self.n,
            "power": self.power,
            "unit": self.unit,
            "basis": self.basis,
        }


def _check(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 0.5 or not 0.0 < power < 1.0:
        raise ValueError(f"need 0 < alpha < 0.5 and 0 < power < 1, got {alpha}, {power}")


def assumed_discordance(rate: float) -> float:
    """Discordance of two independent runs of a judge whose items all catch at `rate`."""
    return 2.0 * rate * (1.0 - rate)


@lru_cache(maxsize=1024)
def _critical_counts(n: int, alpha: float) -> np.ndarray:
    """For D = 0..n discordant pairs, the fewest bad ones the mid-p test fails on (shared
    through the cache: read-only).

    The mid-p lies between P(X > k) and P(X >= k), so the critical count is within a step
    or two of the exact test's: a few candidates around the binomial quantile suffice.
    """
    d = np.arange(n + 1)
    start = np.nan_to_num(scipy.stats.binom.isf(alpha, d, 0.5), nan=0.0).astype(np.int64)
    candidates = np.clip(start[:, None] + np.arange(-3, 4)[None, :], 0, d[:, None])
    dd = np.broadcast_to(d[:, None], candidates.shape)
    binom = scipy.stats.binom
    midp = binom.sf(candidates, dd, 0.5) + binom.pmf(candidates, dd, 0.5) / 2
    failing = (midp < alpha) & (dd > 0)
    first = np.argmax(failing, axis=1)
    chosen = candidates[np.arange(n + 1), first]
    counts = np.where(failing.any(axis=1), chosen, np.iinfo(np.int64).max)
    counts.setflags(write=False)
    return counts


def mcnemar_power(
    n: int, discordance: float, drops: np.ndarray | float, alpha: float = 0.05
) -> np.ndarray:
    """Power of the one-sided mid-p McNemar gate for each drop in `drops`."""
    drops_arr = np.atleast_1d(np.asarray(drops, dtype=float))
    if n <= 0:
        return np.zeros_like(drops_arr)
    psi = np.clip(discordance + drops_arr, 0.0, 1.0)  # share of pairs that differ
    with np.errstate(divide="ignore", invalid="ignore"):
        bad = np.where(psi > 0, np.clip((discordance / 2 + drops_arr) / psi, 0.0, 1.0), 0.0)
    critical = _critical_counts(n, alpha)
    d = np.arange(n + 1)
    p_d = scipy.stats.binom.pmf(d[None, :], n, psi[:, None])  # (drops, D)
    reachable = critical <= d
    k = np.where(reachable, critical, 0)
    p_fail = np.where(reachable[None, :], scipy.stats.binom.sf(k - 1, d, bad[:, None]), 0.0)
    return np.asarray((p_d * p_fail).sum(axis=1))


@lru_cache(maxsize=4096)
def mcnemar_drop(n: int, discordance: float, alpha: float = 0.05, power: float = POWER) -> float:
    """Smallest detection drop (0-1) the gate catches with `power` at n; nan if none (every
    report and gate asks it of the same few (n, discordance): computed once each)."""
    _check(alpha, power)
    if not 0.0 <= discordance <= 1.0:
        raise ValueError(f"discordance must be in [0, 1], got {discordance}")
    top = 1.0 - discordance / 2.0  # the most that can still go caught -> missed
    grid = np.arange(_GRID, top + _GRID / 2, _GRID)
    if n <= 0 or grid.size == 0:
        return math.nan
    reached = np.flatnonzero(mcnemar_power(n, discordance, grid, alpha) >= power)
    return float(grid[reached[0]]) if reached.size else math.nan


def items_for_mcnemar(
    discordance: float, drop: float, alpha: float = 0.05, power: float = POWER, limit: int = 5000
) -> int | None:
    """Fewest paired items whose gate detects `drop` with `power`; None beyond `limit`."""
    _check(alpha, power)
    if not 0.0 < drop <= 1.0:
        raise ValueError(f"drop must be in (0, 1], got {drop}")

    def enough(n: int) -> bool:
        return bool(mcnemar_power(n, discordance, drop, alpha)[0] >= power)

    high = 8
    while not enough(high):
        if high >= limit:
            return None
        high = min(2 * high, limit)
    low = high // 2
    while low + 1 < high:  # power grows with n up to the test's discreteness
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def _z_sum(alpha: float, power: float) -> float:
    return float(scipy.stats.norm.ppf(1.0 - alpha) + scipy.stats.norm.ppf(power))


def mean_drop(sd: float, n: int, alpha: float = 0.05, power: float = POWER) -> float:
    """Smallest mean drop a one-sided paired test detects with `power`: (z_a + z_b) sd / sqrt n.

    `sd` is the standard deviation of the paired differences.
    """
    _check(alpha, power)
    if sd < 0:
        raise ValueError(f"sd must be >= 0, got {sd}")
    if n < 2:
        return math.nan
    return _z_sum(alpha, power) * sd / math.sqrt(n)


def paired_t_drop(sd: float, n: int, alpha: float = 0.05, power: float = POWER) -> float:
    """Smallest mean drop a one-sided paired t test at `alpha` detects with `power` on
    normal differences of sd `sd`: from the noncentral t, not the normal approximation,
    which at a Holm level and a few dozen items promises a drop seen 72% of the time as
    one seen 80% (a paired sign-flip test, as the score gates use, tracks the t test)."""
    _check(alpha, power)
    if sd < 0:
        raise ValueError(f"sd must be >= 0, got {sd}")
    if n < 2:
        return math.nan
    if sd == 0:
        return 0.0
    df = n - 1
    critical = float(scipy.stats.t.ppf(1.0 - alpha, df))

    def short(shift: float) -> float:
        return float(scipy.stats.nct.sf(critical, df, shift)) - power

    # The noncentrality seen with `power` lies between the normal figure and a wide bound.
    shift = scipy.optimize.brentq(short, 0.0, 4 * _z_sum(alpha, power) + 10.0)
    return float(shift) * sd / math.sqrt(n)


def items_for_mean(sd: float, drop: float, alpha: float = 0.05, power: float = POWER) -> int:
    """Paired items for a one-sided test to detect a mean drop `drop` with `power`."""
    _check(alpha, power)
    if drop <= 0:
        raise ValueError(f"drop must be > 0, got {drop}")
    return max(2, math.ceil((_z_sum(alpha, power) * sd / drop) ** 2))
