"""The harness's hooks: parametrization, the session and the hooks that gather results.

The entry point (`judges.pytest_plugin.plugin`) declares the options and registers this
module once a run uses the harness; this module registers the record phase's hooks. Each
hook is a few lines handing off to `JudgesSession` (one per process, in `config.stash`).
Result rows reach the controlling process through the session's row journals
(`row_journal`), so reports are written once, by the controller.
"""

from __future__ import annotations

import contextlib
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from judges.calls.backends import BackendError
from judges.core.naming import Case
from judges.core.spec import SpecError, version_key
from judges.pytest_plugin import fixtures, record, reply_fixtures
from judges.pytest_plugin import probes as probing
from judges.pytest_plugin.accepted_failures import report_messages_only
from judges.pytest_plugin.invocation import (
    XPASS,
    accept_command,
    gates_skipped_lines,
    interrupt_on_termination,
    now_met_message,
    partial_selection,
    partially_selected,
    unrecorded_lines,
    weak_set_lines,
)
from judges.pytest_plugin.options import (
    CHECK,
    DEFAULT_PLANTED_SETS,
    INI_PLANTED_SETS,
    INI_PROMPTS,
    OPTION_BASE_URL,
    OPTION_CASSETTES,
    OPTION_MODEL,
    OPTION_REPEATS,
    RECORD_PHASE,
)
from judges.pytest_plugin.params import (
    CASE_FIXTURES,
    GATES_SKIPPED_PROPERTY,
    ITEM_FIXTURES,
    REPLY_PROPERTY,
    SET_FIXTURES,
    SetCase,
    case_id,
    item_params,
    last_row_key,
    live_key,
    session_key,
    set_params,
)
from judges.pytest_plugin.session import JudgesSession, RecordMode, Settings
from judges.pytest_plugin.session.catalogue import run_preflight
from judges.reports.sections.reply_fixtures import ReplyCheck, short_message
from judges.sets.items import PlantedSetError
from judges.storage.files import remove_stale_temporaries

signals_key = pytest.StashKey[dict[int, Any]]()
snapshots_key = pytest.StashKey[list[str]]()
restore_network_key = pytest.StashKey[Any]()


def pytest_configure(config: pytest.Config) -> None:
    # Runs in every process, xdist workers included: each maps the flags itself.
    if not config.pluginmanager.is_registered(record):  # None when blocked with -p no:
        config.pluginmanager.register(record, RECORD_PHASE)
    workerinput = getattr(config, "workerinput", {})
    session = _open_session(config, _settings(config, workerinput))
    if session.settings.live:
        _start_live(config, session, bool(workerinput))
    elif session.catalogue.planted_sets:
        # Only a judges suite (one with planted sets) goes offline; the plugin is installed
        # for every pytest run in the environment and must leave other projects alone.
        from judges.calls.network import block_network

        config.stash[restore_network_key] = block_network()
    if not workerinput:
        # A killed run (SIGKILL, power loss) can leave its temporary files behind.
        remove_stale_temporaries(session.settings.reports)
        if session.catalogue.planted_sets:
            config.stash[signals_key] = interrupt_on_termination()
    _register_plugins(config, session)


def _settings(config: pytest.Config, workerinput: dict[str, Any]) -> Settings:
    rootdir = Path(config.rootpath)
    return Settings(
        rootdir=rootdir,
        record=RecordMode(config.getoption("judges_record")),
        models=tuple(config.getoption("judges_models")),
        base_url=workerinput.get("judges_base_url") or config.getoption("judges_base_url"),
        cost_cap_usd=config.getoption("judges_cost_cap"),
        price_files=tuple(config.getoption("judges_prices")),
        cassettes=(config.getoption("judges_cassettes") or rootdir / "cassettes").absolute(),
        planted_sets=rootdir / (config.getini(INI_PLANTED_SETS) or DEFAULT_PLANTED_SETS),
        prompts=rootdir / prompts if (prompts := config.getini(INI_PROMPTS)) else None,
        reports=(config.getoption("judges_reports") or rootdir / "reports").absolute(),
        noise_repeats=config.getoption("judges_noise_repeats"),
        rerecord_options=rerecord_options(config),
        server_fingerprint=json.loads(workerinput.get("judges_server_fingerprint", "{}")),
        judge_timeout_s=config.getoption("judges_timeout"),
        batch=config.getoption("judges_batch"),
        rerecord_baseline=config.getoption("judges_rerecord_baseline"),
        **({"session_id": workerinput["judges_session_id"]} if workerinput else {}),
    )


def _open_session(config: pytest.Config, settings: Settings) -> JudgesSession:
    """The session, stashed, with its inputs checked once before any judge call: bad input is
    a usage error, not a traceback."""
    try:
        session = JudgesSession(settings)
    except BackendError as error:
        raise pytest.UsageError(str(error)) from None
    session.partial_selection = partial_selection(config)
    config.stash[session_key] = session
    try:
        session.catalogue.planted_sets  # noqa: B018
        session.catalogue.probe_sets  # noqa: B018
        run_preflight(session.catalogue, session.settings)
    except (PlantedSetError, SpecError) as error:
        raise pytest.UsageError(str(error)) from None
    return session


def _start_live(config: pytest.Config, session: JudgesSession, worker: bool) -> None:
    from judges.pytest_plugin.live import LiveSetupError, start_live

    try:
        options = (OPTION_CASSETTES, OPTION_BASE_URL)
        config.stash[live_key] = start_live(session, worker, options)
    except LiveSetupError as error:  # pytest_unconfigure still runs: it frees the lock
        raise pytest.UsageError(str(error)) from None


def _register_plugins(config: pytest.Config, session: JudgesSession) -> None:
    if not config.pluginmanager.is_registered(fixtures):
        config.pluginmanager.register(fixtures, "judges-fixtures")
    config.pluginmanager.register(_ResultCollector(session), "judges-collector")
    if config.pluginmanager.hasplugin("xdist"):
        from judges.pytest_plugin.scheduling import XdistHooks

        config.pluginmanager.register(XdistHooks(session), "judges-xdist")


def rerecord_options(config: pytest.Config) -> tuple[str, ...]:
    """The options this session was started with that a re-record command must repeat."""
    options: list[str] = []
    for model in config.getoption("judges_models"):
        options += [OPTION_MODEL, str(model)]
    if config.getoption("judges_base_url"):  # the user's server, not the embedded one
        options += [OPTION_BASE_URL, config.getoption("judges_base_url")]
    if config.getoption("judges_cassettes"):
        options += [OPTION_CASSETTES, str(config.getoption("judges_cassettes"))]
    if config.getoption("judges_noise_repeats"):
        options += [OPTION_REPEATS, str(config.getoption("judges_noise_repeats"))]
    return tuple(options)


def pytest_unconfigure(config: pytest.Config) -> None:
    for signum, handler in config.stash.get(signals_key, {}).items():
        signal.signal(signum, handler)
    live = config.stash.get(live_key, None)
    if live is not None:
        live.stop()
    restore = config.stash.get(restore_network_key, None)
    if restore is not None:
        restore()
    session = config.stash.get(session_key, None)
    if session is not None and not hasattr(config, "workerinput"):  # workers are gone by now
        remove_scratch(session.settings.scratch, session.settings.session_id)


def remove_scratch(scratch: Path, session_id: str) -> None:
    """The session's scratch files (ledger, limits, record phase), and the folder if empty:
    kept only while the session holds them, never left for `git add -A` to stage."""
    if not scratch.is_dir():
        return
    for path in scratch.glob(f"*-{session_id}.*"):
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # not empty: another session's, or a server log
        scratch.rmdir()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    session = metafunc.config.stash[session_key]
    for name, build in {**probing.PARAMS, **reply_fixtures.PARAMS}.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, build(session, lambda case: case_id(session, case)))
    for name, run in ITEM_FIXTURES.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, item_params(session, run))
    for name, run in SET_FIXTURES.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, set_params(session, run))


_RUN_ORDER = {run: order for order, run in enumerate(ITEM_FIXTURES.values())}


def pytest_collection_finish(session: pytest.Session) -> None:
    """Refuse `--snapshot-update` on part of a snapshot module: syrupy would delete the rest."""
    if not session.config.getoption("update_snapshots", False):
        return
    selected = {item.nodeid for item in session.items}
    partial = partially_selected(session.config.stash.get(snapshots_key, []), selected)
    if partial:
        session.config.option.update_snapshots = False  # syrupy reads it at the end: no deletion
        raise pytest.UsageError(
            f"--snapshot-update on part of {', '.join(partial)} would delete the snapshots of "
            "the tests not selected. Run the judge's whole selection with --snapshot-update "
            "(no -k, --lf or node ids), e.g. pytest regression_tests --snapshot-update"
        )


def _judged_case(params: Any) -> tuple[str, Case] | None:
    """(run, case) of an item test's parameters; None for set-level tests."""
    if params is None:
        return None
    for name, run in ITEM_FIXTURES.items():
        if name in params.params:
            return run, params.params[name]
    return probing.judged_case(params.params)


# Every value the plugin parametrizes its fixtures with; pytest fills an empty
# parametrization (a set with no panel, no probes) with a placeholder of another type.
_OUR_VALUES = (Case, SetCase, probing.ProbeCase, reply_fixtures.ReplyCase)
_OUR_FIXTURES = frozenset({*CASE_FIXTURES, *probing.PARAMS, *reply_fixtures.PARAMS})


def _runs_nothing(item: pytest.Item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any(k in _OUR_FIXTURES and not isinstance(v, _OUR_VALUES) for k, v in params.items())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    session = config.stash[session_key]
    # A test of a run no planted set names (no panel, no probes) has nothing to run: it is
    # left out, as an unused fixture would be, not reported as an "empty parameter set".
    empty = [item for item in items if _runs_nothing(item)]
    if empty:
        config.hook.pytest_deselected(items=empty)
        items[:] = [item for item in items if not _runs_nothing(item)]
    # Before -k or node ids deselect anything: set-level tests name the item test that
    # re-records a case, even when that test is not selected in this run.
    for item in items:
        params = getattr(item, "callspec", None)
        judged = _judged_case(params)
        if judged is not None:
            session.recorders[judged] = item.nodeid
        # What record_property would add, here so that skipped and xfailed tests carry it.
        cases = [v for k, v in getattr(params, "params", {}).items() if k in CASE_FIXTURES]
        if cases:
            item.user_properties.extend(session.outputs.case_properties(cases[0]))
        elif "reply_case" in getattr(params, "params", {}):
            item.user_properties.append((REPLY_PROPERTY, _reply_property(item, params)))
        elif judged is not None:  # a probe: judge, version and model (its item is derived)
            case = judged[1]
            item.user_properties += [
                ("judge", case.judge), ("prompt_version", case.version), ("model", str(case.model))
            ]  # fmt: skip
    report_messages_only(config, items)
    snapshot_tests = [i.nodeid for i in items if "snapshot" in getattr(i, "fixturenames", ())]
    config.stash[snapshots_key] = snapshot_tests
    if not session.settings.live:
        return

    # Live runs: judgements of one item run back to back, so consecutive prompts share
    # their long prefix (the item's texts) and a local server reuses its prompt cache.
    def order(item: pytest.Item) -> tuple[Any, ...]:
        judged = _judged_case(getattr(item, "callspec", None))
        if judged is None:
            return (1,)
        run, case = judged
        rank = _RUN_ORDER.get(run, len(_RUN_ORDER))  # probes after every planted run
        return (0, case.judge, case.item_id, version_key(case.version), rank, run)

    items.sort(key=order)


# -- gathering and reporting ---------------------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and str(report.longrepr).startswith(XPASS):
        session = item.config.stash.get(session_key, None)
        row = item.stash.get(last_row_key, None)
        if session is not None and row is not None:
            planted = session.catalogue.planted_sets.get(row.judge)
            if planted is not None:
                accept = None
                if (row.model, row.prompt_version) in planted.pins:
                    accept = accept_command(session.settings, row.judge, row.prompt_version)
                expectations = planted.folder.expectations_path
                report.longrepr = now_met_message(row, expectations, accept)


def _reply_property(item: pytest.Item, params: Any) -> dict[str, Any]:
    case = params.params["reply_case"]
    check = (
        "property" if getattr(item, "originalname", "") == "test_reply_properties" else "fixture"
    )
    return {"judge": case.judge, "version": case.version, "fixture": case.fixture.id,
            "control": case.fixture.control, "check": check}  # fmt: skip


def _reply_check(report: pytest.TestReport, found: dict[str, Any]) -> ReplyCheck:
    """A reply-fixture test's outcome, with the first line of why it failed or skipped."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        why = str(crash.message).removeprefix("AssertionError: ")  # the harness's own message
    elif isinstance(report.longrepr, tuple):  # a skip: (path, line, "Skipped: reason")
        why = str(report.longrepr[2]).removeprefix("Skipped: ")
    else:
        why = ""
    return ReplyCheck(
        fixture=found["fixture"], check=found["check"], control=found["control"],
        outcome=report.outcome, message=short_message(why) if not report.passed else "",
    )  # fmt: skip


class _ResultCollector:
    """Gathers what tests attached to their reports: why gates were skipped, and the
    outcomes of reply fixtures (the rows travel in the row journals)."""

    def __init__(self, session: JudgesSession) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and report.skipped):
            properties = report.user_properties
            for name, value in properties:
                if name == GATES_SKIPPED_PROPERTY:
                    self.session.gates_skipped.append(str(value))
                if name == REPLY_PROPERTY and isinstance(value, dict):
                    check = _reply_check(report, value)
                    self.session.gathered.add_reply_check(value["judge"], value["version"], check)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Build the session's one outcome (reports written or checked, the summary, notices,
    GitHub output); the terminal summary and the exit status only render it."""
    if hasattr(session.config, "workerinput"):
        return
    judges_session = session.config.stash.get(session_key, None)
    if judges_session is None:
        return
    outcome = judges_session.finish(
        session.config.getoption(CHECK), lambda: _notices(judges_session)
    )
    failed = outcome.reports_out_of_date or outcome.cost_cap_exceeded or outcome.unreasoned
    if failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if outcome.interrupted:
        session.exitstatus = pytest.ExitCode.INTERRUPTED


def _notices(judges_session: JudgesSession) -> list[str]:
    """What the run skipped, kept or could not judge, each with its fix."""
    notices = judges_session.gathered.damaged + gates_skipped_lines(judges_session.gates_skipped)
    notices += judges_session.baselines.lines() + judges_session.rerecorded
    if not judges_session.settings.live and judges_session.catalogue.planted_sets:
        notices += unrecorded_lines(judges_session)
    return notices + weak_set_lines(judges_session)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    judges_session = config.stash.get(session_key, None)
    outcome = None if judges_session is None else judges_session.outcome
    if outcome is None or outcome.silent:  # an xdist worker, or a run that judged nothing
        return
    terminalreporter.section("judges")
    for line, markup in outcome.terminal_lines():
        terminalreporter.write_line(line, **markup)
