"""A verdict's regression family: this run against the accepted baseline (both of its
draws, then Holm), the retest against the main run, and what each defect category's
detection gate can see."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TypedDict

from judges.core.results import JudgementRow
from judges.core.spec import version_key
from judges.sets.folder import GATES_FILE, PINS_FILE
from judges.sets.planted import Gates
from judges.stats.estimates.power import POWER, WORTH_DETECTING
from judges.stats.planning.categories import CategoryPower, category_power, discordance_of
from judges.stats.regression.family import tarone_level, version_regressions
from judges.stats.regression.gates import Regression, baseline_regressions, paired_rows
from judges.stats.regression.reference import retest_as_draw
from judges.stats.regression.sensitivity import (
    ScoreSensitivity,
    Sensitivity,
    gate_sensitivity,
    score_sensitivity,
)
from judges.stats.regression.stability import Draws, retest_agreement_regression
from judges.stats.reliability.calibration import sme_dimension
from judges.stats.reliability.noise import noise_floor
from judges.verdicts.inputs import Sources

__all__ = [
    "agreement_gate",
    "baseline_sensitivity",
    "earlier_baseline",
    "family_level",
    "regressions",
    "score_sensitivities",
    "sensitivity",
]


class RegressionSections(TypedDict, total=False):
    """The report model's fields this module fills, by their names there."""

    regressions: tuple[Regression, ...]
    retest_regressions: tuple[Regression, ...]
    category_power: tuple[CategoryPower, ...]
    sensitivity: tuple[Sensitivity, ...]
    score_sensitivity: tuple[ScoreSensitivity, ...]


def regressions(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    baselines: Mapping[str, Sequence[JudgementRow]],
    dimensions: Sequence[str],
    flag: str | None,
    notes: list[str],
) -> RegressionSections:
    """The regression gates against the accepted baseline, the retest run against main, and
    what each defect category's detection gate can see (a note for each that is blind to a
    15-point drop)."""
    found = _gates(model, version, rows, sources, baselines, (dimensions, flag), notes)
    main = [row for row in rows if row.run == "main"]
    discordance = discordance_of(
        found.get("retest_regressions", ()), "retest against main"
    ) or discordance_of(found.get("regressions", ()), "this run against the baseline")
    alpha = table.alpha if (table := _table(model, version, sources)) else 0.05
    if table is not None and table.accept_regression and table.baseline == version:
        notes.append(
            "accepted as the baseline although significantly worse than the baseline before "
            f"it ({GATES_FILE} accept_regression): {table.accept_regression}"
        )
    power = tuple(category_power(main, discordance, alpha))
    judge = sources.spec.name if sources.spec is not None else "JUDGE"
    notes += [w for p in power if (w := category_power_warning(p, judge)) is not None]
    found["category_power"] = power
    return found


def earlier_baseline(sources: Sources, model: str, version: str) -> str | None:
    """For a version that is its own baseline: the accepted baseline before it on this model
    (the newest earlier pin of accepted.toml), which acceptance compared it with; None
    when there is none, or when the version is not its own baseline."""
    table = _table(model, version, sources)
    planted = sources.planted
    if planted is None or table is None or table.baseline != version:
        return None
    key = version_key(version)
    earlier = [v for (m, v) in planted.pins if m == model and version_key(v) < key]
    return max(earlier, key=version_key) if earlier else None


def _table(model: str, version: str, sources: Sources) -> Gates | None:
    return sources.planted.gates.get((model, version)) if sources.planted else None


def _gates(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    baselines: Mapping[str, Sequence[JudgementRow]],
    fields: tuple[Sequence[str], str | None],
    notes: list[str],
) -> RegressionSections:
    main = [row for row in rows if row.run == "main"]
    own_retest = [row for row in rows if row.run == "retest"]
    found: RegressionSections = {}
    if own_retest:
        label = f"prompt {version} main run (the retest re-records the same prompt)"
        found["retest_regressions"] = tuple(
            baseline_regressions(main, own_retest, label, prefix="retest.")
        )
    table = _table(model, version, sources)
    planted = sources.planted  # never None when there is a table; named for the type checker
    if planted is None or table is None or table.baseline is None:
        return found
    if table.baseline == version:
        found |= _acceptance_regressions(model, version, main, sources, baselines, notes)
        paired, scores = baseline_sensitivity(model, version, rows, sources, fields, table)
        found["sensitivity"], found["score_sensitivity"] = paired, scores
        return found
    baseline_rows = baselines.get(table.baseline, ())
    baseline = [r for r in baseline_rows if r.model == model and r.run == "main"]
    if not baseline:
        notes.append(
            f"regression gates not evaluated: no main-run results of the baseline prompt "
            f"{table.baseline} for {model}"
        )
    gates = _family(
        model, table.baseline, baseline_rows, (main, own_retest), version, sources, fields, table
    )
    found["regressions"] = tuple(gates)
    if baseline:
        retest = [r for r in baseline_rows if r.model == model and r.run == "retest"]
        found["sensitivity"] = sensitivity(baseline, retest, main, gates, table)
        found["score_sensitivity"] = score_sensitivities(gates, table)
    return found


def _family(
    model: str,
    baseline_version: str,
    baseline_rows: Sequence[JudgementRow],
    run: tuple[Sequence[JudgementRow], Sequence[JudgementRow]],
    version: str,
    sources: Sources,
    fields: tuple[Sequence[str], str | None],
    table: Gates,
) -> list[Regression]:
    """The regression family of `run` (its main and retest rows, under prompt `version`)
    against the accepted baseline's rows, Holm over every gate."""
    dimensions = fields[0]
    main, own_retest = run
    planted = sources.planted
    assert planted is not None  # a gates table comes from a planted set
    mine = [r for r in baseline_rows if r.model == model]
    baseline = [r for r in mine if r.run == "main"]
    label = f"prompt {baseline_version} main run"
    noise = [r for r in mine if r.run == "noise"]
    noise_sd: dict[str, float] = {}
    if noise:
        floor = noise_floor(noise, dimensions, n_items=len(planted.items))
        noise_sd = {
            d: n.pooled_sd for d, n in floor.dimensions.items() if not math.isnan(n.pooled_sd)
        }
    sme = None
    if sources.sme_labels and version in planted.run_versions("sme"):
        sme = (list(sources.sme_labels), sme_dimension(dimensions))
    retest = [r for r in mine if r.run == "retest"]
    origin = planted.gates.get((model, baseline_version))
    agreement = agreement_gate(
        Draws(baseline, retest), Draws(main, own_retest), label, fields, table.alpha,
        not_fit_baseline=baseline_version if origin is not None and origin.accept_not_fit else None,
    )  # fmt: skip
    return version_regressions(
        baseline, main, label, dimensions, noise_sd, table.alpha, sme, retest=retest,
        also=() if agreement is None else (agreement,),
    )  # fmt: skip


def baseline_sensitivity(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    fields: tuple[Sequence[str], str | None],
    table: Gates,
    power: float = POWER,
) -> tuple[tuple[Sensitivity, ...], tuple[ScoreSensitivity, ...]]:
    """What the paired gates and the score gates of a version gated against `version` (its
    rows: every run of `model`) as the accepted baseline will see: its own retest stands in
    for an unchanged re-record (without one, its main run against itself), and that
    re-record's family is built once for both. Empty without a main run."""
    main = [row for row in rows if row.run == "main"]
    if not main or sources.planted is None:
        return (), ()
    own_retest = [row for row in rows if row.run == "retest"]
    again = retest_as_draw(main, own_retest) or main
    family = _family(model, version, rows, (again, ()), version, sources, fields, table)
    paired = sensitivity(main, own_retest, again, family, table, power)
    return paired, score_sensitivities(family, table, power)


def score_sensitivities(
    family: Sequence[Regression], table: Gates, power: float = POWER
) -> tuple[ScoreSensitivity, ...]:
    """The smallest mean drop each score gate of `family` (a field on defects or on controls)
    sees with `power`, at the level it fails at as the family's smallest p-value."""
    found = []
    for gate in family:
        if gate.power is None or gate.power.unit != "score points" or not gate.decides:
            continue
        level = family_level(family, table.alpha, gate.name.removeprefix("regression."))
        found.append(score_sensitivity(gate.name, gate.power.sd, gate.power.n, level, power))
    return tuple(found)


PAIRED_GATES = {"detection": False, "control_false_positive": True}  # gate: on controls


def sensitivity(
    baseline: Sequence[JudgementRow],
    retest: Sequence[JudgementRow],
    main: Sequence[JudgementRow],
    family: Sequence[Regression],
    table: Gates,
    power: float = POWER,
) -> tuple[Sensitivity, ...]:
    """What the detection and control false-positive gates of `family` (the run `main`
    against the accepted `baseline`, whose retest is `retest`) see with 80% power, against
    the drop gates.toml asks for; a gate whose items the runs do not share is left out."""
    again = retest_as_draw(baseline, retest)
    found = []
    for gate, control in PAIRED_GATES.items():
        pairs, _ = paired_rows(baseline, main, control=control)
        if not pairs:
            continue
        rate = sum(bool(a.met) for a, _ in pairs) / len(pairs)
        flips = None
        if again is not None:
            both, _ = paired_rows(baseline, again, control=control)
            if both:
                flips = (sum(bool(a.met) != bool(b.met) for a, b in both), len(both))
        level = family_level(family, table.alpha, gate)
        draws = 2 if again is not None else 1
        required = table.min_detectable_drop
        found.append(gate_sensitivity(gate, len(pairs), rate, flips, level, draws, required, power))
    return tuple(found)


def family_level(gates: Sequence[Regression], alpha: float, gate: str = "detection") -> float:
    """The level the gate `gate` (detection or control_false_positive) fails at when it is
    the family's smallest p-value: Holm's first step, alpha / K, K counted by Tarone's rule
    over the gates that decide (that gate always counts: a real drop gives it a small p)."""
    name = f"regression.{gate}"
    deciding = [
        replace(g, min_p=None) if g.name.endswith(name) else g
        for g in gates
        if g.passed is not None and g.p_value is not None and g.decides
    ]
    if not any(g.name.endswith(name) for g in deciding):
        deciding.append(Regression(name, "", None, True, "", {}, p_value=1.0, min_p=None))
    return tarone_level(deciding, alpha)[0]


def agreement_gate(
    baseline: Draws,
    run: Draws,
    label: str,
    fields: tuple[Sequence[str], str | None],
    alpha: float,
    not_fit_baseline: str | None = None,
) -> Regression | None:
    """The retest-agreement gate as the verdict counts it: shown, and deciding nothing,
    against a baseline accepted NOT FIT (`not_fit_baseline`, its version) or for a judge
    that gives its verdict alone."""
    dimensions, flag = fields
    agreement = retest_agreement_regression(baseline, run, label, dimensions, flag, alpha)
    if agreement is None or not agreement.decides:
        return agreement
    if not_fit_baseline is not None:
        # As its stability floors are not inherited: a judge at chance (one score for
        # nearly everything) agrees with itself more than a good judge does.
        why = (
            f"decides nothing: prompt {not_fit_baseline}, the baseline, was accepted NOT FIT, "
            f"and a judge at chance is steadier than a good one; {agreement.why}"
        )
    elif not dimensions and flag is None:
        # Decide few things: such a judge cannot get worse where detection does not look,
        # and the gate's one-draw baseline would add false alarms of its own.
        why = (
            "decides nothing: the judge gives its verdict alone, so each error it makes is a "
            "defect missed or a control flagged, which the detection and control gates test "
            f"on the same items; {agreement.why}"
        )
    else:
        return agreement
    return replace(agreement, passed=None, decides=False, why=why)


def category_power_warning(p: CategoryPower, judge: str = "JUDGE") -> str | None:
    """A sentence for the report when the category cannot see a 15-point drop; its `plan`
    command names the judge, so it runs as printed."""
    if p.sees_worth_detecting:
        return None
    if p.nothing_to_drop:
        return (
            f"category {p.category} ({p.n} items) detects 0/{p.n}: there is no "
            "detection to drop, so no power statement applies"
        )
    seen = "no drop at all" if math.isnan(p.drop) else f"only a drop of {p.drop:.2f} or more"
    return (
        f"category {p.category} ({p.n} items) cannot detect a "
        f"{WORTH_DETECTING * 100:.0f}-point drop in detection: it sees {seen} with "
        f"{POWER:.0%} power "
        f"({p.basis}); `python -m judges plan {judge}` says how many items it needs"
    )


def _acceptance_regressions(
    model: str,
    version: str,
    main: Sequence[JudgementRow],
    sources: Sources,
    baselines: Mapping[str, Sequence[JudgementRow]],
    notes: list[str],
) -> RegressionSections:
    """A baseline is what acceptance let through: one significantly worse than the baseline
    before it, with no accept_regression, was made the baseline by hand (`judges baseline
    --accept` refuses it) and fails here, against that earlier baseline. One that passes
    adds nothing: its verdict is as before."""
    table = _table(model, version, sources)
    earlier = earlier_baseline(sources, model, version)
    if table is None or earlier is None or table.accept_regression or sources.planted is None:
        return {}
    before = [r for r in baselines.get(earlier, ()) if r.model == model and r.run == "main"]
    if not before:
        return {}
    label = f"prompt {earlier} main run (the accepted baseline before it)"
    gates = baseline_regressions(before, main, label, table.alpha)
    if not any(gate.passed is False for gate in gates):
        return {}
    notes.append(
        f"prompt {version} is the baseline in {GATES_FILE} but acceptance refuses it: it is "
        f"significantly worse than prompt {earlier}, the accepted baseline before it, and "
        "no accept_regression says why. `python -m judges baseline --accept` never made it "
        f"the baseline; restore {GATES_FILE} and {PINS_FILE}, or accept it knowingly with "
        f"`python -m judges baseline {sources.planted.judge} --accept {version} "
        '--accept-regression "<why>"`'
    )
    return {"regressions": tuple(gates)}
