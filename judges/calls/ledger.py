"""The cost ledger: tokens and dollars of every live call, shared by all xdist workers.

One append-only JSONL file under an exclusive lock (fcntl: it excludes threads as well as
processes, each opening the file anew). Before a live call the runner *reserves* the call's
worst-case cost; the reservation is refused when spent + reserved + worst case would pass
`--cost-cap`, and settled (released, the cost charged) once the call ended. So the cap
holds for the whole session even with many calls in flight, as long as a reply costs no
more than its worst case (prompt bytes + `max_tokens`, see `judges.core.runner.worst_case_usd`).

Settling charges what the provider may bill (`settlement`): the reported usage at the
model's price, or, when a call was sent but no usage came back (a reply without `usage`,
or one cut off mid-body), its whole worst case, marked estimated. Each retry is a call of
its own, reserved and settled again. A worst case of zero (a free model) is nothing.
"""

from __future__ import annotations

import fcntl
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from judges.storage.files import jsonl_lines

if TYPE_CHECKING:
    from judges.calls.backends import Price

# One ledger line as parsed JSON: its fields' types are the ones this module wrote.
Entry = dict[str, Any]


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    # The part of `cost_usd` that is a worst case, not a reported usage, and its calls.
    estimated_usd: float = 0.0
    estimated_calls: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd = round(self.cost_usd + other.cost_usd, 8)
        self.estimated_usd = round(self.estimated_usd + other.estimated_usd, 8)
        self.estimated_calls += other.estimated_calls

    def stable_dump(self) -> dict[str, Any]:
        """The usage as written to files; the estimated part only when there is one, so
        that files of runs with none stay as they were."""
        exclude = set() if self.estimated_calls else {"estimated_usd", "estimated_calls"}
        return self.model_dump(mode="json", exclude=exclude)


@dataclass(frozen=True)
class Reported:
    """What a reply says it used, priced: its tokens and their cost."""

    input_tokens: int
    output_tokens: int
    cost_usd: float


def settlement(reported: Reported | None, worst_usd: float) -> Usage:
    """What one sent call is charged: its reported usage, or, with none (no `usage` in the
    reply, or no whole reply), its worst case, estimated. A free call stays free."""
    if reported is not None:
        return Usage(
            calls=1,
            input_tokens=reported.input_tokens,
            output_tokens=reported.output_tokens,
            cost_usd=reported.cost_usd,
        )
    if worst_usd <= 0:
        return Usage(calls=1)
    return Usage(calls=1, cost_usd=worst_usd, estimated_usd=worst_usd, estimated_calls=1)


def reported_usage(body: Any, price: Price) -> Reported | None:
    """What a reply body says it used, priced: OpenAI's chat completions
    (`prompt_tokens`, `completion_tokens`), its responses and Anthropic's messages
    (`input_tokens`, `output_tokens`); None when it says nothing."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    for names in (("prompt_tokens", "completion_tokens"), ("input_tokens", "output_tokens")):
        found = [usage.get(name) for name in names]
        tokens = [t for t in found if isinstance(t, int) and not isinstance(t, bool) and t >= 0]
        if len(tokens) == 2:
            return Reported(tokens[0], tokens[1], price.cost(tokens[0], tokens[1]))
    return None


class CostCapReached(RuntimeError):
    """The session's live spend reached `--cost-cap`."""


class Ledger:
    def __init__(self, path: Path, cap_usd: float | None = None) -> None:
        self.path = path
        self.cap_usd = cap_usd
        # What reserve() has read of the file so far: it reads only what was appended since.
        self._offset = 0
        self._spent = 0.0
        self._holds: dict[str, float] = {}

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

    def _entries(self) -> list[Entry]:
        if not self.path.is_file():
            return []
        text = self.path.read_text(encoding="utf-8")
        # Read without the lock (progress, summaries): a line being appended is left out.
        lines = jsonl_lines(text[: text.rfind("\n") + 1])
        return [json.loads(line) for line in lines if line.strip()]

    @staticmethod
    def _charges(entries: list[Entry]) -> list[Entry]:
        return [e for e in entries if e.get("kind", "charge") == "charge"]

    def spent_usd(self) -> float:
        charges = self._charges(self._entries())
        return sum(float(e["cost_usd"]) for e in charges)

    def held_usd(self) -> float:
        """Worst-case cost of the calls in flight: reserved, not yet settled."""
        entries = self._entries()
        released = {e["hold"] for e in entries if e.get("kind") == "release"}
        holds = [e for e in entries if e.get("kind") == "hold" and e["hold"] not in released]
        return sum(float(e["cost_usd"]) for e in holds)

    def reserve(self, model: str, worst_usd: float) -> str:
        """Hold a call's worst-case cost; raise CostCapReached if it could pass the cap.

        Returns the reservation's id ("" without a cap: nothing to hold)."""
        if self.cap_usd is None:
            return ""
        hold = uuid.uuid4().hex
        with self._locked():
            spent, held = self._committed()
            if spent + held + worst_usd > self.cap_usd:
                raise CostCapReached(
                    f"cost cap reached: ${spent:.4f} spent of ${self.cap_usd:.4f} "
                    f"(${held:.4f} held by calls in flight; this call may cost up to "
                    f"${worst_usd:.4f}); no live judge call that could pass the cap"
                )
            self._append({"kind": "hold", "hold": hold, "model": model, "cost_usd": worst_usd})
        return hold

    def hold(self, model: str, usd: float) -> str:
        """Hold a cost that is already committed (a batch submitted by an earlier session),
        whatever the cap: it counts against what may still be reserved."""
        if self.cap_usd is None:
            return ""
        hold = uuid.uuid4().hex
        with self._locked():
            self._append({"kind": "hold", "hold": hold, "model": model, "cost_usd": usd})
        return hold

    def _committed(self) -> tuple[float, float]:
        """Spent and held, as `spent_usd` and `held_usd`, from the new lines only (locked)."""
        with self.path.open("rb") as stream:
            stream.seek(self._offset)
            data = stream.read()
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        for line in complete.splitlines():
            entry = json.loads(line) if line.strip() else {}
            kind = entry.get("kind", "charge")
            if not entry:
                continue
            if kind == "charge":
                self._spent += float(entry["cost_usd"])
            elif kind == "hold":
                self._holds[entry["hold"]] = float(entry["cost_usd"])
            else:
                self._holds.pop(entry["hold"], None)
        return self._spent, sum(self._holds.values())

    def release(self, hold: str) -> None:
        """The call failed before any reply: free its reservation."""
        if not hold:
            return
        with self._locked():
            self._append({"kind": "release", "hold": hold, "cost_usd": 0.0})

    def _append(self, entry: dict[str, object]) -> None:
        with self.path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(entry, sort_keys=True) + "\n")
            stream.flush()

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

    def settle(self, hold: str, model: str, worst_usd: float, reported: Reported | None) -> Usage:
        """Settle a sent call's reservation by `settlement`; the call's usage, as charged.
        A reported cost above the call's worst case (more tokens than it sent and allowed)
        is charged as reported, and marked: the session says so, and fails past its cap."""
        usage = settlement(reported, worst_usd)
        estimated = bool(usage.estimated_calls)
        over = worst_usd if 0 < worst_usd < usage.cost_usd else None
        self.charge(
            model, usage.input_tokens, usage.output_tokens, usage.cost_usd, hold, estimated, over
        )
        return usage

    def charge(
        self,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cost_usd: float,
        hold: str | None = None,
        estimated: bool = False,
        over_worst_usd: float | None = None,
    ) -> None:
        """Charge a reply; with `hold`, settle that reservation in the same locked write.
        `estimated`: the cost is a worst case, the provider reported no usage.
        `over_worst_usd`: the worst case the reported cost went past (an over-report)."""
        entry: dict[str, object] = {
            "kind": "charge",
            "model": model,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": cost_usd,
        }
        if estimated:
            entry["estimated"] = True
        if over_worst_usd is not None:
            entry["over_worst_usd"] = over_worst_usd
        with self._locked():
            if hold:
                self._append({"kind": "release", "hold": hold, "cost_usd": 0.0})
            self._append(entry)

    def totals(self) -> dict[str, Usage]:
        """Calls, tokens and cost per model, in model order."""
        totals: dict[str, Usage] = {}
        for entry in self._charges(self._entries()):
            usage = totals.setdefault(str(entry["model"]), Usage())
            usage.calls += 1
            usage.input_tokens += int(entry["input_tokens"])
            usage.output_tokens += int(entry["output_tokens"])
            usage.cost_usd += float(entry["cost_usd"])
            if entry.get("estimated"):
                usage.estimated_usd += float(entry["cost_usd"])
                usage.estimated_calls += 1
        return dict(sorted(totals.items()))

    def estimated_usd(self) -> float:
        """The part of `spent_usd` that is a worst case: calls that reported no usage."""
        charges = self._charges(self._entries())
        return sum(float(e["cost_usd"]) for e in charges if e.get("estimated"))

    def spend(self) -> Spend | None:
        """The session's spend against its cap (None without a cap), with its overruns."""
        if self.cap_usd is None:
            return None
        return Spend(self.cap_usd, self.spent_usd(), tuple(self.overruns()))

    def overruns(self) -> list[Overrun]:
        """The calls whose reported cost went past the worst case reserved for them."""
        return [
            Overrun(
                str(e["model"]),
                int(e["input_tokens"]),
                int(e["output_tokens"]),
                float(e["cost_usd"]),
                float(e["over_worst_usd"]),
            )
            for e in self._charges(self._entries())
            if "over_worst_usd" in e
        ]


@dataclass(frozen=True)
class Overrun:
    """A call billed past its worst case: the provider reported more tokens than the call
    sent and allowed (or its price is not the price file's)."""

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    worst_usd: float


@dataclass(frozen=True)
class Spend:
    """A session's spend against its cap, and the calls that went past their worst case."""

    cap_usd: float
    spent_usd: float
    overruns: tuple[Overrun, ...] = ()

    @property
    def exceeded(self) -> bool:
        """Spent past the cap: only reported usage beyond a call's worst case does that
        (every call reserves its worst case first), so the run fails and says why."""
        return self.spent_usd > self.cap_usd + 1e-9
