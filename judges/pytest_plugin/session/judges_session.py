"""`JudgesSession`: one pytest run, composed of its parts, each owning one concern.

The plugin's hooks are a few lines each and hand off to this object, kept in
`config.stash`. It holds the run's state (settings, ledger, limits, verdicts) and its parts;
a caller asks the part that owns what it needs:

- `catalogue` (`Catalogue`): what there is to judge (judges, planted sets, probes, models,
  run plans) and the preflight before any call;
- `policy` (`RecordPolicy`): which cassettes are recorded, which replayed;
- `backends` (`SessionBackends`): the judge backends, built once;
- `judging` (`Judging`): a case judged inside its cassette, through the cassette facade;
- `gathered` (`GatheredRows`): the rows gathered, and their usage;
- `outputs` (`Outputs`): reports, terminal summary, GitHub output, JUnit properties.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from judges.calls.backends import Price, load_prices
from judges.calls.credentials import credential_values, remember
from judges.calls.ledger import Ledger
from judges.calls.limits import Limiter, load_ceilings
from judges.core.naming import Case
from judges.pytest_plugin.pinned import BaselineGuard
from judges.pytest_plugin.session.catalogue import Catalogue
from judges.pytest_plugin.session.judging import Judging, RecordPolicy, SessionBackends
from judges.pytest_plugin.session.outputs import GatheredRows, Outputs
from judges.pytest_plugin.session.settings import Settings
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
        self.verdicts = VerdictBook(
            lambda: self.catalogue.catalog, settings.planted_sets, self.memo
        )
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
        self.policy = RecordPolicy(settings, self.baselines, self.catalogue.pins)
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

    def finish(self, check_reports: bool, notices: Callable[[], list[str]]) -> Outcome:
        """Write the rows the session's journals hold, then write (or, checking, compare)
        their reports, then the one outcome every output renders; `notices` is asked after
        the reports.

        The rows go to disk first, with SIGINT and SIGTERM held until they are written: an
        interrupt while the far slower reports are built (statistics, the baseline replayed
        from its cassettes) loses no row, and skips the reports, saying how to rebuild them."""
        stop: KeyboardInterrupt | None = None
        saved: list[Path] = []
        self.gathered.read_journals(self.settings.scratch, self.settings.session_id)
        if self.gathered.rows or self.gathered.reply_checks:  # reply checks alone make a report too
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
                    built = self.outputs.build_reports()
                    self.report = built.check() if check_reports else built.write()
                except KeyboardInterrupt as interrupt:
                    stop = interrupt
        stopped = "" if stop is None else self.outputs.interrupted_line(stop, saved)
        self.outcome = self.outputs.outcome(self.report, notices(), stopped)
        return self.outcome
