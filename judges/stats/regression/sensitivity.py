"""What a version's detection regression gate can see, as the family decides it.

The gate that reads "no worse than the baseline" on planted defects is a one-sided mid-p
McNemar test, taken against both of the baseline's draws when the baseline has a retest
(both must fail: judges.stats.regression.reference) and decided under Holm's correction
over the version's whole family (judges.stats.regression.family). Its power is therefore
lower than one McNemar test at alpha: the level is Holm's first step, alpha / K, with K the
gates Tarone's rule counts, and with two draws both tests must fail.

The figure is computed by simulating that decision, not by a formula for one test, under a
stated model of the judge (with common random numbers, so power rises with the drop and the
smallest drop is found by bisection). Items are of three kinds: caught on every run, missed
on every run, and unsteady (caught with a probability q on each run, independently). Their
shares reproduce the baseline's detection rate r and the discordance s between its two
draws (the share of defects that flipped between main and retest): unsteady items at
q = 1/2 where that fits, else the fewest unsteady items that give s. A drop d then turns
each catch of the new run into a miss with probability d / r, so it catches r - d.
tests/test_gate_sensitivity.py holds the figure against the real gates run on rows drawn
from the same model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.stats

from judges.stats.estimates.intervals import Rate, wilson
from judges.stats.estimates.power import POWER, WORTH_DETECTING, paired_t_drop

__all__ = [
    "MOST_ITEMS",
    "REPLICATES",
    "ScoreSensitivity",
    "Sensitivity",
    "defects_needed",
    "detectable_drop",
    "gate_power",
    "gate_sensitivity",
    "score_sensitivity",
]

REPLICATES = 4000  # Monte Carlo error of a power near 0.8: about 0.006
_GRID = 0.01  # resolution of the detectable drop: one point
_SEED = 20261207
MOST_ITEMS = 5000


@dataclass(frozen=True)
class Sensitivity:
    """The smallest drop a paired 0/1 regression gate fails on with `power`: detection
    (caught -> missed on planted defects) or control false positives (held -> flagged on
    controls). judges.reports.sections.sensitivity words it."""

    gate: str  # "detection" or "control_false_positive"
    drop: float  # nan: no drop up to the whole rate is seen
    n: int  # items of the gate's kind paired with the baseline
    rate: float  # the baseline's rate on them: defects caught, or controls held
    flips: tuple[int, int] | None  # (flipped, paired) main vs retest; None: no retest
    discordance: float  # the share flipped (or 2 r (1 - r) assumed without a retest)
    level: float  # the level the gate fails at: Holm's first step in its family
    draws: int  # baseline draws the gate must beat: 2 with a retest, else 1
    required: float  # gates.toml min_detectable_drop
    needed: int | None  # paired defects that would see `required` (None: over 5,000)
    power: float = POWER
    most_items: int = MOST_ITEMS  # where the search for `needed` stops
    # The drop at the ends of the discordance's 95% interval (more flips: a larger drop).
    interval: tuple[float, float] = (math.nan, math.nan)

    @property
    def nothing_to_drop(self) -> bool:
        """The baseline's rate is below the declared drop (no control held, no defect
        caught): such a drop cannot happen, so no power statement applies."""
        return self.rate < self.required - 1e-9

    @property
    def blind(self) -> bool:
        """The gate cannot see the drop the team declared it must see."""
        if self.nothing_to_drop:
            return False
        return math.isnan(self.drop) or self.drop > self.required + 1e-9

    def as_dict(self) -> dict[str, Any]:
        def share(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 4)

        return {
            "gate": self.gate,
            "drop": share(self.drop),
            "interval": [share(x) for x in self.interval],
            "n": self.n,
            "rate": round(self.rate, 4),
            "flips": None if self.flips is None else list(self.flips),
            "discordance": round(self.discordance, 4),
            "level": round(self.level, 6),
            "draws": self.draws,
            "required": self.required,
            "needed": self.needed,
            "blind": self.blind,
            "nothing_to_drop": self.nothing_to_drop,
            "power": self.power,
        }


def _shares(rate: float, discordance: float) -> tuple[float, float, float]:
    """(always caught, unsteady, q): the item kinds that give `rate` and `discordance`."""
    s = min(discordance, 2.0 * rate * (1.0 - rate))  # two runs cannot differ more
    if s <= min(rate, 1.0 - rate):
        return rate - s, 2.0 * s, 0.5
    if rate >= 0.5:  # nothing always missed: unsteady items catch more often than not
        q = s / (2.0 * (1.0 - rate))
        unsteady = (1.0 - rate) / (1.0 - q)
        return 1.0 - unsteady, unsteady, q
    q = 1.0 - s / (2.0 * rate)  # nothing always caught
    return 0.0, rate / q, q


@lru_cache(maxsize=64)
def _midp_table(n: int) -> np.ndarray:
    """mid-p of `worse` of `discordant` pairs, indexed [worse, discordant], for 0..n."""
    w = np.arange(n + 1)[:, None]
    d = np.arange(n + 1)[None, :]
    table = scipy.stats.binom.sf(w, d, 0.5) + scipy.stats.binom.pmf(w, d, 0.5) / 2.0
    table = np.where(d == 0, 1.0, np.where(w <= d, table, 1.0))
    table.setflags(write=False)
    return table


@dataclass(frozen=True)
class _Draws:
    """One set of uniforms for every replicate: the same for every drop tried."""

    baseline: np.ndarray  # (draws, reps, n) bools: caught on each baseline draw
    new: np.ndarray  # (reps, n) bools: caught by the unchanged judge on the new run
    keep: np.ndarray  # (reps, n) uniforms: a catch survives a drop d when above d / r


@lru_cache(maxsize=4)  # a bisection over drops reuses one; sizes up to 5,000 items weigh
def _draws(n: int, rate: float, discordance: float, draws: int, reps: int) -> _Draws:
    rng = np.random.default_rng([_SEED, n, draws, round(rate * 1e6), round(discordance * 1e6)])
    caught, unsteady, q = _shares(rate, discordance)
    kind = rng.random((reps, n))
    always, coin = kind < caught, (kind >= caught) & (kind < caught + unsteady)

    def run() -> np.ndarray:
        return always | (coin & (rng.random((reps, n)) < q))

    baseline = np.stack([run() for _ in range(draws)])
    return _Draws(baseline, run(), rng.random((reps, n)))


def gate_power(
    n: int,
    rate: float,
    discordance: float,
    drops: Sequence[float] | np.ndarray,
    level: float,
    draws: int = 1,
    reps: int = REPLICATES,
) -> np.ndarray:
    """Share of simulated new runs whose detection gate fails, for each drop in `drops`."""
    if n <= 0 or rate <= 0.0:
        return np.zeros(len(drops))
    sample, table = _draws(n, rate, discordance, draws, reps), _midp_table(n)
    found = []
    for drop in drops:
        new = sample.new & (sample.keep >= min(drop / rate, 1.0))
        fails = np.ones(reps, dtype=bool)
        for base in sample.baseline:
            worse = (base & ~new).sum(axis=1)
            better = (~base & new).sum(axis=1)
            # A baseline right on no paired defect decides nothing: never a failure.
            fails &= (table[worse, worse + better] < level) & base.any(axis=1)
        found.append(fails.mean())
    return np.asarray(found)


@lru_cache(maxsize=1024)
def detectable_drop(
    n: int, rate: float, discordance: float, level: float, draws: int, power: float = POWER
) -> float:
    """Smallest drop (0-1, on a grid of one point) failing the gate with `power`; nan if
    even losing every catch is not seen that often."""
    steps = math.floor(rate / _GRID + 1e-9)
    if n <= 0 or steps < 1:
        return math.nan

    def seen(step: int) -> bool:
        return bool(gate_power(n, rate, discordance, [step * _GRID], level, draws)[0] >= power)

    if not seen(steps):
        return math.nan
    low, high = 0, steps  # power at drop 0 is the false-alarm rate, below any power asked
    while low + 1 < high:
        mid = (low + high) // 2
        low, high = (low, mid) if seen(mid) else (mid, high)
    return high * _GRID


@lru_cache(maxsize=256)
def defects_needed(
    drop: float, rate: float, discordance: float, level: float, draws: int, power: float = POWER
) -> int | None:
    """Fewest paired planted defects whose gate sees `drop` with `power`; None beyond 5,000."""
    if drop > rate:
        return None  # a drop larger than what is caught cannot happen

    def enough(n: int) -> bool:
        return bool(gate_power(n, rate, discordance, [drop], level, draws, 1000)[0] >= power)

    high = 8
    while not enough(high):
        if high >= MOST_ITEMS:
            return None
        high = min(2 * high, MOST_ITEMS)
    low = high // 2
    while low + 1 < high:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def gate_sensitivity(
    gate: str,
    n: int,
    rate: float,
    flips: tuple[int, int] | None,
    level: float,
    draws: int,
    required: float = WORTH_DETECTING,
    power: float = POWER,
) -> Sensitivity:
    """The gate's smallest detectable drop, its 95% interval, and what it would take to see
    `required`.

    `flips`: (defects flipped, defects paired) between the baseline's main run and its
    retest; None without a retest, when 2 r (1 - r) stands in (the most two runs can differ:
    conservative, as `judges plan` assumes). The interval carries the uncertainty of the
    discordance (Wilson's interval on the flips; without a retest, on the rate)."""
    rate = round(rate, 4)
    if flips is None:
        low_rate, high_rate = _bounds(wilson(round(rate * n), n)) if n else (rate, rate)
        shares = [2.0 * r * (1.0 - r) for r in (rate, low_rate, high_rate)]
        share = shares[0]
        # 2 r (1 - r) peaks at r = 1/2, inside the rate's interval or not.
        low = min(shares[1:])
        high = 0.5 if low_rate <= 0.5 <= high_rate else max(shares[1:])
    else:
        flipped, paired = flips
        share = flipped / paired if paired else 0.0
        low, high = _bounds(wilson(flipped, paired)) if paired else (share, share)

    def drop_at(discordance: float) -> float:
        return detectable_drop(n, rate, round(discordance, 4), level, draws, power)

    drop = drop_at(share)
    needed = None if not math.isnan(drop) and drop <= required + 1e-9 else (
        defects_needed(required, rate, round(share, 4), level, draws, power)
    )  # fmt: skip
    return Sensitivity(
        gate, drop, n, rate, flips, round(share, 4), level, draws, required, needed, power,
        interval=(drop_at(low), drop_at(high)),
    )  # fmt: skip


def _bounds(found: Rate) -> tuple[float, float]:
    return found.low, found.high


@dataclass(frozen=True)
class ScoreSensitivity:
    """The smallest mean drop a score regression gate (a field's mean on defects or on
    controls, paired with the baseline) fails on with `power`, at the level it fails at in
    its family (Holm's first step): the paired t test's figure (noncentral t) at the sd of
    the paired differences or the noise floor's, as the gate's own power statement takes it."""

    gate: str  # "regression.score[coverage, defects]"
    drop: float  # score points on the field's scale; nan: too few pairs
    n: int
    sd: float
    level: float
    power: float = POWER

    @property
    def interval(self) -> tuple[float, float]:
        """The drop at the ends of the sd's 95% chi-square interval (n - 1 degrees of
        freedom; the figure is proportional to the sd)."""
        if math.isnan(self.drop) or self.n < 2:
            return (math.nan, math.nan)
        df = self.n - 1
        low, high = (float(scipy.stats.chi2.ppf(q, df)) for q in (0.975, 0.025))
        return (self.drop * math.sqrt(df / low), self.drop * math.sqrt(df / high))

    def as_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "drop": None if math.isnan(self.drop) else round(self.drop, 4),
            "interval": [None if math.isnan(x) else round(x, 4) for x in self.interval],
            "n": self.n,
            "sd": None if math.isnan(self.sd) else round(self.sd, 4),
            "level": self.level,
            "power": self.power,
        }


def score_sensitivity(
    gate: str, sd: float, n: int, level: float, power: float = POWER
) -> ScoreSensitivity:
    drop = paired_t_drop(sd, n, level, power) if not math.isnan(sd) else math.nan
    return ScoreSensitivity(gate, drop, n, sd, level, power)
