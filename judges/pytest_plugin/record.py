"""The pytest side of the record phase (`record_phase`): the check of its options, the hook
that runs it once collection is done, before the first test, and the one that reports what
it finished when the run is interrupted (Ctrl-C or SIGTERM, during the phase or after)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from judges.pytest_plugin.options import OPTION_BATCH, OPTION_RESUME
from judges.pytest_plugin.params import ITEM_FIXTURES, live_key, session_key


def pytest_configure(config: pytest.Config) -> None:
    batch, resume = config.getoption("judges_batch"), config.getoption("judges_resume")
    if (batch or resume) and config.getoption("judges_record") == "none":
        raise pytest.UsageError(f"{OPTION_BATCH} and {OPTION_RESUME} record: add --record")
    if resume and not batch:
        raise pytest.UsageError(
            f"{OPTION_RESUME} goes on with a batch recording: add {OPTION_BATCH}"
        )


def _needed(items: list[pytest.Item]) -> list[tuple[str, Any, str]]:

    needed = []
    for item in items:
        params = getattr(item, "callspec", None)
        for name, run in ITEM_FIXTURES.items():
            if params is not None and name in params.params:
                needed.append((run, params.params[name], item.nodeid))
    return needed


def _probes_needed(items: list[pytest.Item]) -> list[tuple[str, Any, str, str | None]]:
    """(run, case, test id, probe) of the bias probe tests (probe None: the noise redraw)."""
    from judges.sets.probes import NOISE_RUN

    needed = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "probe_case" in params:
            probe = params["probe_case"]
            needed.append((probe.run, probe.case, item.nodeid, probe.probe))
        elif "probe_noise_case" in params:
            needed.append((NOISE_RUN, params["probe_noise_case"], item.nodeid, None))
    return needed


def _writer(config: pytest.Config, tty: bool) -> Any:
    """Write past pytest's output capture, which is on during collection."""
    capture = config.pluginmanager.getplugin("capturemanager")

    def write(text: str, final: bool) -> None:
        with capture.global_and_fixture_disabled():
            end = "\n" if final or not tty else ""
            sys.stderr.write(("\r" if tty else "") + text + end)
            sys.stderr.flush()

    return write


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    from judges.calls.progress import Progress
    from judges.pytest_plugin import record_phase
    from judges.pytest_plugin.row_journal import phase_journal

    config = session.config
    judges = config.stash.get(session_key, None)
    if judges is None or not judges.settings.live or config.getoption("collectonly"):
        return
    settings = judges.settings
    journal = phase_journal(settings.scratch, settings.session_id)
    judgements = record_phase.gather(judges, _needed(session.items))
    judgements += record_phase.probe_judgements(judges, _probes_needed(session.items))
    if not judgements:  # nothing to call live (or the xdist controller, which collects none)
        return
    with record_phase.phase_lock(settings.scratch, settings.session_id) as first:
        if not first:
            judges.judging.prerecorded.update(journal.judgements())
            stopped = record_phase.stopped_file(journal)
            if stopped.is_file():  # the phase stopped on a judge that cannot be reached
                _stop(session, stopped.read_text(encoding="utf-8"))
            return
        if settings.batch:
            own = sorted(
                {j.case.judge for j in judgements if judges.catalogue.catalog[j.case.judge].team}
            )
            if own:
                raise pytest.UsageError(
                    f"{OPTION_BATCH} sends the harness's own requests through the providers' "
                    f"batch APIs; {', '.join(own)} call(s) a judge function that sends its "
                    f"own: record them without {OPTION_BATCH}, or deselect them with -k"
                )
            judges.judging.prerecorded.update(_batch_phase(config, judges, judgements, journal))
            return
        if not _serve_embedded(session, judges, judgements, journal):
            return
        concurrency = config.getoption("judges_concurrency")
        concurrency = concurrency or record_phase.default_concurrency(judgements)
        tty = sys.stderr.isatty()
        _writer(config, tty)(record_phase.plan_line(judges, judgements), True)
        progress = Progress(
            total=len(judgements),
            calls=sum(record_phase.calls_of(judges, j) for j in judgements),
            write=_writer(config, tty),
            spent=judges.ledger.spent_usd,
            cap_usd=settings.cost_cap_usd,
            tty=tty,
        )
        try:
            recorded = record_phase.record_all(
                judges, judgements, concurrency, progress, journal, lambda: _embedded(config)
            )
        except record_phase.ServerDown as down:
            record_phase.stopped_file(journal).write_text(str(down), encoding="utf-8")
            judges.judging.prerecorded.update(journal.judgements())
            _stop(session, str(down))
            return
        judges.judging.prerecorded.update(recorded)


def _serve_embedded(
    session: pytest.Session, judges: Any, judgements: list[Any], journal: Any
) -> bool:
    """Start the embedded judge if a judgement about to be called needs it (here, not at
    configure: a run with nothing to record starts no server); False if it cannot start,
    the run stopped as a dead server stops it."""
    from judges.pytest_plugin import record_phase
    from judges.pytest_plugin.live import LiveSetupError, needs_embedded_server, serve_embedded
    from judges.pytest_plugin.options import OPTION_BASE_URL

    own = [j.case.model for j in judgements if judges.catalogue.catalog[j.case.judge].team is None]
    if not needs_embedded_server(judges, own):
        return True
    try:
        serve_embedded(judges, session.config.stash[live_key], OPTION_BASE_URL)
    except LiveSetupError as error:
        record_phase.stopped_file(journal).write_text(str(error), encoding="utf-8")
        _stop(session, str(error))
        return False
    return True


def _stop(session: pytest.Session, message: str) -> None:
    """End the run before its tests, as Ctrl-C would: the rows recorded so far are reported
    (`pytest_sessionfinish`). An xdist worker may not exit (the controller would restart
    it): it stops after its first test and hands the message to the controller."""
    if hasattr(session.config, "workerinput"):
        session.shouldstop = message
        return
    pytest.exit(message)


def _embedded(config: pytest.Config) -> str | None:
    """What became of the embedded judge, if it serves this run; None for the user's server."""
    from judges.calls.local_server import server_log

    if config.getoption("judges_base_url"):
        return None
    server = getattr(config.stash.get(live_key, None), "server", None)
    if server is not None:  # this process started it
        return str(server.state())
    judges = config.stash[session_key]  # no server started here: name its log by URL
    url = judges.settings.base_url or ""
    return f"stopped answering; its log: {server_log(judges.settings.scratch, url)}"


def _batch_phase(
    config: pytest.Config, judges: Any, judgements: list[Any], journal: Any
) -> dict[Any, Any]:
    from judges.calls.backends import BackendError
    from judges.calls.batch.store import BatchStore
    from judges.pytest_plugin.batch_phase import DEFAULT_POLL_S, BatchError, BatchPhase, check_store

    store = BatchStore(judges.settings.cassettes)
    try:
        check_store(store, config.getoption("judges_resume"))
        phase = BatchPhase(
            judges,
            store,
            _writer(config, sys.stderr.isatty()),
            journal,
            poll_s=config.getoption("judges_batch_poll") or DEFAULT_POLL_S,
        )
        return phase.run(judgements)
    except (BatchError, BackendError) as error:
        raise pytest.UsageError(str(error)) from None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Interrupted, a phase may still be writing the judgements in flight (for up to its
    grace period): the controller waits for it before the session's end reads every row
    journal, so those rows reach the reports too."""
    from judges.pytest_plugin import record_phase

    judges = session.config.stash.get(session_key, None)
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
    if judges is None or not judges.settings.live or not interrupted:
        return
    if hasattr(session.config, "workerinput"):
        return
    settings = judges.settings
    record_phase.wait_for_phase(settings.scratch, settings.session_id, record_phase.GRACE_S + 5)
