"""`JudgesSession`: one pytest run, composed of its parts, each owning one concern.

The plugin's hooks are a few lines each and hand off to this object, kept in
`config.stash`; it keeps the names the hooks, fixtures and phases use and passes each to
the part that owns it:

- `Catalogue`: what there is to judge (judges, planted sets, probes, models, run plans);
- `run_preflight`: the checks before any call;
- `RecordPolicy`: which cassettes are recorded, which replayed;
- `SessionBackends`: the judge backends, built once;
- `Judging`: a case judged inside its cassette, through the cassette facade;
- `GatheredRows`: the rows gathered, and their usage;
- `Outputs`: reports, terminal summary, GitHub output, JUnit properties.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.calls.backends import ModelRef, Price, load_prices
from judges.calls.credentials import credential_values, remember
from judges.calls.ledger import Ledger
from judges.calls.limits import Limiter, load_ceilings
from judges.core.naming import Case
from judges.core.results import JudgementRow, Usage
from judges.core.runner import Subject
from judges.core.spec import JudgeSpec, Sampling
from judges.pytest_plugin.pinned import BaselineGuard
from judges.pytest_plugin.session.catalogue import Catalogue, run_preflight
from judges.pytest_plugin.session.judging import Judging, RecordPolicy, SessionBackends
from judges.pytest_plugin.session.outputs import GatheredRows, Outputs
from judges.pytest_plugin.session.settings import RunPlan, Settings
from judges.sets.items import PlantedItem
from judges.sets.pins import Pin
from judges.sets.planted import PlantedSet
from judges.sets.probes import ProbeSet
from judges.stats.estimates.memo import Memo
from judges.storage.files import signals_deferred
from judges.verdicts.book import VerdictBook

if TYPE_CHECKING:
    from judges.pytest_plugin.session.outputs import Outcome
    from judges.reports.write import ReportSet


class JudgesSession:
    """One pytest run: its settings, and the parts that judge, gather and report."""

    def __init__(self, settings: Settings) -> None:
        self.report: ReportSet | None = None  # written or checked at the end of the session
        self.outcome: Outcome | None = None  # built once the session finishes
        self.recorders: dict[tuple[str, Case], str] = {}  # (run, case) -> its item test
        self.partial_selection: str | None = None  # -k, -m, node ids or --lf, when used
        self.gates_skipped: list[str] = []  # why set-level tests skipped their gates
        self.rerecorded: list[str] = []  # accepted baselines re-recorded on purpose, and how
        self.baselines = BaselineGuard(settings.rerecord_baseline, settings.reports)
        # Statistics and each version's verdict, computed once, shared by tests and reports.
        self.memo = Memo()
        self.verdicts = VerdictBook(lambda: self.catalog, settings.planted_sets, self.memo)
        self.ledger = Ledger(
            settings.scratch / f"ledger-{settings.session_id}.jsonl", settings.cost_cap_usd
        )
        self.prices: dict[str, Price] = load_prices(*settings.price_files, batch=settings.batch)
        self.limiter = Limiter(
            settings.scratch / f"limits-{settings.session_id}.json",
            load_ceilings(*settings.price_files),
        )
        for value in credential_values(settings.base_url or ""):
            remember(value)  # a key in the base URL is scrubbed by value wherever it shows
        self.catalogue = Catalogue(settings)
        # Late-bound: a test may stand in for `_pins`.
        self.policy = RecordPolicy(settings, self.baselines, lambda case: self._pins(case))
        self.backends = SessionBackends(settings, self.limiter)
        self.judging = Judging(
            settings, self.catalogue, self.backends, self.policy, self.ledger, self.prices
        )
        self.gathered = GatheredRows()
        self.outputs = Outputs(
            settings, self.catalogue, self.judging, self.gathered, self.ledger, self.memo
        )
        self._settings = settings

    @property
    def settings(self) -> Settings:
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """A live session learns its server (base URL, fingerprint) after it started."""
        self._settings = settings
        for part in (self.catalogue, self.policy, self.backends, self.judging, self.outputs):
            part.settings = settings

    # -- what there is to judge (Catalogue) ---------------------------------------------

    @property
    def catalog(self) -> dict[str, JudgeSpec]:
        return self.catalogue.catalog

    @property
    def planted_sets(self) -> dict[str, PlantedSet]:
        return self.catalogue.planted_sets

    @property
    def probe_sets(self) -> dict[str, ProbeSet]:
        return self.catalogue.probe_sets

    def probe_versions(self, probes: ProbeSet) -> tuple[str, ...]:
        return self.catalogue.probe_versions(probes)

    def models_for(self, spec: JudgeSpec, version: str | None = None) -> list[ModelRef]:
        return self.catalogue.models_for(spec, version)

    def run_models(self, spec: JudgeSpec, version: str, run: str) -> list[ModelRef]:
        return self.catalogue.run_models(spec, version, run)

    def has_run(self, model: ModelRef | str, run: str) -> bool:
        return self.catalogue.has_run(model, run)

    def run_items(
        self, planted: PlantedSet, run: str, version: str, model: str
    ) -> tuple[PlantedItem, ...]:
        return self.catalogue.run_items(planted, run, version, model)

    def run_plan(self, planted: PlantedSet, run: str) -> RunPlan:
        return self.catalogue.run_plan(planted, run)

    def subject(self, case: Case) -> Subject:
        return self.catalogue.subject(case)

    def preflight(self) -> None:
        """Check prompts, model tables and cassettes; raise SpecError naming file and line."""
        run_preflight(self.catalogue, self.settings)

    # -- judging (RecordPolicy, Judging) ------------------------------------------------

    def _pins(self, case: Case) -> dict[tuple[str, str], Pin]:
        return self.catalogue.pins(case)

    def _should_record(self, path: Path, repeats: int, case: Case, run: str) -> bool:
        return self.policy.should_record(path, repeats, case, run)

    @property
    def prerecorded(self) -> dict[Path, list[JudgementRow]]:
        """Cassette -> rows recorded by the record phase (judges.pytest_plugin.record_phase)."""
        return self.judging.prerecorded

    def judge_case(
        self,
        case: Case,
        *,
        rerecord: str,
        run: str = "main",
        repeats: int = 1,
        draw_offset: int = 0,
        replay_only: bool = False,
        sampling: Sampling | None = None,
        subject: Subject | None = None,
    ) -> list[JudgementRow]:
        """Judge one case `repeats` times inside its cassette; raise JudgementMissing."""
        return self.judging.judge_case(
            case, rerecord=rerecord, run=run, repeats=repeats, draw_offset=draw_offset,
            replay_only=replay_only, sampling=sampling, subject=subject,
        )  # fmt: skip

    # -- gathering (GatheredRows) -------------------------------------------------------

    @property
    def rows(self) -> list[JudgementRow]:
        return self.gathered.rows

    def add_rows(self, rows: Iterable[object]) -> None:
        self.gathered.add_rows(rows)

    def add_unreported(self, rows: Iterable[JudgementRow]) -> int:
        return self.gathered.add_unreported(rows)

    def usage_by_model(self) -> dict[str, Usage]:
        return self.gathered.usage_by_model()

    # -- what the run tells (Outputs) ---------------------------------------------------

    def case_properties(self, case: Any) -> list[tuple[str, str]]:
        return self.outputs.case_properties(case)

    def build_reports(self) -> ReportSet:
        return self.outputs.build_reports()

    def finish(self, check_reports: bool, notices: Callable[[], list[str]]) -> Outcome:
        """Write the rows gathered, then write (or, checking, compare) their reports, then
        the one outcome every output renders; `notices` is asked after the reports.

        The rows go to disk first, with SIGINT and SIGTERM held until they are written: an
        interrupt while the far slower reports are built (statistics, the baseline replayed
        from its cassettes) loses no row, and skips the reports, saying how to rebuild them."""
        stop: KeyboardInterrupt | None = None
        saved: list[Path] = []
        if self.rows or self.gathered.reply_checks:  # reply checks alone make a report too
            try:
                if self.settings.rerecord_baseline:  # reads the previous results: first
                    from judges.pytest_plugin.pinned import compare_with_previous

                    self.rerecorded = compare_with_previous(self)
            except KeyboardInterrupt as interrupt:
                stop = interrupt
            if not check_reports:
                try:
                    with signals_deferred():
                        saved = self.outputs.save_rows()
                except KeyboardInterrupt as interrupt:  # raised once the rows are written
                    stop = stop or interrupt
            if stop is None:
                try:
                    built = self.build_reports()
                    self.report = built.check() if check_reports else built.write()
                except KeyboardInterrupt as interrupt:
                    stop = interrupt
        stopped = "" if stop is None else self.outputs.interrupted_line(stop, saved)
        self.outcome = self.outputs.outcome(self.report, notices(), stopped)
        return self.outcome
