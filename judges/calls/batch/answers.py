"""Answering a judgement's HTTP requests from batch outcomes, for planning and for writing.

A judgement sends its requests one after another through the official SDK, exactly as a
synchronous recording does. Here each request is answered from the batch store instead of
the network: the next unused outcome of an identical request in the same cassette (a
`Cursor`). The planner (`PlanTransport`) stops a judgement at the first request without
an outcome and lists what it needs; the writer (`Cursor.answer`, run under vcrpy through
`judges.calls.cassettes.answering`) records the answers into the cassette.

A request that came back without a reply (expired, errored, cancelled) is answered with
HTTP 424 and the reason: not a transient status, so the runner does not retry it (a retry
would take the next identical request's outcome) and the judgement ends as an explicit
`transport` error row. vcrpy keeps no non-2xx answer: the cassette is that of a synchronous
recording whose call failed.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from typing import Any

import httpx2

from judges.calls.backends import Price, error_chain, token_count
from judges.calls.batch.store import BatchStore, Outcome, body_key

FAILED_STATUS = 424
_TEMPLATE_TOKENS = 64  # as judges.core.runner.worst_case_tokens


class Stop(Exception):
    """The judgement cannot go on: a request has no outcome (yet)."""

    def __init__(self, needed: bool) -> None:
        super().__init__("needs a batch request" if needed else "awaits a batch")
        self.needed = needed


def stopped(error: BaseException) -> Stop | None:
    """The `Stop` behind an error, also when the SDK wrapped it in a connection error."""
    return next((link for link in error_chain(error) if isinstance(link, Stop)), None)


def parse_body(request: httpx2.Request) -> dict[str, Any]:
    return json.loads(request.read() or b"{}")


def worst_usd(price: Price, body: dict[str, Any]) -> float:
    """An upper bound on one request's cost: every byte of its JSON body a prompt token (the
    body holds system, prompt and schema, escaped), and its whole `max_tokens` out."""
    prompt = len(json.dumps(body).encode("utf-8")) + _TEMPLATE_TOKENS
    out = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    return price.cost(prompt, int(out))


def usage_of(body: dict[str, Any]) -> tuple[int, int] | None:
    """Input and output tokens of a reply, OpenAI's or Anthropic's; None when the reply
    does not report both (its cost is then its worst case)."""
    usage = body.get("usage") or {}
    names = ("prompt_tokens", "completion_tokens")
    if not any(name in usage for name in names):
        names = ("input_tokens", "output_tokens")
    if any(usage.get(name) is None for name in names):
        return None
    return token_count(usage[names[0]], names[0]), token_count(usage[names[1]], names[1])


def response_for(outcome: Outcome, request: httpx2.Request) -> httpx2.Response:
    """The HTTP answer a synchronous call would have had (same body bytes as the provider's
    JSON re-serialised); a failed request's reason under a non-transient status. Built by
    the HTTP library the request came from: httpx2 (openai 3, anthropic 2) or httpx."""
    http = http_library(request)
    headers = {"content-type": "application/json"}
    if outcome.body is not None:
        return http.Response(
            200, headers=headers, content=json.dumps(outcome.body).encode(), request=request
        )
    error = {"type": "error", "error": {"type": "batch_error", "message": outcome.error}}
    return http.Response(
        FAILED_STATUS, headers=headers, content=json.dumps(error).encode(), request=request
    )


def http_library(made: Any) -> Any:
    """The HTTP library (httpx2 or httpx) an object of it was made by: the one the SDK that
    sent a request, or holds a client, is built on."""
    roots = (kind.__module__.split(".")[0] for kind in type(made).__mro__)
    return importlib.import_module(next(root for root in roots if root in _HTTP_LIBRARIES))


_HTTP_LIBRARIES = ("httpx2", "httpx")


class Cursor:
    """One judgement's walk through the outcomes of its cassette's requests."""

    def __init__(
        self, store: BatchStore, pools: dict[tuple[str, str], list[str]], cassette: str
    ) -> None:
        self.store = store
        self.pools = pools
        self.cassette = cassette
        self.taken: Counter[str] = Counter()  # body key -> outcomes used so far
        self.needed: list[dict[str, Any]] = []  # bodies with no request submitted
        self.awaiting = False  # some request is submitted, its outcome not yet downloaded

    def take(self, body: dict[str, Any]) -> Outcome | Stop | None:
        """The next outcome for this body; None while its batch runs; a Stop if none."""
        key = body_key(body)
        pool = self.pools.get((self.cassette, key), [])
        index = self.taken[key]
        if index >= len(pool):
            return Stop(needed=True)
        self.taken[key] += 1
        return self.store.outcomes.get(pool[index])

    def claim(self, body: dict[str, Any]) -> None:
        """Reserve the next outcome for a request that will be sent later in this
        judgement, or list it as needed (the first attempts of facets not reached yet)."""
        found = self.take(body)
        if isinstance(found, Stop):
            self.needed.append(body)
        elif found is None:
            self.awaiting = True

    def answer(self, transport: Any, request: httpx2.Request) -> httpx2.Response:
        """The writer's answer (vcrpy records it); the plan said every outcome is there."""
        found = self.take(parse_body(request))
        if not isinstance(found, Outcome):
            missing = Outcome(
                custom_id="",
                error="the batch recording has no reply for this "
                "request (it changed since it was planned); record it again",
            )
            return response_for(missing, request)
        return response_for(found, request)


class PlanTransport(httpx2.BaseTransport):
    """The planner's transport: answers from the cursor, stops at a request without one.

    In `claiming` mode it only claims what it is sent and stops the SDK call."""

    def __init__(self) -> None:
        self.cursor: Cursor | None = None
        self.claiming = False
        self.sent: Counter[str] = Counter()  # this repeat's bodies, answered or stopped at

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        cursor = self.cursor
        assert cursor is not None, "a planning request outside a judgement"
        body = parse_body(request)
        key = body_key(body)
        if self.claiming:
            if self.sent[key] > 0:  # sent (or stopped at) earlier in this repeat
                self.sent[key] -= 1
            else:
                cursor.claim(body)
            raise Stop(needed=False)
        self.sent[key] += 1
        found = cursor.take(body)
        if isinstance(found, Stop):
            cursor.needed.append(body)
            raise found
        if found is None:
            cursor.awaiting = True
            raise Stop(needed=False)
        return response_for(found, request)
