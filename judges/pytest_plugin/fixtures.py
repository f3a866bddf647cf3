"""The fixtures a judges suite asks for: `judges_session` and `judge_runner`.

`JudgeRunner` judges one test's cases inside their cassettes, replays whole runs for the
set-level tests, and turns gates into a failed, skipped or passed test.
"""

from __future__ import annotations

from typing import Any

import pytest

from judges.core.naming import Case
from judges.core.results import JudgementRow, read_jsonl
from judges.pytest_plugin import probes as probing
from judges.pytest_plugin.invocation import rerecord_command
from judges.pytest_plugin.params import GATES_SKIPPED_PROPERTY, SetCase, case_id, session_key
from judges.pytest_plugin.session import JudgementMissing, JudgesSession
from judges.reports.sections.fitness import cannot_show, fitness_reasons, reason_text
from judges.sets.folder import GATES_FILE
from judges.sets.planted import Gates
from judges.stats.estimates.floors import Gate, not_evaluated
from judges.stats.fitness.chance import Fitness
from judges.stats.regression.gates import SME_GATE, Regression
from judges.storage.restoring import restore_hint
from judges.verdicts.build import build_verdict, earlier_baseline
from judges.verdicts.inputs import Sources
from judges.verdicts.verdict import ModelVerdict
from judges.verdicts.vocabulary import NOT_FIT, UNDECIDED


@pytest.fixture(scope="session")
def judges_session(pytestconfig: pytest.Config) -> JudgesSession:
    """The run's judging session: catalog, planted sets, record mode and ledger."""
    return pytestconfig.stash[session_key]


class JudgeRunner(probing.ProbeJudging):
    """Judges cases for one test and attaches every result row to its report."""

    def __init__(self, session: JudgesSession, item: pytest.Item) -> None:
        self.session = session
        self.item = item

    def judge(self, case: Case, run: str = "main") -> list[JudgementRow]:
        """Judge one case under a run's plan (repeats, seeds, sampling) in its cassette."""
        __tracebackhide__ = True
        plan = self.session.catalogue.run_plan(self.session.catalogue.planted_sets[case.judge], run)
        return self._judged(
            case,
            run,
            repeats=plan.repeats_for(case.version),
            draw_offset=plan.draw_offset,
            sampling=plan.sampling,
        )

    def case_id(self, case: Case) -> str:
        return case_id(self.session, case)

    def replay_set(self, set_case: SetCase, run: str = "main") -> list[JudgementRow]:
        """Every judgement of one run of a planted set, replayed (never live)."""
        __tracebackhide__ = True
        if self.session.settings.live:
            self.skip_gates(
                "set-level gates are evaluated on replay: run pytest again without --record"
            )
        planted = self.session.catalogue.planted_sets[set_case.judge]
        plan = self.session.catalogue.run_plan(planted, run)
        rows: list[JudgementRow] = []
        for item in self.session.catalogue.run_items(
            planted, run, set_case.version, str(set_case.model)
        ):
            model = plan.model or set_case.model
            case = Case(set_case.judge, set_case.version, model, item.id, item.slug)
            nodeid = self.session.recorders.get((run, case))
            keyword = None if nodeid else case_id(self.session, case)
            try:
                rows += self.session.judging.judge_case(
                    case,
                    rerecord=rerecord_command(
                        nodeid, keyword, self.session.settings.rerecord_options
                    ),
                    run=run,
                    repeats=plan.repeats_for(set_case.version),
                    draw_offset=plan.draw_offset,
                    sampling=plan.sampling,
                    replay_only=True,
                )
            except JudgementMissing as error:
                missing = str(error)
                break
        else:
            return rows
        pytest.fail(missing, pytrace=False)

    def check_gates(self, set_case: SetCase, section: str, results: list[Any]) -> None:
        """Fail when a gate fails or cannot be evaluated; skip when no gates exist."""
        __tracebackhide__ = True
        planted = self.session.catalogue.planted_sets[set_case.judge]
        model = str(set_case.model)
        where = planted.gates_source(model, set_case.version)
        if (model, set_case.version) not in planted.gates:
            pytest.skip(
                f"no gates for {model} prompt {set_case.version} in {planted.folder.gates_path}"
                f': add a ["{model}"."{set_case.version}"] table'
            )
        failed = [r for r in results if r.passed is False]
        unevaluated = [r for r in results if not_evaluated(r)]
        if not failed and unevaluated and not any(r.passed for r in results):
            # No data (a label the judge never gives, every call failed) decides nothing:
            # never a pass, never a failure (a failed call fails its own item's test).
            lines = "; ".join(r.describe() for r in unevaluated)
            self.skip_gates(
                f"{set_case.judge} prompt {set_case.version} on {set_case.model}: "
                f"{len(unevaluated)} {section} gate(s) not evaluated, no data (gates in "
                f"{where}): {lines}"
            )
        if not failed and not unevaluated and not any(r.passed for r in results):
            # No threshold to hold and no pair that could show a regression: a pass would
            # say the judge was checked when nothing was.
            shown = "; ".join(r.describe() for r in results) or "no gate computed"
            self.skip_gates(
                f"{set_case.judge} prompt {set_case.version} on {set_case.model}: no "
                f"{section} gate decided anything (no threshold in {where}, no regression "
                f"against a baseline): {shown}"
            )
        passed = "\n".join(f"  passed {r.describe()}" for r in results if r.passed)
        title = f"{set_case.judge} prompt {set_case.version} on {set_case.model}"
        if failed:
            lines = "\n".join(
                [f"  FAILED {r.describe()}" for r in failed]
                + [f"  NOT EVALUATED (no data) {r.describe()}" for r in unevaluated]
            )
            pytest.fail(
                f"{title}: {len(failed)} {section} gate(s) failed (thresholds in {where})\n"
                f"{lines}\n{passed}",
                pytrace=False,
            )
        # A gate without data beside gates that passed is shown (the report's gates table)
        # and decides nothing.

    def verdict(self, set_case: SetCase) -> ModelVerdict:
        """The version's verdict on this model, as the report builds it (judges.verdicts),
        from every run the set-level tests replay; built once per session and process."""
        __tracebackhide__ = True
        judge, version, model = set_case.judge, set_case.version, str(set_case.model)
        return self.session.verdicts.verdict(
            judge, version, model, lambda sources: self._build_verdict(set_case, sources)
        )

    def _build_verdict(self, set_case: SetCase, sources: Sources) -> ModelVerdict:
        spec = self.session.catalogue.catalog[set_case.judge]
        rows = self._version_rows(set_case, ("main", "retest", "noise", "reading_list"))
        probes = self.session.catalogue.probe_sets.get(set_case.judge)
        if probes is not None and set_case.version in self.session.catalogue.probe_versions(probes):
            rows += self.probe_rows(set_case)
        folder_rows = rows + self._version_rows(set_case, ("panel",))
        baselines: dict[str, list[JudgementRow]] = {}
        gates = self.gates(set_case)
        if gates is not None and gates.baseline is not None and gates.baseline != set_case.version:
            baseline_case = SetCase(set_case.judge, gates.baseline, set_case.model)
            baselines[gates.baseline] = self._version_rows(
                baseline_case, ("main", "retest", "noise")
            )
        # A version that is its own baseline answers to the one accepted before it.
        earlier = earlier_baseline(sources, str(set_case.model), set_case.version)
        if (
            earlier is not None
            and earlier in self.session.catalogue.catalog[set_case.judge].versions
        ):
            earlier_case = SetCase(set_case.judge, earlier, set_case.model)
            baselines[earlier] = self._version_rows(earlier_case, ("main",))
        dimensions = tuple(spec.config.dimensions)
        return build_verdict(
            str(set_case.model), set_case.version, rows, folder_rows, sources, dimensions,
            spec.config.flag, baselines=baselines,
        )  # fmt: skip

    def _version_rows(self, set_case: SetCase, runs: tuple[str, ...]) -> list[JudgementRow]:
        """Every judgement of the runs that cover this version, replayed (main always); a
        callable judge's retired version's from its committed results (its code is gone)."""
        __tracebackhide__ = True
        if self.session.catalogue.catalog[set_case.judge].retired(set_case.version):
            return self._committed_rows(set_case, runs)
        planted = self.session.catalogue.planted_sets[set_case.judge]
        rows: list[JudgementRow] = []
        for run in runs:
            if not self.session.catalogue.has_run(set_case.model, run):
                continue
            if (
                run == "main"
                or set_case.version in self.session.catalogue.run_plan(planted, run).versions
            ):
                rows += self.replay_set(set_case, run=run)
        return rows

    def _committed_rows(self, set_case: SetCase, runs: tuple[str, ...]) -> list[JudgementRow]:
        """A retired version's rows of these runs on this model, from its results file
        (which its acceptance pinned, so an edit of it stops the session first)."""
        __tracebackhide__ = True
        judge, version = set_case.judge, set_case.version
        path = self.session.settings.reports / judge / version / "results.jsonl"
        if not path.is_file():
            pytest.fail(
                f"{judge} {version} is the accepted baseline but no longer the version its "
                f"callable declares, and its committed results {path} are gone: restore them "
                f"({restore_hint([path], 'from a copy of the accepted results')})",
                pytrace=False,
            )
        model = str(set_case.model)
        return [r for r in read_jsonl(path) if r.model == model and r.run in runs]

    def fitness(self, set_case: SetCase) -> Fitness:
        """The chance tests of one judge, version and model, over every run it has."""
        __tracebackhide__ = True
        fitness = self.verdict(set_case).fitness
        assert fitness is not None  # a set-level test runs only on a planted set
        return fitness

    def check_fitness(self, set_case: SetCase) -> None:
        """Fail unless the judge is better than chance at everything its set measures."""
        __tracebackhide__ = True
        verdict = self.verdict(set_case)
        fitness = self.fitness(set_case)
        gates = self.gates(set_case)
        # A pairwise judge's sets at chance, each accepted in pairwise_accepted: known, as the
        # report says. (accept_not_fit is a strict xfail mark, so its assertion must fail.)
        accepted = verdict.accept_not_fit
        if not fitness.fit and accepted and gates is not None and not gates.accept_not_fit:
            pytest.xfail(f"pairwise_accepted: {accepted}")
        title = f"{set_case.judge} prompt {set_case.version} on {set_case.model}"
        if verdict.undecided:  # a coin flip would pass too: neither a pass nor a failure
            self.skip_gates(f"{title} is {UNDECIDED}: {cannot_show(fitness)[0]}")
        fit = [f"  fit: {reason_text(t)}" for t in fitness.tests if t.fit]
        untested = [f"  decides nothing: {reason_text(t)}" for t in fitness.tests if not t.testable]
        assert fitness.fit, "\n".join(
            [
                f"{title} is {NOT_FIT}: no better than chance at what its set measures "
                f"(threshold: chance itself, so no floor in {GATES_FILE} can move it)",
                *(f"  {reason_text(t)}" for t in fitness.failing),
                *(
                    [f"  {line}" for line in fitness_reasons(fitness)]
                    if not fitness.decisive
                    else []
                ),
                *fit,
                *untested,
                "A judge that is known to be unfit and kept anyway needs accept_not_fit = "
                f'"<why>" in its own table of {planted_gates(self.session, set_case)}',
            ]
        )

    def skip_gates(self, reason: str) -> None:
        """Skip a set-level test, and say why in the judges summary (xdist-safe)."""
        __tracebackhide__ = True
        self.item.user_properties.append((GATES_SKIPPED_PROPERTY, reason))
        pytest.skip(reason)

    def floors(self, set_case: SetCase, *sections: str, run: str | None = None) -> list[Gate]:
        """The verdict's gates.toml floors of these sections; a label-stability floor only
        of `run` when given (its key starts with the run)."""
        __tracebackhide__ = True
        found = list(self.verdict(set_case).section(*sections))
        if run is not None:
            found += [
                gate
                for gate in self.verdict(set_case).section("label_stability")
                if gate.name.startswith(f"label_stability.{run}.")
            ]
        return found

    def regression_gates(self, set_case: SetCase) -> list[Regression]:
        """The verdict's regression gates against the accepted baseline (gates.toml
        `baseline`), SME agreement aside."""
        __tracebackhide__ = True
        family = self.verdict(set_case).regressions
        return [gate for gate in family if not gate.name.startswith(SME_GATE)]

    def sme_regression_gates(self, set_case: SetCase) -> list[Regression]:
        """Agreement with the SME labels against the accepted baseline's (quadratic kappa)."""
        __tracebackhide__ = True
        family = self.verdict(set_case).regressions
        return [gate for gate in family if gate.name.startswith(SME_GATE)]

    def gates(self, set_case: SetCase) -> Gates | None:
        planted = self.session.catalogue.planted_sets[set_case.judge]
        return planted.gates.get((str(set_case.model), set_case.version))


def planted_gates(session: JudgesSession, set_case: SetCase) -> str:
    planted = session.catalogue.planted_sets[set_case.judge]
    return f'{planted.folder.gates_path} ["{set_case.model}"."{set_case.version}"]'


@pytest.fixture
def judge_runner(judges_session: JudgesSession, request: pytest.FixtureRequest) -> JudgeRunner:
    """Judge planted cases inside this test's cassettes; rows go to the session's reports."""
    return JudgeRunner(judges_session, request.node)
