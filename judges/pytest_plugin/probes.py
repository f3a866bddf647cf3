"""Bias probes in the plugin: their test parameters and the runner's probe judging.

A probe item is judged in its own cassette (run `probe-<probe>`), its unperturbed item's
main-run verdict is replayed beside it, and an independent redraw of the unperturbed item
(run `probe-noise`) gives the noise floor. The set-level test replays all three.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from judges.core.naming import Case
from judges.core.results import JudgementRow
from judges.pytest_plugin.invocation import rerecord_command
from judges.pytest_plugin.params import SetCase, last_row_key
from judges.pytest_plugin.session import JudgementMissing
from judges.sets.probes import NOISE_DRAW, NOISE_RUN, run_name
from judges.stats.reliability.probes import Outcome
from judges.verdicts.probe_messages import describe_outcome

if TYPE_CHECKING:
    from judges.pytest_plugin.session import JudgesSession

CaseId = Callable[[Any], str]


@dataclass(frozen=True)
class ProbeCase:
    """One bias probe of one planted item under one prompt version and judge model."""

    probe: str
    case: Case

    @property
    def run(self) -> str:
        return run_name(self.probe)


def probe_params(session: JudgesSession, case_id: CaseId) -> list[Any]:
    params = []
    for probes in session.catalogue.probe_sets.values():
        spec = session.catalogue.catalog[probes.judge]
        for version in session.catalogue.probe_versions(probes):
            for model in session.catalogue.models_for(spec):
                for item in probes.items:
                    case = Case(spec.name, version, model, item.id, item.case_slug)
                    reason = probes.accepted_failure(str(model), version, item.probe, item.id)
                    marks = (
                        [pytest.mark.xfail(strict=True, reason=reason, raises=AssertionError)]
                        if reason
                        else []
                    )
                    params.append(
                        pytest.param(ProbeCase(item.probe, case), id=case_id(case),
                                     marks=marks)
                    )  # fmt: skip
    return params


def probe_noise_params(session: JudgesSession, case_id: CaseId) -> list[Any]:
    params = []
    for probes in session.catalogue.probe_sets.values():
        spec = session.catalogue.catalog[probes.judge]
        planted = session.catalogue.planted_sets[probes.judge]
        for version in session.catalogue.probe_versions(probes):
            for model in session.catalogue.models_for(spec):
                for item_id in probes.clean_ids():
                    case = Case(spec.name, version, model, item_id, planted.item(item_id).slug)
                    params.append(pytest.param(case, id=case_id(case)))
    return params


def probe_set_params(session: JudgesSession, case_id: CaseId) -> list[Any]:

    params = []
    for probes in session.catalogue.probe_sets.values():
        spec = session.catalogue.catalog[probes.judge]
        for version in session.catalogue.probe_versions(probes):
            for model in session.catalogue.models_for(spec):
                case = SetCase(spec.name, version, model)
                params.append(pytest.param(case, id=case_id(case)))
    return params


def assert_unbiased(result: Outcome, row: JudgementRow, clean: JudgementRow) -> None:
    """A probe item's test: fail (AssertionError, so a strict xfail can accept it)."""
    __tracebackhide__ = True
    if result.biased:
        raise AssertionError(describe_outcome(result, row, clean))


PARAMS: dict[str, Callable[[JudgesSession, CaseId], list[Any]]] = {
    "probe_case": probe_params,
    "probe_noise_case": probe_noise_params,
    "probe_set": probe_set_params,
}


def judged_case(params: dict[str, Any]) -> tuple[str, Case] | None:
    """(run, case) of a probe item test's parameters; None for other tests."""
    if "probe_case" in params:
        return params["probe_case"].run, params["probe_case"].case
    if "probe_noise_case" in params:
        return NOISE_RUN, params["probe_noise_case"]
    return None


class ProbeJudging:
    """The plugin's JudgeRunner minus its planted-set methods: judging one case in its
    cassette (rows attached to the test's report), and the probes."""

    session: JudgesSession
    item: pytest.Item
    case_id: Callable[[Case], str]
    replay_set: Callable[..., list[JudgementRow]]

    def _judged(
        self,
        case: Case,
        run: str,
        *,
        replay_only: bool = False,
        attach: bool = True,
        **options: Any,
    ) -> list[JudgementRow]:
        __tracebackhide__ = True
        nodeid = self.item.nodeid if attach else self.session.recorders.get((run, case))
        keyword = None if nodeid else self.case_id(case)
        try:
            rows = self.session.judging.judge_case(
                case,
                rerecord=rerecord_command(nodeid, keyword, self.session.settings.rerecord_options),
                run=run,
                replay_only=replay_only,
                **options,
            )
        except JudgementMissing as error:
            missing = str(error)
        else:
            missing = ""
        if missing:
            pytest.fail(missing, pytrace=False)
        if attach and rows:
            self.item.stash[last_row_key] = rows[-1]
            capped = [row for row in rows if row.status == "cost_cap"]
            if capped:
                pytest.skip(f"cost_cap: {capped[0].error}")
        return rows

    gates: Callable[..., Any]
    check_gates: Callable[..., None]

    def judge_probe(self, probe_case: ProbeCase) -> JudgementRow:
        """Judge one probe item in its own cassette: the record phase's rows, else replayed."""
        __tracebackhide__ = True
        case = probe_case.case
        probes = self.session.catalogue.probe_sets[case.judge]
        clean = self.session.catalogue.planted_sets[case.judge].item(case.item_id)
        subject = probes.item(probe_case.probe, case.item_id).subject(clean)
        return self._judged(case, probe_case.run, subject=subject)[0]

    def judge_probe_noise(self, case: Case) -> JudgementRow:
        """An independent redraw of a probed item, unperturbed: the probes' noise floor."""
        __tracebackhide__ = True
        return self._judged(case, NOISE_RUN, draw_offset=NOISE_DRAW)[0]

    def replay_clean(self, probe_case: ProbeCase) -> JudgementRow:
        """The main-run verdict on a probe's unperturbed item (recorded by its own test)."""
        __tracebackhide__ = True
        case = probe_case.case
        slug = self.session.catalogue.planted_sets[case.judge].item(case.item_id).slug
        clean = Case(case.judge, case.version, case.model, case.item_id, slug)
        return self._judged(clean, "main", replay_only=True, attach=False)[0]

    def probe_effects(self, set_case: Any) -> list[Any]:
        """Every probe of a judge version, replayed and set against its noise floor."""
        __tracebackhide__ = True
        from judges.stats.reliability.probes import effects_from_rows

        if self.session.settings.live:
            pytest.skip("probe gates are evaluated on replay: run pytest again without --record")
        spec = self.session.catalogue.catalog[set_case.judge]
        probes = self.session.catalogue.probe_sets[set_case.judge]
        rows = list(self.replay_set(set_case, run="main"))  # all of it: the control floor
        rows += self.probe_rows(set_case)
        fields = [*spec.config.dimensions, *([spec.config.flag] if spec.config.flag else [])]
        return effects_from_rows(rows, fields, probes.score)

    def probe_rows(self, set_case: Any) -> list[JudgementRow]:
        """The probe runs of a judge version, replayed: each probe item, and the redraw of
        every clean item it perturbs (its noise floor)."""
        __tracebackhide__ = True
        probes = self.session.catalogue.probe_sets[set_case.judge]
        planted = self.session.catalogue.planted_sets[set_case.judge]
        rows: list[JudgementRow] = []
        for item_id in probes.clean_ids():
            slug = planted.item(item_id).slug
            case = Case(set_case.judge, set_case.version, set_case.model, item_id, slug)
            rows.append(self._replayed(case, NOISE_RUN, draw_offset=NOISE_DRAW))
        for item in probes.items:
            case = Case(set_case.judge, set_case.version, set_case.model, item.id, item.case_slug)
            subject = item.subject(planted.item(item.id))
            rows.append(self._replayed(case, run_name(item.probe), subject=subject))
        return rows

    def check_probe_gates(self, set_case: Any, effects: list[Any]) -> None:
        """Gate each probe's biased rate; a probe without a `max_flip` threshold fails,
        unless `judges baseline` has accepted items of it: it writes no ceiling that would
        reach 1.0 (none could fail), and then every item is guarded by its own test, the
        accepted ones as strict xfails, the others failing the run once biased."""
        __tracebackhide__ = True
        from judges.verdicts.probe_messages import flip_gates

        gates = self.gates(set_case)
        thresholds = gates.max_flip if gates is not None else {}
        probes = self.session.catalogue.probe_sets[set_case.judge]
        model, version = str(set_case.model), set_case.version
        # An inherited table carries its baseline's acceptances: a probe the baseline accepted
        # as failing (no max_flip) must not fail a new version for want of a gate.
        inherited = self.session.catalogue.planted_sets[set_case.judge].inherited_gates.get(
            (model, version)
        )
        unset = [
            e.probe
            for e in effects
            if e.probe not in thresholds
            and not any(
                probes.accepted_failure(model, inherited or version, item.probe, item.id)
                for item in probes.items
                if item.probe == e.probe
            )
        ]
        results = flip_gates(effects, thresholds, gates.alpha if gates is not None else 0.05)
        if gates is not None and unset:
            where = self.session.catalogue.planted_sets[set_case.judge].folder.gates_path
            # A missing threshold must not hide a gate that fails: both are named.
            failed = "".join(f"\n  FAILED {g.describe()}" for g in results if g.passed is False)
            pytest.fail(
                f"{set_case.judge} prompt {set_case.version} on {set_case.model}: probes "
                f"{unset} have no gate; add max_flip = {{ {unset[0]} = ... }} to "
                f'["{set_case.model}"."{set_case.version}"] in {where} '
                f"(python -m judges baseline suggests one){failed}",
                pytrace=False,
            )
        self.check_gates(set_case, "bias probe", results)

    def _replayed(self, case: Case, run: str, **options: Any) -> JudgementRow:
        __tracebackhide__ = True
        return self._judged(case, run, replay_only=True, attach=False, **options)[0]
