"""`--cost-cap` counts what a provider may bill, not only what it reports.

A reply without `usage`, or one cut off after the request was sent, may have been billed in
full: each counts at its worst case (prompt tokens estimated from the request, plus
`max_tokens`), so the run stops before the cap could be passed, and the summary names the
estimated part. Each case runs against its own misbehaving server on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from judges.calls.backends import load_batch_prices
from judges.calls.batch.answers import worst_usd

from . import _batch_fake
from ._batch_fake import FakeBatches
from ._support import (
    FAKE_KEY,
    ITEMS,
    KEEP_LEDGER,
    FakeJudge,
    JudgesProject,
    Received,
    completion,
    kept_ledger,
    product_identity_verdict,
    versions,
)

# Input is free and every output token costs $1: a call's worst case is its max_tokens
# (320) = $320, whatever its prompt. A $700 cap fits two worst cases, never three.
PRICES = """
[models."local:smollm2-135m"]
input_per_mtok = 0.0
output_per_mtok = 1000000.0
"""
CAP = 700.0
WORST_USD = 320.0
CALLS_UNDER_CAP = 2


@dataclass
class Provider:
    """An OpenAI-compatible server that does the work (and would bill it) but answers
    without usage, or cuts its answer off mid-body."""

    answer: Callable[[BaseHTTPRequestHandler, bytes], None]
    url: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _reply_body(request: dict[str, Any]) -> dict[str, Any]:
    content = json.dumps(product_identity_verdict(1, "a verdict whose usage is not reported"))
    return completion(FakeJudge(), request, content)


def without_usage(handler: BaseHTTPRequestHandler, raw: bytes) -> None:
    body = _reply_body(json.loads(raw))
    del body["usage"]
    _write(handler, json.dumps(body).encode())


def cut_off(handler: BaseHTTPRequestHandler, raw: bytes) -> None:
    data = json.dumps(_reply_body(json.loads(raw))).encode()
    _write(handler, data, sent=len(data) // 2)
    handler.close_connection = True


def _write(handler: BaseHTTPRequestHandler, data: bytes, sent: int | None = None) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data[:sent])
    handler.wfile.flush()


@pytest.fixture
def provider(request: pytest.FixtureRequest) -> Iterator[Provider]:
    provider = Provider(request.param)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with provider.lock:
                provider.calls.append(json.loads(raw))
            provider.answer(self, raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    provider.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _ledger_lines(project: JudgesProject) -> list[dict[str, Any]]:
    lines = kept_ledger(project.root).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _assert_capped_at_worst_case(project: JudgesProject, provider: Provider, out: str) -> None:
    calls = len(provider.calls)
    assert calls > 0 and calls * WORST_USD <= CAP, f"{calls} calls may bill past the cap"
    charges = [e for e in _ledger_lines(project) if e["kind"] == "charge"]
    assert len(charges) == calls
    assert all(e["estimated"] and e["cost_usd"] == WORST_USD for e in charges)
    spent = calls * WORST_USD
    assert f"cost cap ${CAP:.4f}: spent ${spent:.4f}, of which ${spent:.4f} estimated" in out


@pytest.mark.parametrize("provider", [without_usage], indirect=True)
def test_replies_without_usage_count_at_their_worst_case(
    project: JudgesProject, provider: Provider
) -> None:
    project.pytester.makefile(".toml", prices=PRICES)
    project.pytester.makeconftest(KEEP_LEDGER)

    result = project.run(
        *("--judge-prices", "prices.toml", "--cost-cap", f"{CAP:g}"),
        *("--judge-concurrency", "1"),
        record="all",
        base_url=provider.url,
    )

    out = result.stdout.str()
    assert len(provider.calls) == CALLS_UNDER_CAP
    _assert_capped_at_worst_case(project, provider, out)
    rows = project.results().values()
    assert sum(row["status"] == "ok" for row in rows) == CALLS_UNDER_CAP
    assert all(row["usage"]["estimated_usd"] == WORST_USD for row in rows if row["status"] == "ok")
    reports = project.root / "reports"
    markdown = "".join(p.read_text(encoding="utf-8") for p in reports.glob("*/*/report.md"))
    html = "".join(p.read_text(encoding="utf-8") for p in reports.glob("*/*/index.html"))
    for text in (markdown, html):
        assert text.count(f"{WORST_USD:.4f} ({WORST_USD:.4f} estimated)") >= CALLS_UNDER_CAP
        assert "reported no usage, or was cut off after the request was sent" in text


@pytest.mark.parametrize("provider", [cut_off], indirect=True)
def test_replies_cut_off_count_at_their_worst_case_each_retry_again(
    project: JudgesProject, provider: Provider
) -> None:
    project.pytester.makefile(".toml", prices=PRICES)
    project.pytester.makeconftest(KEEP_LEDGER)

    result = project.run(
        *("--judge-prices", "prices.toml", "--cost-cap", f"{CAP:g}"),
        *("--judge-concurrency", "16"),
        workers="2",
        record="all",
        base_url=provider.url,
    )

    out = result.stdout.str()
    assert len(provider.calls) == CALLS_UNDER_CAP
    _assert_capped_at_worst_case(project, provider, out)
    statuses = [row["status"] for row in project.results().values()]
    assert "ok" not in statuses and "cost_cap" in statuses


def test_batch_replies_without_usage_count_at_their_worst_case(
    project: JudgesProject,
    fake_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = "openai:gpt-4o-mini"
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    batches = FakeBatches(fake_judge)
    fake_judge.routes = batches.route

    def without_usage(judge: FakeJudge, received: Received) -> dict[str, Any]:
        body = completion(judge, received.body, json.dumps(judge.reply(received.item_id)))
        del body["usage"]
        return body

    monkeypatch.setattr(_batch_fake, "judged", without_usage)
    project.pytester.makeconftest(KEEP_LEDGER)
    cap = 1.0

    result = project.run(
        *("--judge-model", model, "-k", "test_planted_item"),
        *("--batch", "--batch-poll", "0.01", "--cost-cap", f"{cap:g}"),
        record="all",
    )

    result.assert_outcomes(passed=len(versions()) * len(ITEMS))
    charges = [e for e in _ledger_lines(project) if e["kind"] == "charge"]
    assert len(charges) == len(versions()) * len(ITEMS)
    assert all(e["estimated"] for e in charges)
    price = load_batch_prices()[model]
    worst = sum(worst_usd(price, line["body"]) for line in batches.submitted)
    spent = sum(e["cost_usd"] for e in charges)
    assert spent == pytest.approx(worst) and 0 < spent <= cap
    assert f"cost cap ${cap:.4f}: spent ${spent:.4f}, of which ${spent:.4f} estimated" in (
        result.stdout.str()
    )
