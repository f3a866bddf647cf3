"""One model's verdict from its rows: the only place fitness, floors, regressions, probes
and completeness are composed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judges.core.results import JudgementRow
from judges.stats.estimates.floors import detected
from judges.stats.fitness.pairwise import is_pairwise
from judges.verdicts.completeness import missing_items, missing_runs
from judges.verdicts.fitness import (
    accepted_not_fit,
    model_fitness,
    retest_from_fitness,
    sme_from_fitness,
)
from judges.verdicts.floors import (
    extra_floors,
    gates_table,
    label_stability,
    reading_list,
    reliability,
    table_floors,
)
from judges.verdicts.inputs import Sources
from judges.verdicts.probes import ProbeReport, probe_report, probe_score
from judges.verdicts.regressions import earlier_baseline, regressions
from judges.verdicts.verdict import Failure, ModelVerdict

__all__ = ["build_verdict", "earlier_baseline"]


def build_verdict(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    folder_rows: Sequence[JudgementRow],
    sources: Sources,
    dimensions: tuple[str, ...],
    flag: str | None,
    previous: tuple[str, Sequence[JudgementRow]] | None = None,
    baselines: Mapping[str, Sequence[JudgementRow]] | None = None,
) -> ModelVerdict:
    """The verdict of `model` under `version` from its rows (every run of it), the folder's
    rows (a panel's cross-check model), the previous version's rows (probe changes) and the
    baselines' rows by version (the regression family)."""
    notes: list[str] = []
    planted = sources.planted
    main = [row for row in rows if row.run == "main"]
    by_item = {row.item_id: row for row in main}
    asked = [item.id for item in planted.main_items(version, model)] if planted else []
    pin = planted.pins.get((model, version)) if planted else None
    if pin is not None and pin.rerecorded:  # the accepted baseline, recorded again on purpose
        notes.append(f"accepted baseline (pinned {pin.pinned}), re-recorded {pin.rerecorded}")
    missing = missing_items(asked, main, notes)
    lacking = missing_runs(planted, version, model, rows, folder_rows, notes, sources.cassettes)
    sections = reliability(model, version, rows, folder_rows, sources, dimensions, flag, notes)
    fitness = model_fitness(rows, version, sources, dimensions, flag, notes)
    # One statistic, one value: the sections show the chance tests' figures.
    if "sme" in sections:
        sections["sme"] = sme_from_fitness(sections["sme"], fitness)
    if "test_retest" in sections:
        sections["test_retest"] = retest_from_fitness(sections["test_retest"], fitness)
    table, where = gates_table(model, version, sources, notes)
    floors = table_floors(table, main, sections, notes)
    fields = (*dimensions, *([flag] if flag else []))
    probes = _probes(model, version, rows, sources, fields, previous)
    if probes is not None:
        floors["probes"] = probes.gates
    stability = label_stability(rows, sources.spec)
    reading = reading_list(rows, sources, notes, sources.memo)
    if table is not None:
        floors |= extra_floors(table, stability, reading, notes)
    misses = planted.accepted_misses.get((model, version), {}) if planted else {}
    # Last: the regression gates add notes of their own.
    found = regressions(model, version, rows, sources, baselines or {}, dimensions, flag, notes)
    return ModelVerdict(
        model=model,
        fitness=fitness,
        accept_not_fit=accepted_not_fit(fitness, table),
        chance_tests_apply=not is_pairwise(rows),
        missing_items=missing,
        missing_runs=lacking,
        noise_floor=sections.get("noise_floor"),
        test_retest=sections.get("test_retest"),
        panel=sections.get("panel"),
        sme=sections.get("sme"),
        label_stability=stability,
        reading_list=reading,
        probes=probes,
        floors=floors,
        gates_table=where,
        gates_version=planted.inherited_gates.get((model, version)) if planted else None,
        baseline_version=table.baseline if table is not None else None,
        failures=tuple(
            Failure(row, misses.get(row.item_id))
            for row in main
            if row.status != "ok" or not row.met
        ),
        accepted_met=tuple(
            item for item in sorted(misses) if item in by_item and detected(by_item[item])
        ),
        notes=tuple(notes),
        **found,
    )


def _probes(
    model: str,
    version: str,
    rows: Sequence[JudgementRow],
    sources: Sources,
    fields: Sequence[str],
    previous: tuple[str, Sequence[JudgementRow]] | None,
) -> ProbeReport | None:
    """The bias probes, when the set has probes and this version has probe rows."""
    planted = sources.planted
    score = probe_score(planted)
    if planted is None or score is None:
        return None
    gates = planted.gates.get((model, version))
    accepted = planted.accepted_probe_failures.get((model, version))
    return probe_report(rows, fields, score, gates, previous, accepted)
