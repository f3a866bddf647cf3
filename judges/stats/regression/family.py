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

__all__ = ["holm", "version_regressions"]


def holm(gates: Sequence[Regression], alpha: float = ALPHA) -> list[Regression]:
    """Holm's step-down correction over a version's regression gates, in their order.

    A version is compared with its baseline on a dozen gates at once; each at alpha alone
    would fail an unchanged judge on one of them far more often than alpha. Sorted by
    p-value, the k-th smallest fails only below alpha / (m - k + 1), and only while every
    smaller one failed: the family fails an unchanged judge at most alpha of the time.
    Gates not evaluated (no p-value) stay not evaluated and are not counted in m. A gate
    with a `level_cap` fails only below the lower of its cap and its Holm level, and where
    it does not fail the step-down ends: the family rejects a subset of what Holm rejects,
    so its error rate stays within alpha.
    """
    by_p_value = sorted(
        (gate.p_value, i)
        for i, gate in enumerate(gates)
        if gate.passed is not None and gate.p_value is not None
    )
    tested = [i for _, i in by_p_value]
    m = len(tested)
    failing: set[int] = set()
    for rank, (p_value, i) in enumerate(by_p_value):
        if p_value >= alpha / (m - rank):
            break
        cap = gates[i].level_cap
        if cap is not None and p_value >= cap:
            break  # a gate that does not fail ends the step-down, as in Holm's
        failing.add(i)
    adjusted = []
    for i, gate in enumerate(gates):
        if i not in tested:
            adjusted.append(gate)
            continue
        rank = tested.index(i)
        level = alpha / (m - rank)
        if gate.level_cap is not None and gate.level_cap < level:
            level = gate.level_cap
        why = f"{gate.why}; Holm over the version's {m} regression gates: fails below {level:.4g}"
        adjusted.append(replace(gate, passed=i not in failing, why=why))
    return adjusted


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
