"""One case judged inside its cassette, through the cassette facade.

Which cassettes a run records and which it replays (`RecordPolicy`: the record mode, an
interrupted recording, imported judgements, the accepted baselines' cassettes it keeps);
the judge backends, one per (model, live), built once and shared by the record phase's
threads (`SessionBackends`; live ones wait for the rate limits); the judging itself
(`Judging`: recorded or replayed, a replay read once for every test that asks, the record
phase's rows taken first, a miss explained with the command that fixes it); and the
accepted baselines a report compares against, replayed from their cassettes, never read
from the report folder (`recorded_baselines`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from judges.calls.backends import ModelRef, Price, is_imported, make_backend, price_for, replay_keys
from judges.calls.cassettes import (
    CassetteMiss,
    abandon,
    is_answering,
    is_replay_miss,
    judge_in_cassette,
    recorded_base_url,
    recorded_interactions,
    tapped,
)
from judges.calls.ledger import Ledger
from judges.calls.limits import Limiter
from judges.core.naming import Case
from judges.core.results import JudgementRow, main_run
from judges.core.runner import Call, Subject, judge
from judges.core.spec import Sampling
from judges.pytest_plugin.invocation import missing_fix, with_recording_options
from judges.pytest_plugin.pinned import BaselineGuard, missing_hint
from judges.pytest_plugin.row_journal import process_journal
from judges.pytest_plugin.session.catalogue import Catalogue
from judges.pytest_plugin.session.settings import RecordMode, Settings
from judges.sets.pins import Pin
from judges.sets.planted import PlantedSet

# -- record or replay, and the backends --------------------------------------------------

Pins = Callable[[Case], dict[tuple[str, str], Pin]]


class RecordPolicy:
    """Record or replay, per cassette; `pins` gives a case's accepted baselines' pins."""

    def __init__(self, settings: Settings, baselines: BaselineGuard, pins: Pins) -> None:
        self.settings = settings
        self.baselines = baselines
        self.pins = pins

    def should_record(self, path: Path, repeats: int, case: Case, run: str) -> bool:
        if is_imported(case.model):
            return False  # released by others: replayed, never called (re-import instead)
        mode = self.settings.record
        # An interrupted recording leaves fewer interactions than the test needs.
        wanted = mode is RecordMode.ALL or (mode is RecordMode.MISSING and (
            not path.is_file() or recorded_interactions(path) < repeats))  # fmt: skip
        # Only a cassette this mode would record counts as one the baseline guard kept.
        return wanted and not self.baselines.keeps(self.pins(case), case, run, path)

    def kept_hint(self, case: Case, shown_path: str, run: str) -> str:
        """Why a missing cassette was not recorded: an accepted baseline's, kept on purpose
        (empty when it is not one)."""
        return missing_hint(self.pins(case), case, shown_path, self.baselines, run)


class SessionBackends:
    """The judge backends, one per (model, live), built once and shared by the record
    phase's threads; live ones wait for the session's rate limits."""

    def __init__(self, settings: Settings, limiter: Limiter) -> None:
        self.settings = settings
        self.limiter = limiter
        self._built: dict[tuple[str, bool], Any] = {}
        self._lock = threading.Lock()

    def get(self, model: ModelRef, live: bool) -> Any:
        key = (str(model), live)
        with self._lock:  # the record phase asks from many threads at once
            if key not in self._built:
                self._built[key] = self._make(model, live)
            return self._built[key]

    def _make(self, model: ModelRef, live: bool) -> Any:
        s = self.settings
        backend = make_backend(model, base_url=s.base_url, live=live, timeout=s.judge_timeout_s)
        # Live calls wait for the session's rate limits (judges.calls.limits); not a batch's.
        return self.limiter.wrap(backend) if live and not s.batch else backend


# -- a case judged -----------------------------------------------------------------------


class JudgementMissing(Exception):
    """No recorded judgement matches: the cassette is absent or stale."""


# Set by the record and batch phases around each judgement they call (per thread: the
# record phase judges in a pool): a judgement is called live nowhere else; a test replays.
_live_phase = threading.local()


@contextmanager
def live_phase() -> Iterator[None]:
    """The record or batch phase's judgement: the one place it may be called live."""
    _live_phase.on = True
    try:
        yield
    finally:
        _live_phase.on = False


def in_live_phase() -> bool:
    return bool(getattr(_live_phase, "on", False))


class Judging:
    """Judges the session's cases: the catalogue says what, the policy record or replay."""

    def __init__(
        self,
        settings: Settings,
        catalogue: Catalogue,
        backends: SessionBackends,
        policy: RecordPolicy,
        ledger: Ledger,
        prices: Mapping[str, Price],
    ) -> None:
        self.settings = settings
        self.catalogue = catalogue
        self.backends = backends
        self.policy = policy
        self.ledger = ledger
        self.prices = prices
        self._replayed: dict[tuple[Any, ...], tuple[JudgementRow, ...]] = {}
        # Cassette -> rows recorded by the record phase (judges.pytest_plugin.record_phase).
        self.prerecorded: dict[Path, list[JudgementRow]] = {}
        # The rows this process's tests replay, for the session's end (`row_journal`).
        self.journal = process_journal(settings.scratch, settings.session_id)

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
        """Judge one case `repeats` times inside its cassette; raise JudgementMissing.

        `subject` overrides the planted item's inputs (a bias probe of it).
        """
        path = case.cassette(self.settings.cassettes, run)
        if not replay_only and path in self.prerecorded:  # called live by the record phase,
            return self.prerecorded.pop(path)  # and in its journal already
        record = not replay_only and self.policy.should_record(path, repeats, case, run)
        if record and not in_live_phase():
            # The record phase judges every collected test's cassette before any test runs;
            # one it left is a test's live call, which would bypass the phase's cost cap,
            # lock and journal: refused, never made.
            raise JudgementMissing(
                f"{_relative(path)} was not recorded by the record phase, and a test only "
                f"replays; record it with:  {rerecord or 'pytest --record'}"
            )
        # An item test and its set's test replay the same cassette: read it once.
        replay_key = (path, _mtime(path), repeats, draw_offset, _sampling_key(sampling))
        if not record and replay_key in self._replayed:
            rows = list(self._replayed[replay_key])
        else:
            batch = record and self.settings.batch
            if batch and not is_answering():  # a batch session never calls on its own
                raise JudgementMissing(f"{_relative(path)} was not recorded by the batch "
                                       "phase; resume it with:  pytest --record --batch "
                                       "--resume")  # fmt: skip
            spec = self.catalogue.catalog[case.judge]
            judged = subject or self.catalogue.subject(case)
            draws = range(draw_offset, draw_offset + repeats)
            calls = self.calls(case.model, record, run, draws, sampling, spec.team is not None)
            own_client = spec.team is not None and not record
            try:
                with replay_keys() if own_client else nullcontext():
                    rows = judge_in_cassette(
                        path, case.model,
                        lambda: [judge(spec, case.version, judged, c) for c in calls],
                        record=record, server_fingerprint=self.settings.server_fingerprint,
                        every_transport=spec.team is not None,
                    )  # fmt: skip
            except CassetteMiss as miss:
                raise self._missing(miss, case, run, repeats, rerecord) from None
            if not record:
                self._replayed[replay_key] = tuple(rows)
        if not replay_only and not in_live_phase():  # a phase journals its own rows
            self.journal.append(path, rows)
        return rows

    def _missing(
        self, miss: CassetteMiss, case: Case, run: str, repeats: int, rerecord: str
    ) -> JudgementMissing:
        """What the miss was, and what supplies the judgement: a re-record, an import."""
        path = miss.path
        rerecord = with_recording_options(rerecord, case.model, recorded_base_url(path))
        if miss.unreadable:
            return JudgementMissing(f"{miss.unreadable}.\nRe-record it with:  {rerecord}")
        state = miss.reason(case.model, repeats)
        kept = self.policy.kept_hint(case, _relative(path), run)
        return JudgementMissing(
            f"no recorded judgement for {case.judge} prompt {case.version} on {case.model} "
            f"(item {case.item_id}, run {run}): cassette {_relative(path)} {state}."
            + (kept or "\n" + missing_fix(case.model, rerecord))
        )

    def calls(
        self,
        model: ModelRef,
        live: bool,
        run: str,
        draws: range,
        sampling: Sampling | None,
        own_client: bool = False,
    ) -> list[Call]:
        """The settings of each repeat's call, in order. `own_client`: a callable judge,
        whose code calls its model itself (its backend only names the model: no key)."""
        backend = self.backends.get(model, live and not own_client)
        price = price_for(self.prices, model, live=live)
        return [
            Call(
                backend=backend,
                price=price,
                live=live,
                ledger=None if live and self.settings.batch else self.ledger,  # batch: on download
                is_fatal=is_replay_miss,
                run=run,
                repeat=repeat,
                draw=draw,
                sampling=sampling,
                timeout_s=self.settings.judge_timeout_s,
                tap=tapped,
                abandon=abandon,
            )
            for repeat, draw in enumerate(draws)
        ]


def _sampling_key(sampling: Sampling | None) -> str | None:
    return None if sampling is None else sampling.model_dump_json()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return -1.0


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# -- the accepted baselines, replayed ----------------------------------------------------


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
