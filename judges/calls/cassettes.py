"""The cassette facade: record or replay one judgement inside its cassette, with the judge's
fingerprint, and say why a replay missed. The only module that imports `judges.calls._vcr`.

- `in_cassette` opens a cassette (recorded afresh, or replayed: imported judgements straight
  from the file, every other judge through vcrpy and its SDK) and turns a replay's "no
  recorded response", and a file that cannot be read, into one `CassetteMiss`.
- `judge_in_cassette` judges one case's calls inside it and gives each row the fingerprint
  of the judge that answered: the pytest session and the finale both judge through here.
- `threaded_recording` / `answering` let a record phase's threads record at once, and a
  batch recording answer requests from downloaded replies.
- `write_imported_cassette` writes a release's judgements as a recording would have.
- `lock_recording` holds a cassette folder for one recording session at a time: the
  pytest `--record` session and `corpus judge --record` take the same lock.
- What a file holds, read without vcrpy (`judges.calls.cassette_files`): how many calls
  (`recorded_interactions`), which server recorded it (`recorded_base_url`), why it missed.

vcrpy is imported only when a cassette goes through it (`python -m judges report` and the
statistics never import it), hence the imports inside functions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from judges.calls import direct_replay
from judges.calls.backends import ModelRef, backend_of
from judges.calls.cassette_files import (
    FINGERPRINT_KEY,
    miss_reason,
    recorded_base_url,
    recorded_interactions,
)
from judges.calls.direct_replay import UnreadableCassette
from judges.storage.files import FolderLock, remove_stale_temporaries

# In the cassette folder; held by a recording session from start to end.
LOCK_FILE = ".judges-record.lock"

__all__ = [
    "FINGERPRINT_KEY",
    "LOCK_FILE",
    "CassetteMiss",
    "abandon",
    "answering",
    "fixture_replies",
    "in_cassette",
    "is_answering",
    "is_replay_miss",
    "judge_in_cassette",
    "miss_reason",
    "open_cassette",
    "recorded_base_url",
    "recorded_interactions",
    "tapped",
    "threaded_recording",
    "write_imported_cassette",
]


class CassetteMiss(Exception):
    """A replay found no recorded response in the cassette at `path`, or could not read it
    (`unreadable` then says why). Callers add what fixes it: a re-record, an import."""

    def __init__(
        self,
        path: Path,
        unreadable: str | None = None,
        changed: str | None = None,
        sent_uri: str | None = None,
    ) -> None:
        super().__init__(unreadable or f"cassette {path} holds no recorded response")
        self.path = path
        self.unreadable = unreadable
        self.changed = changed  # what differs from the closest recorded request, if known
        self.sent_uri = sent_uri  # the request's URI, when vcrpy says which missed

    def reason(self, model: ModelRef, repeats: int = 1) -> str:
        """Why the file had no answer, as precisely as it tells (`miss_reason`), and what
        changed in the request when vcrpy found the recorded one closest to it."""
        reason = miss_reason(self.path, model, repeats, self.sent_uri)
        return f"{reason} (in the request, {self.changed})" if self.changed else reason


@contextmanager
def open_cassette(
    path: Path, model: ModelRef, *, record: bool, every_transport: bool = False
) -> Iterator[Any]:
    """Replay or record one cassette: imported judgements straight from the file
    (`judges.calls.direct_replay`), every other judge through vcrpy and its SDK, a team's
    judge callable through every HTTP library vcrpy patches (`every_transport`). Errors
    pass through as they are; `in_cassette` names the misses."""
    if backend_of(model).replay_only and not record:
        with direct_replay.replaying(path) as replayed:
            yield replayed
        return
    from judges.calls import _vcr  # vcrpy is imported only when a cassette goes through it

    with _vcr.cassette(path, record=record, every_transport=every_transport) as recorded:
        yield recorded


@dataclass(frozen=True)
class Opened:
    """A cassette opened for one case's judgements."""

    recorded: Any  # vcrpy's cassette, or the direct replay of an imported one
    model: ModelRef
    record: bool

    def fingerprint(self, server: Mapping[str, str]) -> dict[str, str] | None:
        """The judge's fingerprint: stored in a new cassette (with `server`, what the server
        at the base URL said of itself, where a base URL applies), read back from a
        replayed one; None when no judge answered (e.g. the cost cap: nothing is written)."""
        from judges.calls import _vcr
        from judges.calls.fingerprint import from_responses

        if not self.record:
            return _vcr.stored_fingerprint(self.recorded)
        if not self.recorded.responses:
            return None
        found = {"backend": self.model.backend, "model": self.model.model}
        if backend_of(self.model).takes_base_url:  # the server at --judge-base-url answered
            found |= server
        found |= from_responses(response.get("body") for response in self.recorded.responses)
        _vcr.store_fingerprint(self.recorded, found)
        return found


@contextmanager
def in_cassette(
    path: Path, model: ModelRef, *, record: bool, every_transport: bool = False
) -> Iterator[Opened]:
    """Open the cassette at `path` for one case's calls (`Call.is_fatal = is_replay_miss`);
    a replay without a recorded response, or an unreadable file, raises `CassetteMiss`."""
    from judges.calls import _vcr

    try:
        with open_cassette(path, model, record=record, every_transport=every_transport) as found:
            yield Opened(found, model, record)
    except UnreadableCassette as error:
        raise CassetteMiss(path, str(error)) from None
    except Exception as error:
        if not is_replay_miss(error):
            raise
        raise CassetteMiss(
            path, changed=_vcr.request_change(error), sent_uri=_vcr.missed_uri(error)
        ) from None


class _Row(Protocol):
    fingerprint: dict[str, str] | None

    @property
    def status(self) -> str: ...


RowT = TypeVar("RowT", bound=_Row)


def judge_in_cassette(
    path: Path,
    model: ModelRef,
    judge: Callable[[], Sequence[RowT]],
    *,
    record: bool,
    server_fingerprint: Mapping[str, str],
    every_transport: bool = False,
) -> list[RowT]:
    """Run `judge` (one case's calls, through `judges.core.runner`, a layer above) inside
    its cassette, recorded or replayed, and give each row the fingerprint of the judge that
    answered; raise `CassetteMiss`. `every_transport`: the judge is a team's callable."""
    with in_cassette(path, model, record=record, every_transport=every_transport) as opened:
        rows = list(judge())
        fingerprint = opened.fingerprint(server_fingerprint)
        if every_transport and not record and all(row.status == "ok" for row in rows):
            from judges.calls import _vcr

            # A team's code that caught a missed request would answer without it.
            left = _vcr.unplayed(opened.recorded)
            if left:
                raise CassetteMiss(path, changed=left)
    for row in rows:
        row.fingerprint = fingerprint
    return rows


def is_replay_miss(error: BaseException) -> bool:
    """True for a replay's "no recorded response" (vcrpy's, or a direct replay's), also when
    an SDK wrapped it: the runner must not retry it (`Call.is_fatal`)."""
    from judges.calls import _vcr

    return _vcr.is_replay_miss(error)


def threaded_recording() -> AbstractContextManager[None]:
    """Let threads record their own cassettes at once (a record phase)."""
    from judges.calls import _vcr

    return _vcr.threaded_recording()


def answering(answer: Any) -> AbstractContextManager[None]:
    """Inside `threaded_recording`, answer this thread's requests with
    `answer(transport, request) -> response`, recorded as if the network had answered."""
    from judges.calls import _vcr

    return _vcr.answering(answer)


def is_answering() -> bool:
    """Whether this thread's requests are answered by `answering` (not sent anywhere)."""
    from judges.calls import _vcr

    return _vcr.is_answering()


def tapped() -> AbstractContextManager[list[Any]]:
    """The response bodies a team's judge callable gets inside the block, in this thread
    (recorded or replayed): what its calls used, for its row and the cost ledger."""
    from judges.calls import _vcr

    return _vcr.tapped()


def abandon(thread: threading.Thread) -> None:
    """A judge callable's thread that outlived its time (`Call.abandon`): from now on, no
    cassette records or answers what it sends, this judgement's or a later one's."""
    from judges.calls import _vcr

    _vcr.abandon(thread)


def fixture_replies(replies: list[str], model: str) -> AbstractContextManager[Any]:
    """Answer the requests sent inside the block with these reply texts, in order, in the
    provider's shape of each endpoint (chat completions, messages, responses): a reply
    fixture runs a team's judge code with no model and no network."""
    from judges.calls import _vcr

    return _vcr.fixture_replies(replies, model)


def write_imported_cassette(
    path: Path,
    exchanges: list[tuple[dict[str, Any], dict[str, Any]]],
    fingerprint: dict[str, str],
    uri: str,
) -> bool:
    """Write a cassette of (request body, response body) pairs, as a recording would have;
    return whether the file changed (an unchanged file is not rewritten)."""
    from judges.calls import _vcr

    return _vcr.write_cassette(path, exchanges, fingerprint, uri)


def lock_recording(
    cassettes: Path, purpose: str = "a recording", shared: bool = False
) -> FolderLock:
    """One recording session per cassette folder: two would each record cassettes, bill
    each call twice and overwrite each other's files. `baseline --accept` takes it
    `shared`: it excludes every recording (it must never pin a recording half replaced),
    not another acceptance. Raises `FolderBusy` naming the holder's pid and `purpose`;
    under an exclusive lock, the temporaries a killed writer left are removed."""
    lock = FolderLock(cassettes, LOCK_FILE)
    lock.acquire(purpose, shared)
    if not shared:
        remove_stale_temporaries(cassettes)  # no other writer is live
    return lock
