"""The result row: one per (judge, prompt version, model, item, run, repeat), always.

A row holds a verdict or an explicit error status; nothing is dropped, so counts reconcile.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judges.calls.ledger import Usage
from judges.files import atomic_write_text

Status = Literal["ok", "unparseable", "incomplete", "cost_cap", "transport"]
# Fields that differ between two honest replays; reports and snapshots leave them out.
VOLATILE_FIELDS = frozenset({"latency_s"})


class Expectation(BaseModel):
    """One condition on a verdict field, e.g. `factual_accuracy <= 1`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str = Field(pattern=r"^[a-z_][a-z0-9_.]*$")
    op: Literal["==", "!=", "<=", ">=", "<", ">", "in"]
    value: Any

    def __str__(self) -> str:
        return f"{self.field} {self.op} {json.dumps(self.value)}"

    def holds(self, verdict: dict[str, Any]) -> bool:
        actual: Any = verdict
        for part in self.field.split("."):
            if not isinstance(actual, dict) or part not in actual:
                return False
            actual = actual[part]
        if self.op == "in":
            return any(_same(actual, option) for option in self.value)
        if self.op in ("==", "!="):
            return _same(actual, self.value) is (self.op == "==")
        if actual is None or isinstance(actual, bool) != isinstance(self.value, bool):
            return False
        return {
            "<=": actual <= self.value,
            ">=": actual >= self.value,
            "<": actual < self.value,
            ">": actual > self.value,
        }[self.op]


def _same(actual: Any, expected: Any) -> bool:
    """Equality that never lets True stand for 1 (Python's bool is an int)."""
    return isinstance(actual, bool) == isinstance(expected, bool) and actual == expected


class Attempt(BaseModel):
    """One judge call: what it returned and, when it failed to parse, why."""

    model_config = ConfigDict(extra="forbid")

    facet: str | None
    attempt: int
    text: str
    error: str | None = None
    error_kind: str | None = None


class JudgementRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge: str
    prompt_version: str
    prompt_hash: str
    model: str
    item_id: str
    category: str
    control: bool
    run: str = "main"
    repeat: int = 0
    status: Status
    verdict: dict[str, Any] | None = None
    error: str | None = None
    expect: list[Expectation] = []
    met: bool | None = None
    attempts: list[Attempt] = []
    coerced: list[str] = []  # lenient parsing only: each conversion, e.g. "x: '3' -> 3"
    usage: Usage = Usage()
    live: bool = False
    latency_s: float = 0.0

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        return (self.judge, self.prompt_version, self.model, self.item_id, self.run, self.repeat)

    def stable_dump(self) -> dict[str, Any]:
        """The row without volatile fields, for files that must be byte-identical.

        `coerced` is written only when something was coerced: strict rows stay as they were.
        """
        exclude = set(VOLATILE_FIELDS) | {"live"} | (set() if self.coerced else {"coerced"})
        return self.model_dump(mode="json", exclude=exclude)


def jsonl_text(rows: Iterable[JudgementRow]) -> str:
    """The rows sorted by key, one JSON object a line: the content of a results file."""
    ordered = sorted(rows, key=lambda r: r.key)
    return "".join(json.dumps(r.stable_dump(), sort_keys=True) + "\n" for r in ordered)


def write_jsonl(path: Path, rows: Iterable[JudgementRow]) -> None:
    """Write rows sorted by key, atomically."""
    atomic_write_text(path, jsonl_text(rows))


def read_jsonl(path: Path) -> list[JudgementRow]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(JudgementRow.model_validate_json(line))
            except ValueError as error:
                raise ValueError(f"{path}:{number}: not a result row: {error}") from None
    return rows
