"""The batch APIs on the fake judge server, close enough for the official SDKs.

OpenAI: `POST /v1/files` (multipart, purpose batch), `GET /v1/files/{id}/content`,
`POST /v1/batches`, `GET /v1/batches/{id}`, `GET /v1/batches` (a cursor page).
Anthropic: `POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`,
`GET /v1/messages/batches` (a page), `GET /v1/messages/batches/{id}/results` (JSONL).

Each request of a batch is answered as the fake judge answers it synchronously
(`_support.judged`): the same body, so a batch recording can be compared byte for byte
with a synchronous one. A test can hold the batches in progress, end them expired after
the first N requests, or fail the requests of some items.
"""

from __future__ import annotations

import email.parser
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ._support import CHAT_PATH, MESSAGES_PATH, FakeJudge, Received, judged

CREATED_AT = 1_700_000_000
JSON = "application/json"


@dataclass
class FakeBatch:
    id: str
    provider: str
    lines: list[dict[str, Any]]  # OpenAI: the file's lines; Anthropic: the requests
    created_at: int
    metadata: dict[str, str]
    input_file_id: str = ""
    results: list[dict[str, Any]] | None = None  # once ended
    status: str = "in_progress"


@dataclass
class FakeBatches:
    judge: FakeJudge
    hold: threading.Event = field(default_factory=threading.Event)  # set: stay in progress
    expire_after: int | None = None  # end expired, with replies to this many requests only
    fail_items: set[str] = field(default_factory=set)  # requests about these items error
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    polls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def submitted(self) -> list[dict[str, Any]]:
        """Every request submitted in any batch, in order."""
        return [line for batch in self.batches.values() for line in batch.lines]

    # -- routing -----------------------------------------------------------------------

    def route(
        self, method: str, path: str, raw: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes, str] | None:
        with self._lock:
            return self._route(method, path.rstrip("/"), raw, headers)

    def _route(
        self, method: str, path: str, raw: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes, str] | None:
        parts = path.strip("/").split("/")  # v1, resource, ...
        if method == "POST" and path == "/v1/files":
            return self._upload(raw, headers)
        if method == "GET" and parts[:2] == ["v1", "files"] and parts[-1] == "content":
            return 200, self.files[parts[2]], "application/octet-stream"
        if method == "POST" and path == "/v1/batches":
            return self._create_openai(json.loads(raw))
        if method == "GET" and path == "/v1/batches":
            found = sorted(self._of("openai"), key=lambda b: b.id, reverse=True)
            data = [self._openai(b) for b in found]
            return _json({"object": "list", "data": data, "has_more": False})
        if method == "GET" and parts[:2] == ["v1", "batches"] and len(parts) == 3:
            return _json(self._openai(self.batches[parts[2]]))
        if method == "POST" and path == "/v1/messages/batches":
            return self._create_anthropic(json.loads(raw))
        if method == "GET" and path == "/v1/messages/batches":
            found = sorted(self._of("anthropic"), key=lambda b: b.id, reverse=True)
            data = [self._anthropic(b) for b in found]
            first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
            page = {"data": data, "has_more": False, "first_id": first, "last_id": last}
            return _json(page)
        if method == "GET" and parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
            return _json(self._anthropic(self.batches[parts[3]]))
        if (
            method == "GET"
            and parts[:3] == ["v1", "messages", "batches"]
            and parts[-1] == "results"
        ):
            batch = self.batches[parts[3]]
            text = "".join(json.dumps(r) + "\n" for r in batch.results or [])
            return 200, text.encode(), "application/binary"
        return None

    def _of(self, provider: str) -> list[FakeBatch]:
        return [b for b in self.batches.values() if b.provider == provider]

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{len(self.batches) + len(self.files) + 1:06d}"

    # -- OpenAI ------------------------------------------------------------------------

    def _upload(self, raw: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
        kind = next(v for k, v in headers.items() if k.lower() == "content-type")
        parsed = email.parser.BytesParser().parsebytes(
            f"Content-Type: {kind}\r\n\r\n".encode() + raw
        )
        fields = {
            part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
            for part in parsed.get_payload()
        }
        assert fields["purpose"] == b"batch", fields["purpose"]
        file_id = self._new_id("file-")
        self.files[file_id] = fields["file"]
        return _json(
            {
                "id": file_id,
                "object": "file",
                "bytes": len(fields["file"]),
                "created_at": CREATED_AT,
                "filename": "batch.jsonl",
                "purpose": "batch",
                "status": "processed",
            }
        )

    def _create_openai(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        assert body["endpoint"] == CHAT_PATH and body["completion_window"] == "24h", body
        text = self.files[body["input_file_id"]].decode()
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        assert all(line["url"] == CHAT_PATH and line["method"] == "POST" for line in lines)
        assert len({line["custom_id"] for line in lines}) == len(lines), "custom ids repeat"
        batch = FakeBatch(
            self._new_id("batch_"),
            "openai",
            lines,
            int(time.time()),
            body.get("metadata") or {},
            input_file_id=body["input_file_id"],
        )
        self.batches[batch.id] = batch
        return _json(self._openai(batch))

    def _openai(self, batch: FakeBatch) -> dict[str, Any]:
        self._maybe_end(batch, CHAT_PATH)
        results = batch.results or []
        answered = [r for r in results if (r.get("response") or {}).get("status_code") == 200]
        output = self._file([r for r in answered]) if batch.results is not None else None
        errors = [r for r in results if r not in answered]
        error = self._file(errors) if errors else None
        status = batch.status
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": CHAT_PATH,
            "errors": None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": output,
            "error_file_id": error,
            "created_at": batch.created_at,
            "request_counts": {
                "total": len(batch.lines),
                "completed": len(answered),
                "failed": len(errors),
            },
            "metadata": batch.metadata,
        }

    def _file(self, lines: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        for file_id, stored in self.files.items():  # the same results: the same file
            if stored == data and file_id.startswith("file-out"):
                return file_id
        file_id = f"file-out{len(self.files):05d}"
        self.files[file_id] = data
        return file_id

    # -- Anthropic ---------------------------------------------------------------------

    def _create_anthropic(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        requests = body["requests"]
        assert len({r["custom_id"] for r in requests}) == len(requests), "custom ids repeat"
        batch = FakeBatch(self._new_id("msgbatch_"), "anthropic", requests, int(time.time()), {})
        self.batches[batch.id] = batch
        return _json(self._anthropic(batch))

    def _anthropic(self, batch: FakeBatch) -> dict[str, Any]:
        self._maybe_end(batch, MESSAGES_PATH)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch.results is None:
            counts["processing"] = len(batch.lines)
        for result in batch.results or []:
            counts[result["result"]["type"]] += 1
        ended = batch.results is not None
        url = self.judge.anthropic_url
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _rfc3339(batch.created_at),
            "expires_at": _rfc3339(batch.created_at + 86_400),
            "ended_at": _rfc3339(batch.created_at + 60) if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    # -- answering ---------------------------------------------------------------------

    def _maybe_end(self, batch: FakeBatch, path: str) -> None:
        """A batch ends at its first look once `hold` is clear, with every result."""
        self.polls += 1
        if batch.results is not None or self.hold.is_set():
            return
        results = []
        for index, line in enumerate(batch.lines):
            body = line["body"] if path == CHAT_PATH else line["params"]
            received = Received(path, {}, body)
            expired = self.expire_after is not None and index >= self.expire_after
            failed = received.item_id in self.fail_items
            if path == CHAT_PATH:
                results.append(self._openai_result(line, received, expired, failed))
            else:
                results.append(self._anthropic_result(line, received, expired, failed))
        batch.results = results
        if path == CHAT_PATH:
            batch.status = "expired" if self.expire_after is not None else "completed"

    def _openai_result(
        self, line: dict[str, Any], received: Received, expired: bool, failed: bool
    ) -> dict[str, Any]:
        result: dict[str, Any] = {"id": f"batch_req_{line['custom_id']}",
                                  "custom_id": line["custom_id"]}  # fmt: skip
        if expired:
            message = "This request could not be executed before the completion window expired."
            return result | {"response": None,
                             "error": {"code": "batch_expired", "message": message}}  # fmt: skip
        if failed:
            error = {"error": {"message": "the fake failed this item", "type": "server_error"}}
            return result | {"response": {"status_code": 500, "body": error}, "error": None}
        body = judged(self.judge, received)
        return result | {"response": {"status_code": 200, "request_id": "req_x", "body": body},
                         "error": None}  # fmt: skip

    def _anthropic_result(
        self, request: dict[str, Any], received: Received, expired: bool, failed: bool
    ) -> dict[str, Any]:
        if expired:
            result: dict[str, Any] = {"type": "expired"}
        elif failed:
            error = {"type": "api_error", "message": "the fake failed this item"}
            result = {"type": "errored", "error": {"type": "error", "error": error}}
        else:
            result = {"type": "succeeded", "message": judged(self.judge, received)}
        return {"custom_id": request["custom_id"], "result": result}


def _json(payload: dict[str, Any]) -> tuple[int, bytes, str]:
    return 200, json.dumps(payload).encode(), JSON


def _rfc3339(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")
