"""Parametrization: which cases a judges test runs over, and how they are named.

A test asks for a fixture by name (`planted_case`, `gate_set`, ...) and is parametrized over
the cases of that run: one per item (item fixtures) or one per planted set under a prompt
version and judge model (set fixtures). Every other module of the pytest layer takes its
case types and names from here, so the layer imports one way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from judges.calls.backends import ModelRef
from judges.core.naming import Case
from judges.core.results import JudgementRow
from judges.pytest_plugin.session import JudgesSession
from judges.sets.planted import PlantedSet
from judges.stats.fitness.pairwise import is_pairwise_set

GATES_SKIPPED_PROPERTY = "judges.gates_skipped"
# A reply-fixture test's judge, version, fixture and check: its outcome reaches the report.
REPLY_PROPERTY = "judges.reply_check"

session_key = pytest.StashKey[JudgesSession]()
# A test's last judged row, for the message when an expected failure now passes.
last_row_key = pytest.StashKey[JudgementRow]()
# judges.pytest_plugin.live.Live: the cassette lock, the embedded judge (a live controller)
live_key = pytest.StashKey[Any]()


@dataclass(frozen=True)
class SetCase:
    """One planted set under one prompt version and judge model: gates and statistics."""

    judge: str
    version: str
    model: ModelRef

    @property
    def test_id(self) -> str:
        return f"{self.judge}-{self.version}"


def multi_model(session: JudgesSession) -> bool:
    return len(session.settings.models) > 1


def case_id(session: JudgesSession, case: Case | SetCase) -> str:
    """The test id; it names the model when several are selected or it is not the baseline
    (set.toml may name other models for a version)."""
    baseline = session.catalogue.catalog[case.judge].config.baseline_model
    named = multi_model(session) or str(case.model) != baseline
    return f"{case.test_id}-{case.model.slug}" if named else case.test_id


# -- parametrization -----------------------------------------------------------------

# Fixture name -> run: a test asking for `noise_case` is parametrized over the noise plan.
ITEM_FIXTURES = {
    "planted_case": "main", "retest_case": "retest", "noise_case": "noise",
    "panel_case": "panel", "reading_list_case": "reading_list",
}  # fmt: skip
SET_FIXTURES = {
    "gate_set": "main",
    "noise_set": "noise",
    "retest_set": "retest",
    "panel_set": "panel",
    "sme_set": "sme",
    "ranking_set": "ranking",
    "reading_list_set": "reading_list",
    "pairwise_set": "pairwise",
    "fitness_set": "fitness",
}

CASE_FIXTURES = frozenset({*ITEM_FIXTURES, *SET_FIXTURES})


def item_params(session: JudgesSession, run: str) -> list[Any]:
    params = []
    for planted in session.catalogue.planted_sets.values():
        plan = session.catalogue.run_plan(planted, run)
        spec = session.catalogue.catalog[planted.judge]
        for version in plan.versions:
            for model in session.catalogue.run_models(spec, version, run):
                for item in session.catalogue.run_items(planted, run, version, str(model)):
                    case = Case(spec.name, version, plan.model or model, item.id, item.slug)
                    reason = planted.accepted_miss(str(model), version, item.id)
                    # raises=AssertionError: a missing or stale cassette still fails loudly.
                    marks = (
                        [pytest.mark.xfail(strict=True, reason=reason, raises=AssertionError)]
                        if reason and run == "main"
                        else []
                    )
                    params.append(pytest.param(case, id=case_id(session, case), marks=marks))
    return params


def set_params(session: JudgesSession, run: str) -> list[Any]:
    params = []
    for planted in session.catalogue.planted_sets.values():
        spec = session.catalogue.catalog[planted.judge]
        if run == "sme":
            versions = planted.run_versions("sme")
        elif run == "ranking":  # judges whose gates.toml sets ranking thresholds
            versions = tuple(
                sorted({v for (_, v), gates in planted.gates.items() if gates.ranking})
            )
        elif run == "pairwise":  # sets whose items expect a winner in each order
            versions = tuple(spec.versions) if is_pairwise_set(planted.items) else ()
        else:
            versions = session.catalogue.run_plan(
                planted, "main" if run == "fitness" else run
            ).versions
        for version in versions:
            for model in session.catalogue.run_models(spec, version, run):
                case = SetCase(spec.name, version, model)
                marks = _not_fit_accepted(planted, str(model), version) if run == "fitness" else []
                params.append(pytest.param(case, id=case_id(session, case), marks=marks))
    return params


def _not_fit_accepted(planted: PlantedSet, model: str, version: str) -> list[Any]:
    """A strict xfail when the version's own gates.toml table accepts it as NOT FIT."""
    gates = planted.gates.get((model, version))
    reason = gates.accept_not_fit if gates is not None else ""
    # raises=AssertionError: a missing cassette still fails; a fit judge XPASSes (strict).
    return [pytest.mark.xfail(strict=True, reason=f"accept_not_fit: {reason}",
                              raises=AssertionError)] if reason else []  # fmt: skip
