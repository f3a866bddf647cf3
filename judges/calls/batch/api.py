"""The providers' batch APIs through their official SDKs: submit, find, poll, download.

- OpenAI: the requests as a JSONL file uploaded with `purpose="batch"` (`client.files`),
  then `client.batches.create` over `/v1/chat/completions` in a 24 h window; results and
  errors are two output files (`client.files.content`).
- Anthropic: `client.messages.batches.create(requests=[{custom_id, params}])`; results
  are streamed as JSONL from the batch's `results_url`.

Each request's body is exactly the JSON the SDK sends for a synchronous call (captured by
the planner), so a batch reply is the reply that call would have had.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from judges.calls.batch.store import Outcome, Planned, Submitted

CHAT_ENDPOINT = "/v1/chat/completions"
WINDOW = "24h"
KEY_FIELD = "judges_batch"  # OpenAI batch metadata: our key, to find a batch again
FIND_SLACK_S = 300.0  # clocks differ: look this far before our own creation time


@dataclass(frozen=True)
class BatchState:
    status: str
    ended: bool
    done: int  # requests finished, with a reply or not
    failed: int
    total: int


class BatchAPI(Protocol):
    provider: str

    def submit(self, batch: Submitted, requests: Sequence[Planned]) -> str: ...

    def find(self, batch: Submitted) -> str | None: ...

    def state(self, batch_id: str) -> BatchState: ...

    def outcomes(self, batch: Submitted) -> list[Outcome]: ...


def _missing(batch: Submitted, found: dict[str, Outcome], why: str) -> list[Outcome]:
    """Every request of the batch with an outcome: those the provider left out, an error."""
    return [
        found.get(c) or Outcome(custom_id=c, error=f"batch {batch.batch_id} {why}")
        for c in batch.custom_ids
    ]


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        inner = error.get("error", error)
        if isinstance(inner, dict):
            kind = inner.get("type") or inner.get("code") or "error"
            return f"{kind}: {inner.get('message', '')}".strip()
    return str(error)


class OpenAIBatches:
    provider = "openai"

    def __init__(self, client: Any) -> None:
        self.client = client

    def submit(self, batch: Submitted, requests: Sequence[Planned]) -> str:
        lines = [
            {"custom_id": r.custom_id, "method": "POST", "url": CHAT_ENDPOINT, "body": r.body}
            for r in requests
        ]
        data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
        uploaded = self.client.files.create(
            file=(f"judges-{batch.key}.jsonl", data, "application/jsonl"), purpose="batch"
        )
        created = self.client.batches.create(
            input_file_id=uploaded.id,
            endpoint=CHAT_ENDPOINT,
            completion_window=WINDOW,
            metadata={KEY_FIELD: batch.key},
        )
        return str(created.id)

    def find(self, batch: Submitted) -> str | None:
        """A batch created with our key (newest first; stop before our creation time)."""
        for found in self.client.batches.list(limit=100):
            if (found.metadata or {}).get(KEY_FIELD) == batch.key:
                return str(found.id)
            if found.created_at < batch.created_at - FIND_SLACK_S:
                return None
        return None

    def state(self, batch_id: str) -> BatchState:
        found = self.client.batches.retrieve(batch_id)
        counts = found.request_counts
        done, failed, total = (
            (counts.completed + counts.failed, counts.failed, counts.total) if counts else (0, 0, 0)
        )
        ended = found.status in ("completed", "failed", "expired", "cancelled")
        return BatchState(found.status, ended, done, failed, total)

    def outcomes(self, batch: Submitted) -> list[Outcome]:
        assert batch.batch_id is not None
        found_batch = self.client.batches.retrieve(batch.batch_id)
        found: dict[str, Outcome] = {}
        for file_id in (found_batch.output_file_id, found_batch.error_file_id):
            if not file_id:
                continue
            for line in self.client.files.content(file_id).text.splitlines():
                if line.strip():
                    outcome = self._outcome(json.loads(line))
                    found[outcome.custom_id] = outcome
        why = f"ended {found_batch.status} without a reply for this request"
        errors = getattr(found_batch.errors, "data", None) or []
        if errors:  # a batch that failed validation as a whole
            why += " (" + "; ".join(f"{e.code}: {e.message}" for e in errors) + ")"
        return _missing(batch, found, why)

    @staticmethod
    def _outcome(line: dict[str, Any]) -> Outcome:
        custom_id = str(line.get("custom_id"))
        response = line.get("response") or {}
        if response.get("status_code") == 200 and isinstance(response.get("body"), dict):
            return Outcome(custom_id=custom_id, body=response["body"])
        if line.get("error"):
            return Outcome(custom_id=custom_id, error=_error_text(line["error"]))
        status = response.get("status_code")
        return Outcome(
            custom_id=custom_id, error=f"status {status}: {_error_text(response.get('body'))}"
        )


class AnthropicBatches:
    provider = "anthropic"

    def __init__(self, client: Any) -> None:
        self.client = client

    def submit(self, batch: Submitted, requests: Sequence[Planned]) -> str:
        created = self.client.messages.batches.create(
            requests=[{"custom_id": r.custom_id, "params": r.body} for r in requests]
        )
        return str(created.id)

    def find(self, batch: Submitted) -> str | None:
        """Message batches carry no metadata: the one created around our time with our
        number of requests, when exactly one is (else None: ambiguous or not created)."""
        matches = []
        for found in self.client.messages.batches.list(limit=100):
            created = _timestamp(found.created_at)
            if created < batch.created_at - FIND_SLACK_S:
                break
            counts = found.request_counts
            total = sum(
                (
                    counts.processing,
                    counts.succeeded,
                    counts.errored,
                    counts.canceled,
                    counts.expired,
                )
            )
            if total == len(batch.custom_ids):
                matches.append(str(found.id))
        return matches[0] if len(matches) == 1 else None

    def state(self, batch_id: str) -> BatchState:
        found = self.client.messages.batches.retrieve(batch_id)
        c = found.request_counts
        failed = c.errored + c.canceled + c.expired
        total = c.processing + c.succeeded + failed
        ended = found.processing_status == "ended"
        return BatchState(found.processing_status, ended, c.succeeded + failed, failed, total)

    def outcomes(self, batch: Submitted) -> list[Outcome]:
        assert batch.batch_id is not None
        found: dict[str, Outcome] = {}
        results = self.client.messages.batches.with_streaming_response.results(batch.batch_id)
        with results as response:
            for line in response.iter_lines():
                if line.strip():
                    outcome = self._outcome(json.loads(line))
                    found[outcome.custom_id] = outcome
        return _missing(batch, found, "ended without a result for this request")

    @staticmethod
    def _outcome(line: dict[str, Any]) -> Outcome:
        custom_id = str(line.get("custom_id"))
        result = line.get("result") or {}
        kind = result.get("type")
        if kind == "succeeded" and isinstance(result.get("message"), dict):
            return Outcome(custom_id=custom_id, body=result["message"])
        if kind == "errored":
            return Outcome(
                custom_id=custom_id, error=f"errored: {_error_text(result.get('error'))}"
            )
        return Outcome(custom_id=custom_id, error=f"{kind or 'unknown'}: no reply")


def _timestamp(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value)).timestamp()
