"""The result row: one per (judge, prompt version, model, item, run, repeat), always.

A row holds a verdict or an explicit error status; nothing is dropped, so counts reconcile.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judges.calls.credentials import known_secrets, scrub
from judges.calls.ledger import Usage
from judges.storage.files import atomic_write_text, jsonl_lines

# `error`: building the verdict or checking an expectation raised; the row says what.
Status = Literal["ok", "unparseable", "incomplete", "cost_cap", "transport", "error"]
# A surrogate code point in a str is one JSON may carry (`"\ud800"`) but UTF-8 cannot: it
# would make the row unreadable and every report built from it fail.
_SURROGATE = re.compile("[\ud800-\udfff]")
# Fields that differ between two honest replays; reports and snapshots leave them out.
VOLATILE_FIELDS = frozenset({"latency_s", "live"})  # left out of results.jsonl


class Expectation(BaseModel):
    """One condition on a verdict field, e.g. `factual_accuracy <= 1`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str = Field(pattern=r"^[a-z_][a-z0-9_.]*$")
    op: Literal["==", "!=", "<=", ">=", "<", ">", "in"]
    value: Any

    @field_validator("value")
    @classmethod
    def _safe(cls, value: Any) -> Any:
        return safe_value(value)  # compared with verdicts, which are made safe the same way

    def __str__(self) -> str:
        return f"{self.field} {self.op} {json.dumps(self.value, ensure_ascii=False)}"

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


def safe_text(text: str, secrets: Sequence[str] | None = None) -> str:
    """Text that can be written as UTF-8 and shown: surrogates escaped, secrets scrubbed."""
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return scrub(text, secrets)


def safe_value(value: Any, secrets: Sequence[str] | None = None) -> Any:
    """`safe_text` on every string of a JSON-like value, keys included."""
    if not isinstance(value, str | dict | list | tuple):
        return value  # None, a number, a bool: nothing to scrub
    if secrets is None:
        secrets = known_secrets()  # once per value, not once per string in it
    if isinstance(value, str):
        return safe_text(value, secrets)
    if isinstance(value, dict):
        return {safe_text(str(k), secrets): safe_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_value(v, secrets) for v in value]
    return value


class Attempt(BaseModel):
    """One judge call: what it returned and, when it failed to parse, why.

    `text` is None for the attempt that gave the verdict: its reply is the verdict's `raw`,
    and is not stored twice.
    """

    model_config = ConfigDict(extra="forbid")

    facet: str | None
    attempt: int
    text: str | None
    error: str | None = None
    error_kind: str | None = None

    @field_validator("text", "error")
    @classmethod
    def _safe(cls, value: str | None) -> str | None:
        return None if value is None else safe_text(value)


class JudgementRow(BaseModel):
    # Defaults are factories: pydantic deep-copies a mutable default for every row made.
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
    # A transport error no retry gets past (`calls.backends.unreachable`): unreachable,
    # unauthorised, no_route. Written only when set.
    error_kind: str | None = None
    expect: list[Expectation] = Field(default_factory=list)
    met: bool | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    # Lenient parsing only: each conversion, e.g. "x: '3' -> 3".
    coerced: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    live: bool = False
    latency_s: float = 0.0
    fingerprint: dict[str, str] | None = None  # the judge that answered; None: not recorded

    # Every row, however it is made (judged, sent by a worker, read back), is safe to write.
    @field_validator("verdict", "error", "coerced", "fingerprint")
    @classmethod
    def _safe(cls, value: Any) -> Any:
        return safe_value(value)

    # What identifies a row is never rewritten: escaping it would invent an item, a version
    # or a model. A row whose identity UTF-8 cannot hold is damaged, and read as such.
    @field_validator(
        "judge", "prompt_version", "prompt_hash", "model", "item_id", "category", "run"
    )
    @classmethod
    def _writable_identity(cls, value: str) -> str:
        if _SURROGATE.search(value):
            raise ValueError(
                "a lone surrogate (\\ud800-\\udfff) in a field that identifies the row"
            )
        return value

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        return (self.judge, self.prompt_version, self.model, self.item_id, self.run, self.repeat)

    def dump(self, *, volatile: bool = False) -> dict[str, Any]:
        """The row as JSON data: the one serialisation of a row, wherever it is written.

        results.jsonl, which must stay byte-identical from run to run, keeps the stable
        fields; the session's row journal, read back by the same session, adds the volatile
        ones (`volatile`: the latency, and whether it was judged live). `coerced`,
        `error_kind` and `fingerprint` are written only when set: older rows stay as they
        were.
        """
        exclude = set() if volatile else set(VOLATILE_FIELDS)
        exclude |= set() if self.coerced else {"coerced"}
        if self.fingerprint is None:
            exclude.add("fingerprint")
        if self.error_kind is None:
            exclude.add("error_kind")
        dump = self.model_dump(mode="json", exclude=exclude)
        dump["usage"] = self.usage.stable_dump()  # its estimated part only when there is one
        return dump


def outcome(row: JudgementRow) -> str:
    """What a main-run row says about its item, in words a reader of the report uses."""
    if row.status != "ok":
        return f"error ({row.status})"
    if row.control:
        return "held" if row.met else "false positive"
    return "caught" if row.met else "missed"


def jsonl_text(rows: Iterable[JudgementRow], damaged: Iterable[str] = ()) -> str:
    """The rows sorted by key, one JSON object a line: the content of a results file.

    Damaged lines are kept after the rows as they were read (dropping them would lose the
    only copy of what the judge said); every reader reports them with their line number.
    """
    ordered = sorted(rows, key=lambda r: r.key)
    text = "".join(json.dumps(r.dump(), sort_keys=True) + "\n" for r in ordered)
    return text + "".join(line + "\n" for line in damaged)


def write_jsonl(path: Path, rows: Iterable[JudgementRow], damaged: Iterable[str] = ()) -> None:
    """Write rows sorted by key (and damaged lines after them), atomically."""
    atomic_write_text(path, jsonl_text(rows, damaged))


@dataclass(frozen=True)
class DamagedLine:
    """A line of a results file that is not a result row."""

    path: Path
    line: int
    text: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: not a result row ({self.reason}); left out"


@dataclass(frozen=True)
class ResultsRead:
    rows: list[JudgementRow]
    damaged: list[DamagedLine]


def read_results(path: Path) -> ResultsRead:
    """Every row of a results file; a damaged line is set aside with its line number."""
    return parse_results(path, path.read_bytes().decode("utf-8", errors="replace"))


def parse_results(path: Path, text: str) -> ResultsRead:
    rows, damaged = [], []
    for number, line in enumerate(jsonl_lines(text), start=1):
        if line.strip():
            try:
                rows.append(_row(line))
            except ValueError as error:
                reason = " ".join(str(error).split())[:200]
                damaged.append(DamagedLine(path, number, safe_text(line), safe_text(reason)))
    return ResultsRead(rows, damaged)


def _row(line: str) -> JudgementRow:
    try:
        return JudgementRow.model_validate_json(line)
    except ValidationError:
        # Python's json reads what pydantic's strict JSON parser refuses (lone surrogates,
        # written by older versions); the row's validators then make it safe.
        return JudgementRow.model_validate(json.loads(line))


def read_jsonl(path: Path) -> list[JudgementRow]:
    """The rows of a results file, damaged lines left out (see `read_results`)."""
    return read_results(path).rows


def main_run(
    rows: Iterable[JudgementRow], version: tuple[str, str, str], item_ids: Iterable[str]
) -> list[JudgementRow] | None:
    """The main-run rows of (judge, prompt version, model), one per item in `item_ids`
    order; None unless every item has one."""
    wanted = list(item_ids)
    found = {
        row.item_id: row
        for row in rows
        if (row.judge, row.prompt_version, row.model) == version
        and (row.run, row.repeat) == ("main", 0)
    }
    if not wanted or any(item_id not in found for item_id in wanted):
        return None
    return [found[item_id] for item_id in wanted]
