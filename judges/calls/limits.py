"""Rate limits of live calls, for the whole session.

- Pauses the provider asks for: a 429 or 529 reply pauses every call to that model until
  its `Retry-After` (or `retry-after-ms`) has passed, or 1 s without one. Pauses are kept
  in a file under an fcntl lock, so every xdist worker and every thread waits them out.
- Ceilings: `rpm` (requests) and `tpm` (tokens) per minute, optional keys of a model's table
  in the price files. The calls sent in the last window are kept in the same locked file, so
  the ceilings hold for the whole session, across xdist workers and threads; tokens are
  estimated before the call as prompt bytes / 4 + `max_tokens`.
"""

from __future__ import annotations

import fcntl
import json
import threading
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from judges.calls.backends import DEFAULT_PRICES, Backend, BackendError, JudgeRequest, JudgeResponse

DEFAULT_PAUSE_S = 1.0
MAX_PAUSE_S = 120.0  # a longer Retry-After is not believed: the judgement's budget ends first
_STEP_S = 0.05


@dataclass(frozen=True)
class Ceiling:
    rpm: int | None = None
    tpm: int | None = None


def load_ceilings(*paths: Path) -> dict[str, Ceiling]:
    """`rpm` and `tpm` of each model's price table; later files override earlier ones."""
    ceilings: dict[str, Ceiling] = {}
    for path in (DEFAULT_PRICES, *paths):
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("models", {})
        for model, row in table.items():
            values = {key: row[key] for key in ("rpm", "tpm") if key in row}
            for key, value in values.items():
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise BackendError(
                        f'{path}: [models."{model}"] {key} = {value!r} must be a whole number '
                        "of 1 or more (per minute); remove it for no ceiling"
                    )
            if values:
                ceilings[model] = Ceiling(**values)
    return ceilings


def retry_after(error: BaseException) -> float | None:
    """Seconds the server asked to wait (`retry-after-ms`, `retry-after`: seconds or date)."""
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        if value.strip().replace(".", "", 1).isdigit():
            return float(value)
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


@dataclass
class Limiter:
    """Pauses and ceilings for every process of a session, kept in one locked JSON file:
    `{"pauses": {model: until}, "sent": {model: [[time, tokens], ...]}}` (wall-clock times,
    which every process shares)."""

    path: Path
    ceilings: dict[str, Ceiling] = field(default_factory=dict)
    window_s: float = 60.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def _shared(self) -> Iterator[dict[str, Any]]:
        """The session's state under an exclusive lock; written back if it changed."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self.path.open("a+", encoding="utf-8") as stream:
            fcntl.flock(stream, fcntl.LOCK_EX)
            try:
                stream.seek(0)
                text = stream.read()
                state = _state(text)
                yield state
                changed = json.dumps(state, sort_keys=True)
                if changed != text:
                    stream.seek(0)
                    stream.truncate()
                    stream.write(changed)
                    stream.flush()
            finally:
                fcntl.flock(stream, fcntl.LOCK_UN)

    def pause(self, model: str, seconds: float) -> None:
        """Hold every call to `model`, in every process of the session, for `seconds`."""
        until = time.time() + min(max(seconds, 0.0), MAX_PAUSE_S)
        with self._shared() as state:
            pauses = state["pauses"]
            pauses[model] = max(pauses.get(model, 0.0), until)

    def _ceiling_wait(self, state: dict[str, Any], model: str, tokens: int, now: float) -> float:
        """Seconds until one more call of `tokens` fits the ceilings (0: now; records it)."""
        ceiling = self.ceilings.get(model, Ceiling())
        if ceiling.rpm is None and ceiling.tpm is None:
            return 0.0
        sent = [entry for entry in state["sent"].get(model, []) if entry[0] > now - self.window_s]
        state["sent"][model] = sent
        if ceiling.rpm is not None and len(sent) >= ceiling.rpm:
            return sent[0][0] + self.window_s - now
        if ceiling.tpm is not None and sent and sum(n for _, n in sent) + tokens > ceiling.tpm:
            return sent[0][0] + self.window_s - now
        sent.append([now, tokens])
        return 0.0

    def acquire(self, model: str, tokens: int) -> None:
        """Wait until a call to `model` may be sent."""
        while True:
            with self._shared() as state:
                now = time.time()
                paused = state["pauses"].get(model, 0.0) - now
                # The provider asked the whole session to wait: nothing is sent meanwhile.
                wait = paused if paused > 0 else self._ceiling_wait(state, model, tokens, now)
            if wait <= 0:
                return
            time.sleep(min(max(wait, _STEP_S), 1.0))

    def wrap(self, backend: Backend) -> Backend:
        return LimitedBackend(backend, self)


def _state(text: str) -> dict[str, Any]:
    """The shared state read from its file; an empty or damaged file is a fresh state."""
    try:
        state = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        state = {}
    if not isinstance(state, dict):
        state = {}
    pauses = state.get("pauses")
    sent = state.get("sent")
    return {
        "pauses": pauses if isinstance(pauses, dict) else {},
        "sent": sent if isinstance(sent, dict) else {},
    }


def estimated_tokens(request: JudgeRequest) -> int:
    return len((request.system + request.prompt).encode("utf-8")) // 4 + request.max_tokens


class LimitedBackend:
    """A live backend that waits for the limiter and tells it when the provider pushes back."""

    def __init__(self, inner: Backend, limiter: Limiter) -> None:
        self.inner = inner
        self.model = inner.model
        self.limiter = limiter

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        model = str(self.model)
        self.limiter.acquire(model, estimated_tokens(request))
        try:
            return self.inner.complete(request)
        except Exception as error:
            if getattr(error, "status_code", None) in (429, 529):
                self.limiter.pause(model, retry_after(error) or DEFAULT_PAUSE_S)
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
