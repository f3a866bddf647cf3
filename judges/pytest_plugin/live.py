"""What a live (`--record`) session needs before its first call: the paid-API keys present,
the cassette folder locked against a second live session, the embedded local judge started.

Errors are `LiveSetupError`s whose message the plugin shows as a usage error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judges.calls.backends import ModelRef, backend_of, embedded_server_key, missing_key
from judges.calls.cassettes import LOCK_FILE, lock_recording
from judges.pytest_plugin.session import JudgesSession
from judges.storage.files import FolderBusy, FolderLock

__all__ = [
    "LOCK_FILE", "Live", "LiveSetupError", "check_keys", "lock_cassettes",
    "needs_embedded_server", "selected_models", "serve_embedded", "start_embedded_server",
    "start_live",
]  # fmt: skip


class LiveSetupError(Exception):
    """A live session cannot start as asked."""


@dataclass
class Live:
    """What a live session holds until it ends: the cassette lock, the embedded judge."""

    lock: FolderLock | None = None
    server: Any = None

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        if self.lock is not None:
            self.lock.release()


def start_live(session: JudgesSession, worker: bool, options: tuple[str, str]) -> Live:
    """Check keys; in the controller, lock the cassettes. The embedded judge is not started
    here: only the record phase knows whether any call needs it (`serve_embedded`).
    `options`: the cassette-folder and base-URL options, named in errors."""
    check_keys(session)
    live = Live()
    if worker:  # the controller holds the lock
        return live
    if session.settings.base_url is None:
        check_embedded_models(session, options[1])
    live.lock = lock_cassettes(session.settings.cassettes, options[0])
    if session.settings.base_url is not None:
        from judges.calls.fingerprint import server_props

        fingerprint = server_props(session.settings.base_url)
        session.settings = replace(session.settings, server_fingerprint=fingerprint)
    return live


def selected_models(session: JudgesSession) -> list[ModelRef]:
    """The models the harness itself calls: a callable judge's code reaches its own model
    with its own key, so neither its key nor an embedded server is the harness's to check."""
    return list(session.settings.models) or [
        ModelRef.parse(spec.config.baseline_model)
        for spec in session.catalogue.catalog.values()
        if spec.team is None
    ]


def check_keys(session: JudgesSession) -> None:
    """A live run against a paid API without its key is a usage error, before any test."""
    for model in selected_models(session):
        variable = missing_key(model)
        if variable:
            raise LiveSetupError(
                f"--record with {model} needs {variable} in the environment; export it, or "
                "replay the recorded cassettes by running pytest without --record"
            )


def check_embedded_models(session: JudgesSession, option: str) -> None:
    """Without a base URL a local model is served by the embedded judge, which serves
    SmolLM2 alone: another local model would be recorded under its name with SmolLM2's
    replies. A usage error instead, naming the option that reaches its server."""
    from judges.calls.backends import LOCAL_DEFAULT_URL
    from judges.calls.local_server import EMBEDDED_MODEL

    for model in selected_models(session):
        if backend_of(model).starts_embedded_server and model.model != EMBEDDED_MODEL:
            raise LiveSetupError(
                f"--record with {model} needs the server that serves it: pass {option} URL "
                f"(e.g. {option} {LOCAL_DEFAULT_URL} for a llama.cpp server on its default "
                f"port); without it the embedded judge starts, and it serves "
                f"local:{EMBEDDED_MODEL} only"
            )


def lock_cassettes(cassettes: Path, option: str) -> FolderLock:
    """One live session per cassette folder: two would each record cassettes, and the
    results of only one would survive, so rows and cassettes would disagree."""
    try:
        return lock_recording(cassettes, "pytest --record")
    except FolderBusy as busy:
        raise LiveSetupError(
            f"another session ({busy.who}) is recording into or pinning {cassettes} (lock "
            f"file {busy.lock_file}); wait until it ends, or record into another folder "
            f"with {option} DIR"
        ) from None


def needs_embedded_server(session: JudgesSession, models: Iterable[ModelRef]) -> bool:
    """Whether a call to one of `models` (the harness's own) goes to the embedded judge."""
    if session.settings.base_url is not None:  # the user's server serves them all
        return False
    return any(backend_of(model).starts_embedded_server for model in models)


def serve_embedded(session: JudgesSession, live: Live, option: str) -> None:
    """Start the embedded judge for the calls about to be made, and point the session at it.
    Called by the record phase once it knows a call needs it: a `--record` run with nothing
    to record starts no server (and needs no local extra)."""
    live.server = start_embedded_server(session, option)
    from judges.calls.fingerprint import embedded_fingerprint
    from judges.calls.local_server import embedded_model_path

    fingerprint = embedded_fingerprint(embedded_model_path())
    session.settings = replace(
        session.settings, base_url=live.server.base_url, server_fingerprint=fingerprint
    )


def start_embedded_server(session: JudgesSession, option: str) -> Any:
    from judges.calls.local_server import LocalServerError, start_local_server

    try:
        api_key = embedded_server_key()
        return start_local_server(log_dir=session.settings.scratch, api_key=api_key)
    except LocalServerError as error:
        raise LiveSetupError(f"{error}. Or pass {option} URL.") from None
