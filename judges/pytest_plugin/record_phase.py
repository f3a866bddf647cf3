"""The record phase: before the tests of a `--record` run, every judgement they need that
must be called live is called concurrently, at most `--judge-concurrency` in flight.

Each judgement runs exactly as its test would run it (`Judging.judge_case`, the same
cassette, repeats in order), in a thread of its own; `cassettes.threaded_recording` sends each
thread's requests to its own cassette, so the files are those of a sequential recording.
The rows are kept (in the session, and in the phase's row journal for the other xdist
workers, `row_journal`) and the tests then take them instead of calling again. A phase cut
short by Ctrl-C or SIGTERM still reports what finished: the session's end reads every
journal of the session. Under
xdist every worker collects the same items: the first to take the phase's lock records for
all, the others wait and read rows.

A judge that cannot be reached stops the phase within seconds (`ServerWatch`): a refused key
or a path the server does not serve at the first judgement that meets it, a refused or
failed connection at the second in a row, none answered between (each judgement has tried
its calls `LIVE_RETRIES + 1` times already). The rows already recorded are kept, and
`ServerDown` says which URL, what error, and the fix.
"""

from __future__ import annotations

import fcntl
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from judges.calls.backends import (
    HOSTED_CONCURRENCY,
    NO_ROUTE,
    UNAUTHORISED,
    UNREACHABLE,
    ModelRef,
    backend_of,
)
from judges.calls.cassettes import threaded_recording
from judges.calls.credentials import scrub
from judges.calls.progress import Progress
from judges.core.naming import Case
from judges.core.results import JudgementRow
from judges.core.runner import Subject
from judges.pytest_plugin.invocation import record_missing_command, rerecord_command
from judges.pytest_plugin.row_journal import RowJournal
from judges.pytest_plugin.session import JudgesSession, RunPlan
from judges.pytest_plugin.session.judging import live_phase
from judges.sets.probes import NOISE_DRAW

GRACE_S = 10.0  # after Ctrl-C, how long the calls in flight may still finish
# Judgements in a row, none answered between, whose error no later call gets past, that stop
# the phase: a refused key or a missing route is the server's own answer, so the first; a
# connection refused or cut can be a server restarting, so the second.
STOP_AFTER = {UNAUTHORISED: 1, NO_ROUTE: 1, UNREACHABLE: 2}


class ServerDown(Exception):
    """The judge server cannot be reached: the phase stopped; the message says what to do."""


@dataclass
class ServerWatch:
    """Counts the judgements in a row that ended on an error no retry gets past. The record
    phase's threads report to it as each judgement ends, and start none once it tripped:
    how many run before the stop does not depend on when the main thread looks."""

    kind: str | None = None
    count: int = 0
    row: JudgementRow | None = None
    tripped: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def finished(self, rows: Sequence[JudgementRow]) -> bool:
        """One judgement's rows; True when the phase must stop."""
        with self._lock:
            failed = next((row for row in rows if row.error_kind in STOP_AFTER), None)
            if failed is None:  # the server answered (whatever it said)
                if rows and not self.tripped:
                    self.kind, self.count = None, 0
                return self.tripped
            if failed.error_kind != self.kind:
                self.kind, self.count = failed.error_kind, 0
            self.count += 1
            self.row = failed
            self.tripped = self.tripped or self.count >= STOP_AFTER[self.kind or UNREACHABLE]
            return self.tripped


@dataclass(frozen=True)
class Judgement:
    """One cassette to record: a case under one run's plan, and the test that needs it."""

    case: Case
    run: str
    plan: RunPlan
    nodeid: str
    path: Path
    subject: Subject | None = None  # a bias probe's inputs instead of the planted item's

    def judge(self, session: JudgesSession) -> list[JudgementRow]:
        """Judge it exactly as its test would: same cassette, repeats and draws in order;
        here, and in the batch phase through this method, live where the test replays."""
        with live_phase():
            return session.judging.judge_case(
                self.case,
                rerecord=rerecord_command(self.nodeid),
                run=self.run,
                repeats=self.plan.repeats_for(self.case.version),
                draw_offset=self.plan.draw_offset,
                sampling=self.plan.sampling,
                subject=self.subject,
            )


def stopped_file(journal: RowJournal) -> Path:
    """Beside the phase's journal: why it stopped early (`ServerDown`), for the other
    processes."""
    return journal.path.with_suffix(".stopped")


def default_concurrency(judgements: Sequence[Judgement]) -> int:
    """The fewest calls in flight any of the judgements' backends takes (a local server: one)."""
    return min(
        (backend_of(j.case.model).concurrency for j in judgements), default=HOSTED_CONCURRENCY
    )


def gather(session: JudgesSession, needed: Sequence[tuple[str, Case, str]]) -> list[Judgement]:
    """The judgements (run, case, test id) that must be called live, once each, in order."""
    seen: set[Path] = set()
    judgements = []
    for run, case, nodeid in needed:
        path = case.cassette(session.settings.cassettes, run)
        plan = session.catalogue.run_plan(session.catalogue.planted_sets[case.judge], run)
        if path in seen or not session.policy.should_record(
            path, plan.repeats_for(case.version), case, run
        ):
            continue
        seen.add(path)
        judgements.append(Judgement(case, run, plan, nodeid, path))
    return judgements


def probe_judgements(
    session: JudgesSession, needed: Sequence[tuple[str, Case, str, str | None]]
) -> list[Judgement]:
    """The bias probes' judgements (run, case, test id, probe; no probe: the probes' noise
    redraw) that must be called live, once each, in order: called with the planted ones."""
    seen: set[Path] = set()
    found = []
    for run, case, nodeid, probe in needed:
        path = case.cassette(session.settings.cassettes, run)
        if path in seen or not session.policy.should_record(path, 1, case, run):
            continue
        seen.add(path)
        subject = None
        plan = RunPlan(run, (case.version,), (), draw_offset=NOISE_DRAW)
        if probe is not None:
            clean = session.catalogue.planted_sets[case.judge].item(case.item_id)
            subject = (
                session.catalogue.probe_sets[case.judge].item(probe, case.item_id).subject(clean)
            )
            plan = RunPlan(run, (case.version,), ())
        found.append(Judgement(case, run, plan, nodeid, path, subject))
    return found


def calls_of(session: JudgesSession, judgement: Judgement) -> int:
    """The calls one judgement makes: a call per facet, per repeat (retries aside)."""
    repeats = judgement.plan.repeats_for(judgement.case.version)
    return repeats * (len(session.catalogue.catalog[judgement.case.judge].config.facets) or 1)


def plan_line(session: JudgesSession, judgements: Sequence[Judgement]) -> str:
    """What the phase will call, per run, before the first call: a new prompt version gets
    every run of its judge, and this says what that costs in calls."""
    cassettes: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for judgement in judgements:
        cassettes[judgement.run] += 1
        calls[judgement.run] += calls_of(session, judgement)
    runs = ", ".join(
        f"{run} {calls[run]}"
        + (f" ({cassettes[run]} cassettes)" if calls[run] > cassettes[run] else "")
        for run in cassettes
    )
    models = ", ".join(sorted({str(j.case.model) for j in judgements}))
    return f"judges record: {sum(calls.values())} calls to make on {models}: {runs}"


def _judge(
    session: JudgesSession, judgement: Judgement, stop: threading.Event, watch: ServerWatch
) -> list[JudgementRow]:
    if stop.is_set() or watch.tripped:  # Ctrl-C, or a judge out of reach: send nothing new
        return []
    rows = judgement.judge(session)
    watch.finished(rows)
    return rows


def record_all(
    session: JudgesSession,
    judgements: Sequence[Judgement],
    concurrency: int,
    progress: Progress,
    journal: RowJournal,
    embedded: Callable[[], str | None] = lambda: None,
) -> dict[Path, list[JudgementRow]]:
    """Call every judgement, `concurrency` at a time; each finished one is appended to the
    phase's `journal`. Ctrl-C stops sending, waits up to GRACE_S for the calls in flight,
    keeps what finished and raises KeyboardInterrupt again; a judge that cannot be reached
    (`ServerWatch`) does the same and raises `ServerDown`.

    A team's judge callable sends through any HTTP library, which vcrpy patches per
    process, not per thread: its judgements are called one at a time, after the others."""
    recorded: dict[Path, list[JudgementRow]] = {}
    watch = ServerWatch()
    pooled: list[Judgement] = []
    own: list[Judgement] = []  # a team's callable's: one at a time, after the pool
    for judgement in judgements:
        (pooled if session.catalogue.catalog[judgement.case.judge].team is None else own).append(
            judgement
        )
    try:
        if pooled:
            _record_pooled(session, pooled, concurrency, progress, journal, recorded, watch)
        for judgement in own:
            done: Future[list[JudgementRow]] = Future()
            try:
                done.set_result(judgement.judge(session))
            except Exception as error:  # kept as the pool keeps it: its test shows the error
                done.set_exception(error)
            rows = _keep(session, judgement, done, recorded, progress, journal)
            progress.tick()
            if watch.finished(rows):
                raise ServerDown()
    except ServerDown:
        progress.tick(final=True)
        done_count, total = len(recorded), len(judgements)
        raise ServerDown(stop_message(session, watch, done_count, total, embedded())) from None
    except KeyboardInterrupt:
        progress.tick(final=True)
        raise
    progress.tick(final=True)
    return recorded


def _record_pooled(
    session: JudgesSession,
    judgements: Sequence[Judgement],
    concurrency: int,
    progress: Progress,
    journal: RowJournal,
    recorded: dict[Path, list[JudgementRow]],
    watch: ServerWatch,
) -> None:
    """The harness's own judges' judgements, from a thread pool (`threaded_recording`);
    Ctrl-C or a judge that cannot be reached stops it, keeping what finished."""
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judges-record")
    with threaded_recording():
        futures = {pool.submit(_judge, session, j, stop, watch): j for j in judgements}
        pending: set[Future] = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in finished:
                    _keep(session, futures[future], future, recorded, progress, journal)
                progress.tick()
                if watch.tripped:
                    raise ServerDown()
        except (KeyboardInterrupt, ServerDown):
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            # Only the calls in flight: a future cancelled by shutdown() never counts as done
            # for wait(), which would then sit out the whole grace period.
            running = {future for future in pending if not future.cancelled()}
            finished, _ = wait(running, timeout=GRACE_S)
            for future in finished:
                _keep(session, futures[future], future, recorded, progress, journal)
            raise
        pool.shutdown()


def _keep(
    session: JudgesSession,
    judgement: Judgement,
    future: Future,
    recorded: dict[Path, list[JudgementRow]],
    progress: Progress,
    journal: RowJournal,
) -> list[JudgementRow]:
    """A judgement that raised is not kept: its test calls it again and shows the error."""
    error = future.exception()
    rows: list[JudgementRow] = [] if error is not None else future.result()
    if error is None and not rows:  # not sent: Ctrl-C came first
        return rows
    if rows:
        recorded[judgement.path] = rows
        journal.append(judgement.path, rows)
    failed = error is not None or any(r.status != "ok" for r in rows)
    progress.finished(failed, calls_of(session, judgement))
    return rows


def stop_message(
    session: JudgesSession,
    watch: ServerWatch,
    done: int,
    total: int,
    embedded: str | None = None,
) -> str:
    """Why the phase stopped (the URL, the model, the error), the fix, and the command that
    records the rest once it is fixed. `embedded`: what became of the embedded judge (its
    exit status, its log), when it served the run."""
    settings = session.settings
    row = watch.row
    model = row.model if row is not None else "?"
    error = row.error if row is not None else "?"
    kind = backend_of(ModelRef.parse(model)) if row is not None else None
    team = session.catalogue.catalog[row.judge].team if row is not None else None
    user_url = "--judge-base-url" in settings.rerecord_options
    url = settings.base_url or "its default URL"
    # A provider's own API: the SDK's default URL (or its environment's), not a server here.
    hosted = kind is not None and kind.key_required and not settings.base_url
    where = f"the judge at {url}"
    if team is not None:  # the team's own client chose the server
        where = f"the server {team.ref} calls"
    elif hosted and kind is not None:
        where = f"the judge {kind.served}"
    if watch.kind == UNAUTHORISED:
        variable = kind.key_variable if kind is not None else None
        fix = "The server refused the key" + (
            f": set {variable} to the key it expects." if variable else "."
        )
    elif team is not None:
        fix = (
            f"Start the server {team.ref} calls, or set the URL and key its client reads "
            "(for the OpenAI and Anthropic SDKs: OPENAI_BASE_URL / OPENAI_API_KEY, "
            "ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY)."
        )
    elif watch.kind == NO_ROUTE:
        fix = (
            f"The server has no such path: an OpenAI-compatible server serves its API under "
            f"/v1, so pass --judge-base-url {url.rstrip('/')}/v1."
            if not url.rstrip("/").endswith("/v1")
            else "The server has no such path: check --judge-base-url."
        )
    elif hosted:
        fix = (
            "It cannot be reached from this machine: check the network, a proxy, and the "
            "base URL its SDK reads from the environment."
        )
    elif user_url or embedded is None or (kind is not None and not kind.starts_embedded_server):
        fix = (
            f"Start the judge server at {url} (`curl {url.rstrip('/')}/models` lists its "
            "models), or pass the URL it listens on with --judge-base-url URL."
        )
    else:
        fix = f"The embedded judge (llama.cpp) {embedded}."
    command = record_missing_command(settings.rerecord_options)
    return scrub(
        f"judges record: stopped after {done} of {total} judgements: {where} "
        f"({model}) cannot be reached: {error}\n{fix}\nThe rows of the {done} that finished "
        f"are kept; once it answers, record the rest with:  {command}"
    )


@contextmanager
def phase_lock(scratch: Path, session_id: str) -> Iterator[bool]:
    """Held by the process that records; yields True to the first one only (xdist workers
    all collect the same items, so one phase serves them all)."""
    scratch.mkdir(parents=True, exist_ok=True)
    done = scratch / f"record-phase-{session_id}.done"
    with (scratch / f"record-phase-{session_id}.lock").open("a") as stream:
        fcntl.flock(stream, fcntl.LOCK_EX)
        try:
            first = not done.exists()
            yield first
            done.touch()
        finally:
            fcntl.flock(stream, fcntl.LOCK_UN)


def wait_for_phase(scratch: Path, session_id: str, timeout_s: float) -> bool:
    """Wait, at most `timeout_s`, until no process records this session's phase (an xdist
    worker cut short lets its calls in flight finish); False if it did not end in time."""
    lock = scratch / f"record-phase-{session_id}.lock"
    if not lock.is_file():
        return True
    deadline = time.monotonic() + timeout_s
    with lock.open("a") as stream:
        try:
            while True:
                try:
                    fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        return False
                    time.sleep(0.1)
                else:
                    fcntl.flock(stream, fcntl.LOCK_UN)
                    return True
        except KeyboardInterrupt:  # a second Ctrl-C: report what is there now
            return False
