"""A version's regression gates as one family: each against both baseline draws, then Holm.

A version is compared with its baseline on a dozen gates at once (detection, control false
positives, scores per dimension and side, SME agreement); each at alpha alone would fail an
unchanged judge on one of them far more often than alpha, so Holm's step-down correction
runs over the family. Where the accepted version has a retest run, each gate is first
decided against both of the baseline's draws (judges.stats.regression.reference).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from judges.core.results import JudgementRow
from judges.sets.sme import SmeLabel
from judges.stats.regression.gates import (
    ALPHA,
    Regression,
    baseline_regressions,
    score_regressions,
    sme_regression,
)
from judges.stats.regression.reference import against_both_draws, retest_as_draw

__all__ = ["holm", "tarone_level", "version_regressions"]


def holm(gates: Sequence[Regression], alpha: float = ALPHA) -> list[Regression]:
    """Holm's step-down correction over a version's regression gates, with Tarone's rule.

    A version is compared with its baseline on a dozen gates at once; each at alpha alone
    would fail an unchanged judge on one of them far more often than alpha. Sorted by
    p-value, the smallest fails only below alpha / K, and only while every smaller one
    failed: the family fails an unchanged judge at most alpha of the time. Holm takes K as
    the number of gates left; but most gates are discrete tests on the few items that
    changed, and a gate on 3 changed items cannot give a p below 1/16 however they changed.
    Such a gate cannot fail at alpha / K, so it spends none of the budget: K is the smallest
    number such that at most K of the gates left could give a p below alpha / K (Tarone,
    Biometrics 1990; as a closed test, Hommel and Krummenauer 1998). A gate whose smallest
    possible p is not known counts always. Gates not evaluated (no p-value) stay not
    evaluated and are not counted. A gate with a `level_cap` fails only below the lower of
    its cap and its level, and where it does not fail the step-down ends: the family rejects
    a subset of what the procedure rejects, so its error rate stays within alpha.
    """
    by_p_value = sorted(
        (gate.p_value, i)
        for i, gate in enumerate(gates)
        if gate.passed is not None and gate.p_value is not None
    )
    m = len(by_p_value)
    # The level at each step, as if every smaller p had failed: from the gates left.
    levels = [tarone_level([gates[i] for _, i in by_p_value[rank:]], alpha) for rank in range(m)]
    failing: set[int] = set()
    for rank, (p_value, i) in enumerate(by_p_value):
        level, _ = levels[rank]
        if p_value >= level:
            break
        cap = gates[i].level_cap
        if cap is not None and p_value >= cap:
            break  # a gate that does not fail ends the step-down, as in Holm's
        failing.add(i)
    ranks = {i: rank for rank, (_, i) in enumerate(by_p_value)}
    adjusted = []
    for i, gate in enumerate(gates):
        if i not in ranks:
            adjusted.append(gate)
            continue
        level, counted = levels[ranks[i]]
        left = m - ranks[i]
        if gate.level_cap is not None and gate.level_cap < level:
            level = gate.level_cap
        why = (
            f"{gate.why}; Holm over the version's {m} regression gates, {counted} of the "
            f"{left} left able to give a p that low (Tarone): fails below {level:.4g}"
        )
        adjusted.append(replace(gate, passed=i not in failing, why=why))
    return adjusted


def tarone_level(left: Sequence[Regression], alpha: float) -> tuple[float, int]:
    """alpha / K for the smallest K such that at most K of `left` could give a p below it,
    and that count."""
    for k in range(1, len(left) + 1):
        counted = sum(1 for g in left if g.min_p is None or g.min_p < alpha / k)
        if counted <= k:
            return alpha / k, counted
    return alpha / len(left), len(left)


def version_regressions(
    baseline: Sequence[JudgementRow],
    rows: Sequence[JudgementRow],
    label: str,
    dimensions: Sequence[str],
    noise_sd: Mapping[str, float],
    alpha: float = ALPHA,
    sme: tuple[Sequence[SmeLabel], str] | None = None,
    retest: Sequence[JudgementRow] = (),
    also: Sequence[Regression] = (),
) -> list[Regression]:
    """Every regression gate of a version against its baseline (detection, control false
    positives, scores, and SME agreement when `sme` gives the labels and dimension), as one
    family under Holm's correction: the suite's tests and the report decide alike.

    `retest`: the accepted version's retest run, when it has one: each gate then fails only
    where the run is worse than both baseline draws, so a lucky baseline draw does not fail
    honest re-records (judges.stats.regression.reference). `also`: gates decided with the
    family but built elsewhere (the retest-agreement gate, judges.stats.regression.stability).
    """
    gates = _family(baseline, rows, label, dimensions, noise_sd, alpha, sme)
    again = retest_as_draw(baseline, retest)
    if again is not None:
        on_retest = {
            g.name: g for g in _family(again, rows, label, dimensions, noise_sd, alpha, sme)
        }
        gates = [
            against_both_draws(gate, on_retest[gate.name], alpha)
            if gate.name in on_retest
            else gate
            for gate in gates
        ]
    return holm([*gates, *also], alpha)


def _family(
    baseline: Sequence[JudgementRow],
    rows: Sequence[JudgementRow],
    label: str,
    dimensions: Sequence[str],
    noise_sd: Mapping[str, float],
    alpha: float,
    sme: tuple[Sequence[SmeLabel], str] | None,
) -> list[Regression]:
    gates = baseline_regressions(baseline, rows, label, alpha)
    gates += score_regressions(baseline, rows, label, dimensions, noise_sd, alpha)
    if sme is not None:
        gates.append(sme_regression(baseline, rows, sme[0], sme[1], label, alpha))
    return gates
