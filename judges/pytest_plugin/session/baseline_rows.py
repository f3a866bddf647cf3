"""The accepted baselines a report compares against, read from their cassettes (never from
the report folder): the main run, and the retest where the set has one."""

from __future__ import annotations

from collections.abc import Sequence

from judges.calls.backends import ModelRef
from judges.core.naming import Case
from judges.core.results import JudgementRow, main_run
from judges.pytest_plugin.session.catalogue import Catalogue
from judges.pytest_plugin.session.judging import JudgementMissing, Judging
from judges.sets.planted import PlantedSet


def recorded_baselines(
    rows: Sequence[JudgementRow], catalogue: Catalogue, judging: Judging
) -> dict[tuple[str, str], list[JudgementRow]]:
    """Each judged judge's accepted baseline (main run, and retest where it has one) from
    its cassettes, never the report folder."""
    baselines: dict[tuple[str, str], list[JudgementRow]] = {}
    for name in sorted({row.judge for row in rows}):
        planted = catalogue.planted_sets.get(name)
        if planted is None:
            continue
        wanted = {(g.baseline, m) for (m, _), g in planted.gates.items() if g.baseline}
        for version, model in sorted(wanted):
            ids = [item.id for item in catalogue.main_items(planted, version, model)]
            # Judged in this session: under xdist the controller would replay it again.
            found = main_run(rows, (name, version, model), ids)
            ref = ModelRef.parse(model)
            found = found or _replay_run(catalogue, judging, planted, version, ref)
            if found is not None:
                retested = version in catalogue.run_plan(planted, "retest").versions
                if retested and catalogue.has_run(ref, "retest"):  # its second draw
                    found += _replay_run(catalogue, judging, planted, version, ref, "retest") or []
                baselines.setdefault((name, version), []).extend(found)
    return baselines


def _replay_run(
    catalogue: Catalogue,
    judging: Judging,
    planted: PlantedSet,
    version: str,
    model: ModelRef,
    run: str = "main",
) -> list[JudgementRow] | None:
    """A version's run from its cassettes; None when any is missing."""
    plan = catalogue.run_plan(planted, run)
    rows: list[JudgementRow] = []
    for item in catalogue.run_items(planted, run, version, str(model)):
        case = Case(planted.judge, version, plan.model or model, item.id, item.slug)
        try:
            rows += judging.judge_case(
                case, rerecord="", run=run, repeats=plan.repeats_for(version),
                draw_offset=plan.draw_offset, sampling=plan.sampling, replay_only=True,
            )  # fmt: skip
        except JudgementMissing:
            return None
    return rows
