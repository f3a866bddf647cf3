"""The state of a batch recording, kept in the cassette folder so that it survives the session.

`<cassettes>/.judges-batch/` holds:

- `manifest.json`: every request submitted (its custom id, cassette, model, body and worst
  case) and every batch (our key, the provider's id once known, its requests and status),
  rewritten atomically whenever it changes. A batch is saved *before* it is created at the
  provider, under a key of ours that the provider keeps with it where it can (OpenAI's
  metadata): a crash between the two is found again, never submitted twice.
- `results.jsonl`: one outcome per request once its batch ended and was downloaded,
  appended; a torn last line (a kill during the write) is ignored and downloaded again.

Identical requests of one cassette (repeats without a seed) are interchangeable: their
outcomes form a pool taken in submission order, by the planner and by the writer alike.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from judges.storage.files import atomic_write_text, jsonl_lines

STATE_DIR = ".judges-batch"
MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
WRITTEN = "written.txt"


class Planned(BaseModel):
    """One request as submitted in a batch."""

    custom_id: str
    cassette: str  # relative to the cassette folder
    model: str  # backend:model
    body: dict[str, Any]
    worst_usd: float


class Submitted(BaseModel):
    """One batch: ours from before it is created, the provider's once `batch_id` is set."""

    key: str
    provider: str
    model: str
    custom_ids: list[str]
    created_at: float
    hold_usd: float
    batch_id: str | None = None
    status: str = "submitting"
    ended: bool = False
    downloaded: bool = False
    counts: dict[str, int] = Field(default_factory=dict)


class Outcome(BaseModel):
    """What came back for one request: a reply body, or why there is none."""

    custom_id: str
    body: dict[str, Any] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.body is not None


class Manifest(BaseModel):
    version: int = 1
    next_id: int = 0
    requests: dict[str, Planned] = Field(default_factory=dict)
    batches: list[Submitted] = Field(default_factory=list)
    retired: list[str] = Field(default_factory=list)  # failed requests given up for a retry


def body_key(body: Any) -> str:
    """Identical requests, whatever their key order or spacing, get one key."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


class BatchStore:
    """The manifest and outcomes of one cassette folder's batch recording."""

    def __init__(self, cassettes: Path) -> None:
        self.cassettes = cassettes
        self.folder = cassettes / STATE_DIR
        self.manifest = self._load_manifest()
        self.outcomes = self._load_outcomes()
        self._pools: dict[tuple[str, str], list[str]] | None = None
        written = self.folder / WRITTEN
        text = written.read_text(encoding="utf-8") if written.is_file() else ""
        self.written = set(jsonl_lines(text[: text.rfind("\n") + 1]))

    # -- disk ------------------------------------------------------------------------

    @property
    def exists(self) -> bool:
        return (self.folder / MANIFEST).is_file()

    def _load_manifest(self) -> Manifest:
        path = self.folder / MANIFEST
        if not path.is_file():
            return Manifest()
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))

    def _load_outcomes(self) -> dict[str, Outcome]:
        path = self.folder / RESULTS
        if not path.is_file():
            return {}
        text = path.read_text(encoding="utf-8")
        found = {}
        for line in jsonl_lines(text[: text.rfind("\n") + 1]):
            if line.strip():
                outcome = Outcome.model_validate_json(line)
                found[outcome.custom_id] = outcome  # a batch downloaded twice: the last wins
        return found

    def save(self) -> None:
        self._pools = None  # requests added or retired
        atomic_write_text(self.folder / MANIFEST, self.manifest.model_dump_json(indent=1) + "\n")

    def add_outcomes(self, outcomes: list[Outcome]) -> None:
        """Append one downloaded batch's outcomes in a single synced write."""
        self.folder.mkdir(parents=True, exist_ok=True)
        text = "".join(outcome.model_dump_json() + "\n" for outcome in outcomes)
        with (self.folder / RESULTS).open("a", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        self.outcomes.update((outcome.custom_id, outcome) for outcome in outcomes)

    def mark_written(self, cassette: Path) -> None:
        """A cassette written from this recording's replies (appended: one line each)."""
        relative = cassette.relative_to(self.cassettes).as_posix()
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / WRITTEN).open("a", encoding="utf-8") as stream:
            stream.write(relative + "\n")
        self.written.add(relative)

    def unwritten(self) -> set[str]:
        """Cassettes some request was submitted for that no session has written yet."""
        return {r.cassette for r in self.manifest.requests.values()} - self.written

    def remove(self) -> None:
        """Everything recorded: the cassettes hold it all now."""
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- requests and batches --------------------------------------------------------

    def new_request(
        self, cassette: Path, model: str, body: dict[str, Any], worst: float
    ) -> Planned:
        """A request to submit, with a fresh custom id (kept only once `add_batch` saves it)."""
        custom_id = f"jr{self.manifest.next_id:08d}"
        self.manifest.next_id += 1
        relative = cassette.relative_to(self.cassettes).as_posix()
        return Planned(
            custom_id=custom_id, cassette=relative, model=model, body=body, worst_usd=worst
        )

    def add_batch(
        self, provider: str, model: str, requests: list[Planned], hold: float, now: float
    ) -> Submitted:
        """Save a batch and its requests before it is created at the provider."""
        for request in requests:
            self.manifest.requests[request.custom_id] = request
        batch = Submitted(
            key=uuid.uuid4().hex,
            provider=provider,
            model=model,
            custom_ids=[r.custom_id for r in requests],
            created_at=now,
            hold_usd=hold,
        )
        self.manifest.batches.append(batch)
        self.save()
        return batch

    def open_batches(self) -> list[Submitted]:
        return [batch for batch in self.manifest.batches if not batch.downloaded]

    def failed(self) -> list[str]:
        """Requests that came back without a reply and are not yet given up for a retry."""
        retired = set(self.manifest.retired)
        return [c for c, o in self.outcomes.items() if not o.ok and c not in retired]

    def retire_failed(self) -> int:
        """Give the failed requests up: the next plan asks for them again (a retry)."""
        failed = self.failed()
        self.manifest.retired += failed
        if failed:
            self.save()
        return len(failed)

    def pools(self) -> dict[tuple[str, str], list[str]]:
        """(cassette, body key) -> custom ids of the requests that may answer it, in order."""
        if self._pools is None:
            retired = set(self.manifest.retired)
            pools: dict[tuple[str, str], list[str]] = defaultdict(list)
            for custom_id, request in self.manifest.requests.items():  # in submission order
                if custom_id not in retired:
                    pools[(request.cassette, body_key(request.body))].append(custom_id)
            self._pools = dict(pools)
        return self._pools
