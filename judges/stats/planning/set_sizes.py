"""Set sizes that can detect what matters: `python -m judges plan JUDGE --drop 0.1`.

From one prompt version's recorded runs, how many items each part of the set needs for its
regression gate to detect a named drop with a named power (one-sided at alpha, as the
gates are):

- planted defects per category: the detection gate's McNemar power, with the discordance
  the retest showed against main (else 2 r (1 - r) of the category's detection rate);
- score gates per dimension and side: the sd of the paired differences main -> retest (else
  sqrt 2 times the noise floor's pooled sd); the drop is the named share of the
  dimension's scale (0-3: a drop of 0.1 is 0.3 points), or, for a dimension whose reply
  states no scale, of the range of scores the judge gave;
- the noise floor: items x (repeats - 1) degrees of freedom for its pooled sd to be known
  within +25% (95% chi-square bound), since that sd enters the power statements;
- SME labels: labelled items for the kappa gate to detect a kappa drop of the named size,
  from the bootstrap standard error of the judge's kappa (a change of two independent
  kappas has sqrt 2 times it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats

from judges.core.results import JudgementRow
from judges.stats.estimates.intervals import Estimate
from judges.stats.estimates.power import assumed_discordance, items_for_mcnemar, items_for_mean
from judges.stats.regression.comparison import numeric
from judges.stats.regression.gates import paired_rows

__all__ = [
    "NOISE_PRECISION",
    "Need",
    "Plan",
    "noise_df_needed",
    "plan_set",
]

NOISE_PRECISION = 0.25  # the noise floor's sd known within +25% (upper 95% chi-square bound)


@dataclass(frozen=True)
class Need:
    """One part of the set: what it has, what it needs, and what the figure rests on."""

    part: str  # e.g. "category cousin", "score core_total (defects)", "noise floor"
    now: int
    needed: int | None  # None: more than the search limit
    unit: str  # "items", "labelled items", "repeats"
    basis: str
    no_spread: bool = False  # the values it rests on do not vary: no count can be stated

    def line(self) -> str:
        if self.no_spread:
            return (
                f"- {self.part}: {self.now} {self.unit}; no count stated: the paired values "
                f"did not vary, so no power statement rests on them ({self.basis})"
            )
        if self.needed is None:
            return f"- {self.part}: {self.now} {self.unit}; over 5000 needed ({self.basis})"
        more = f", add {self.needed - self.now}" if self.needed > self.now else " (enough)"
        return f"- {self.part}: {self.now} {self.unit}, needs {self.needed}{more} ({self.basis})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "part": self.part,
            "now": self.now,
            "needed": self.needed,
            "unit": self.unit,
            "basis": self.basis,
        } | ({"no_spread": True} if self.no_spread else {})


@dataclass(frozen=True)
class Plan:
    judge: str
    version: str
    model: str
    drop: float
    power: float
    alpha: float
    needs: tuple[Need, ...]

    def lines(self) -> list[str]:
        return [
            f"{self.judge} prompt {self.version} on {self.model}: items needed to detect a drop "
            f"of {self.drop:g} (in a detection rate, in a kappa, or as a share of a score's "
            f"range) with {self.power:.0%} power (one-sided alpha {self.alpha:g})",
            *(need.line() for need in self.needs),
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "version": self.version,
            "model": self.model,
            "drop": self.drop,
            "power": self.power,
            "alpha": self.alpha,
            "needs": [need.as_dict() for need in self.needs],
        }


def noise_df_needed(precision: float = NOISE_PRECISION) -> int:
    """Fewest degrees of freedom whose 95% upper bound on an sd is within `precision`."""
    df = 1
    while math.sqrt(df / scipy.stats.chi2.ppf(0.025, df)) > 1.0 + precision:
        df += 1
    return df


def _category_needs(
    main: Sequence[JudgementRow],
    retest: Sequence[JudgementRow],
    drop: float,
    alpha: float,
    power: float,
) -> list[Need]:
    pairs, _ = paired_rows(main, retest, control=False) if retest else ([], {})
    flipped = sum(bool(a.met) != bool(b.met) for a, b in pairs)
    by_category: dict[str, list[JudgementRow]] = {}
    for row in main:
        if not row.control and row.status == "ok":
            by_category.setdefault(row.category, []).append(row)
    needs = []
    for category, rows in sorted(by_category.items()):
        if pairs:
            share, basis = flipped / len(pairs), f"{flipped}/{len(pairs)} flipped on retest"
        else:
            rate = sum(bool(r.met) for r in rows) / len(rows)
            share = assumed_discordance(rate)
            basis = f"no retest: discordance assumed {share:.2f} at detection {rate:.2f}"
        needed = items_for_mcnemar(share, drop, alpha, power)
        needs.append(Need(f"category {category}", len(rows), needed, "items", basis))
    return needs


def _score_needs(
    main: Sequence[JudgementRow],
    retest: Sequence[JudgementRow],
    noise_sd: dict[str, float],
    dimensions: Sequence[str],
    drop: float,
    alpha: float,
    power: float,
    scales: Mapping[str, tuple[float, float]],
) -> list[Need]:
    needs = []
    for control, side in ((True, "controls"), (False, "defects")):
        pairs, _ = paired_rows(main, retest, control=control) if retest else ([], {})
        for dim in dimensions:
            values = [
                v
                for row in main
                if row.control == control and (v := numeric(row.verdict, dim)) is not None
            ]
            if len(values) < 2:
                continue
            span = max(values) - min(values)
            diffs = [
                y - x
                for a, b in pairs
                if (x := numeric(a.verdict, dim)) is not None
                and (y := numeric(b.verdict, dim)) is not None
            ]
            if len(diffs) >= 2:
                sd = float(np.std(diffs, ddof=1))
                basis = f"sd {sd:.2f} of {len(diffs)} paired differences on retest"
            elif dim in noise_sd:
                sd = math.sqrt(2) * noise_sd[dim]
                basis = f"noise floor sd {noise_sd[dim]:.2f} per judgement"
            else:
                continue
            if dim in scales:
                low, high = scales[dim]
                span, range_text = high - low, f"of its {low:g}-{high:g} scale"
            else:
                range_text = f"of the range of scores given, {min(values):g}-{max(values):g}"
            if span == 0:
                continue  # every score alike: no drop of a share of the range to name
            points = drop * span
            basis += f"; drop {points:.2f} points = {drop:g} {range_text}"
            part = f"score {dim} ({side})"
            if sd == 0:  # no spread: no power statement, so no item count follows from it
                needs.append(Need(part, len(values), None, "items", basis, no_spread=True))
                continue
            needed = items_for_mean(sd, points, alpha, power)
            needs.append(Need(part, len(values), needed, "items", basis))
    return needs


def _sme_need(kappa: Estimate | None, drop: float, alpha: float, power: float) -> list[Need]:
    if kappa is None or kappa.n < 2 or math.isnan(kappa.low) or math.isnan(kappa.high):
        return []
    se = (kappa.high - kappa.low) / (2 * float(scipy.stats.norm.ppf(0.975)))
    z = float(scipy.stats.norm.ppf(1 - alpha) + scipy.stats.norm.ppf(power))
    # The standard error shrinks as 1 / sqrt(n): scale the labelled set to the target.
    needed = max(2, math.ceil(kappa.n * (z * math.sqrt(2) * se / drop) ** 2))
    basis = f"kappa {kappa.value:.2f}, bootstrap standard error {se:.3f} at n = {kappa.n}"
    return [Need("SME labels (kappa gate)", kappa.n, needed, "labelled items", basis)]


def plan_set(
    judge: str,
    version: str,
    model: str,
    rows: Sequence[JudgementRow],
    dimensions: Sequence[str],
    *,
    noise_sd: dict[str, float],
    noise_items: int,
    noise_repeats: int,
    kappa: Estimate | None,
    drop: float,
    power: float = 0.8,
    alpha: float = 0.05,
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> Plan:
    """Every part's need for one (judge, version, model) from its recorded rows. `scales`:
    each dimension's (lowest, highest) score, the range a drop is a share of."""
    if not 0.0 < drop < 1.0:
        raise ValueError(f"--drop must be in (0, 1), got {drop}")
    main = [r for r in rows if r.run == "main" and r.model == model]
    retest = [r for r in rows if r.run == "retest" and r.model == model]
    needs = _category_needs(main, retest, drop, alpha, power)
    needs += _score_needs(main, retest, noise_sd, dimensions, drop, alpha, power, scales or {})
    if noise_items:
        df = noise_df_needed()
        repeats = 1 + math.ceil(df / noise_items)
        basis = (
            f"{noise_items} items x {noise_repeats} repeats = "
            f"{noise_items * (noise_repeats - 1)} degrees of freedom; {df} know its sd within "
            f"+{NOISE_PRECISION:.0%}, or {math.ceil(df / (noise_repeats - 1))} items at "
            f"{noise_repeats} repeats"
        )
        needs.append(Need("noise floor", noise_repeats, repeats, "repeats", basis))
    needs += _sme_need(kappa, drop, alpha, power)
    return Plan(judge, version, model, drop, power, alpha, tuple(needs))
