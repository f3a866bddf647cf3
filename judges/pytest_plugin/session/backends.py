"""The session's judge backends: one per (model, live), built once through the backend
registry and shared by the record phase's threads; live ones wait for the rate limits."""

from __future__ import annotations

import threading
from typing import Any

from judges.calls.backends import ModelRef, make_backend
from judges.calls.limits import Limiter
from judges.pytest_plugin.session.settings import Settings


class SessionBackends:
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
