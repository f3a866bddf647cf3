"""Rate limits of live calls, for the whole session.

- Pauses the provider asks for: a 429 or 529 reply pauses every call to that model until
  its `Retry-After` (or `retry-after-ms`) has passed, or 1 s without one. Pauses are kept
  in a file under an fcntl lock, so every xdist worker and every thread waits them out.
- Ceilings: `rpm` (requests) and `tpm` (tokens) per minute, optional keys of a model's table
  in the price files. They are counted in the process that sends (the record phase sends
  every concurrent call of a session from one process); tokens are estimated before the
  call as prompt bytes / 4 + `max_tokens`.
"""

from __future__ import annotations

import fcntl
import json
import threading
import time
import tomllib
from collections import deque
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
    """Shared pauses (a file) and per-process ceilings over a sliding window."""

    path: Path
    ceilings: dict[str, Ceiling] = field(default_factory=dict)
    window_s: float = 60.0
    _sent: dict[str, deque[tuple[float, int]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _pauses(self, update: tuple[str, float] | None = None) -> dict[str, float]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+", encoding="utf-8") as stream:
            fcntl.flock(stream, fcntl.LOCK_EX)
            try:
                stream.seek(0)
                text = stream.read()
                pauses: dict[str, float] = json.loads(text) if text.strip() else {}
                if update is not None:
                    model, until = update
                    pauses[model] = max(pauses.get(model, 0.0), until)
                    stream.seek(0)
                    stream.truncate()
                    stream.write(json.dumps(pauses, sort_keys=True))
                    stream.flush()
                return pauses
            finally:
                fcntl.flock(stream, fcntl.LOCK_UN)

    def pause(self, model: str, seconds: float) -> None:
        """Hold every call to `model`, in every process of the session, for `seconds`."""
        seconds = min(max(seconds, 0.0), MAX_PAUSE_S)
        self._pauses((model, time.time() + seconds))

    def _ceiling_wait(self, model: str, tokens: int, now: float) -> float:
        """Seconds until one more call of `tokens` fits the ceilings (0: now; records it)."""
        ceiling = self.ceilings.get(model, Ceiling())
        sent = self._sent.setdefault(model, deque())
        while sent and sent[0][0] <= now - self.window_s:
            sent.popleft()
        if ceiling.rpm is not None and len(sent) >= ceiling.rpm:
            return sent[0][0] + self.window_s - now
        if ceiling.tpm is not None and sent:
            used = sum(n for _, n in sent)
            if used + tokens > ceiling.tpm:
                return sent[0][0] + self.window_s - now
        sent.append((now, tokens))
        return 0.0

    def acquire(self, model: str, tokens: int) -> None:
        """Wait until a call to `model` may be sent."""
        while True:
            paused = self._pauses().get(model, 0.0) - time.time()
            if paused > 0:  # the provider asked the whole session to wait
                time.sleep(min(paused, 1.0))
                continue
            with self._lock:
                wait = self._ceiling_wait(model, tokens, time.monotonic())
            if wait <= 0:
                return
            time.sleep(min(max(wait, _STEP_S), 1.0))

    def wrap(self, backend: Backend) -> Backend:
        return LimitedBackend(backend, self)


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
