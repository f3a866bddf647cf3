"""The cost ledger: tokens and dollars of every live call, shared by all xdist workers.

One append-only JSONL file under an exclusive lock: each worker adds its calls and reads
the total before the next live call, so `--cost-cap` holds for the whole session.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class CostCapReached(RuntimeError):
    """The session's live spend reached `--cost-cap`."""


class Ledger:
    def __init__(self, path: Path, cap_usd: float | None = None) -> None:
        self.path = path
        self.cap_usd = cap_usd

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # Created on first use: a replay-only run never writes a ledger.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+", encoding="utf-8") as stream:
            fcntl.flock(stream, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(stream, fcntl.LOCK_UN)

    def _entries(self) -> list[dict[str, object]]:
        if not self.path.is_file():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def spent_usd(self) -> float:
        return sum(float(e["cost_usd"]) for e in self._entries())  # type: ignore[arg-type]

    def ensure_budget(self) -> None:
        """Raise before a live call once the cap is reached."""
        if self.cap_usd is None:
            return
        with self._locked():
            spent = self.spent_usd()
        if spent >= self.cap_usd:
            raise CostCapReached(
                f"cost cap reached: ${spent:.4f} spent of ${self.cap_usd:.4f}; no further live "
                "judge calls in this session"
            )

    def charge(self, model: str, input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        entry = {
            "model": model,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": cost_usd,
        }
        with self._locked(), self.path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(entry, sort_keys=True) + "\n")
            stream.flush()

    def totals(self) -> dict[str, Usage]:
        """Calls, tokens and cost per model, in model order."""
        totals: dict[str, Usage] = {}
        for entry in self._entries():
            usage = totals.setdefault(str(entry["model"]), Usage())
            usage.calls += 1
            usage.input_tokens += int(entry["input_tokens"])  # type: ignore[call-overload]
            usage.output_tokens += int(entry["output_tokens"])  # type: ignore[call-overload]
            usage.cost_usd += float(entry["cost_usd"])  # type: ignore[arg-type]
        return dict(sorted(totals.items()))
