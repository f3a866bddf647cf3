"""One judgement, in one direction: render -> call (bounded retry) -> verdict -> result row.

Knows no pytest and no vcrpy: the caller passes a backend (whose HTTP may be recorded or
replayed) and says which exceptions must not become error rows (a cassette miss must fail
the test loudly, not hide as a `transport` row).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from pydantic import BaseModel

from judges.calls.backends import (
    Backend,
    JudgeRequest,
    JudgeResponse,
    Price,
    is_timeout,
    is_transient,
    may_have_been_billed,
    unreachable,
)
from judges.calls.ledger import CostCapReached, Ledger, Reported, reported_usage, settlement
from judges.core.parsing import ReplyError, parse_reply, parse_reply_coercing
from judges.core.results import Attempt, Expectation, JudgementRow, Status, Usage
from judges.core.spec import JudgeSpec, Sampling, prompt_hash
from judges.core.team_judge import (
    CallableTimeout,
    TeamJudge,
    TeamJudgeError,
    as_verdict,
    failure_status,
    judgement_hash,
    within,
)

# Seeds of independent draws stay far apart so retries of one never meet another's.
_DRAW_STRIDE = 1000
DEFAULT_TIMEOUT_S = 120.0
# A judgement (all its facets, reply retries and transport retries) may take this many
# request timeouts in all: a hung server costs one timeout, never a timeout per retry.
BUDGET_TIMEOUTS = 3
LIVE_RETRIES = 2  # transport retries of one call (connection errors, 408/409/429/5xx)
_BACKOFF_S = 0.5


class JudgeTimeout(Exception):
    """No reply within the request timeout or the judgement's time budget."""


@dataclass(frozen=True)
class Subject:
    """What is judged: an item's inputs and what its verdict must satisfy."""

    item_id: str
    category: str
    control: bool
    inputs: dict[str, Any]
    expect: tuple[Expectation, ...] = ()


@dataclass
class Call:
    """The settings of one judgement run."""

    backend: Backend
    price: Price
    live: bool
    ledger: Ledger | None = None
    is_fatal: Callable[[BaseException], bool] = lambda error: False
    run: str = "main"
    repeat: int = 0
    draw: int = 0
    sampling: Sampling | None = None  # None: the judge's production settings
    attempts: list[Attempt] = field(default_factory=list)
    timeout_s: float = DEFAULT_TIMEOUT_S
    # A callable judge's replies, as its cassette sees them (`cassettes.tapped`): what its
    # own calls used. The caller supplies it, so this module imports no cassette code.
    tap: Callable[[], AbstractContextManager[list[Any]]] = field(default=lambda: nullcontext([]))
    # Called with the thread of a callable that outlived its time (`cassettes.abandon`): its
    # later requests must land in no cassette, this one's or the next judgement's.
    abandon: Callable[[threading.Thread], None] = lambda thread: None

    @property
    def retries(self) -> int:
        return LIVE_RETRIES if self.live else 0


def _complete(
    call: Call,
    request: JudgeRequest,
    deadline: float,
    send: Callable[[JudgeRequest], JudgeResponse],
) -> JudgeResponse:
    """One call within the judgement's budget; transient failures are retried (live only).
    `send` makes one attempt: each retry is a call of its own, charged on its own."""
    budget = BUDGET_TIMEOUTS * call.timeout_s
    for retry in range(call.retries + 1):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise JudgeTimeout(
                f"the judgement used its whole time budget of {budget:g} s "
                f"({BUDGET_TIMEOUTS} x --judge-timeout {call.timeout_s:g}); "
                "raise --judge-timeout SECONDS for a slow server"
            )
        timeout = min(call.timeout_s, remaining)
        try:
            return send(replace(request, timeout=timeout))
        except Exception as error:
            if is_timeout(error) and not call.is_fatal(error):
                raise JudgeTimeout(
                    f"no reply within {timeout:g} s (--judge-timeout {call.timeout_s:g}); "
                    "raise --judge-timeout SECONDS for a slow server"
                ) from error
            if retry == call.retries or call.is_fatal(error) or not is_transient(error):
                raise
            time.sleep(min(_BACKOFF_S * 2**retry, max(remaining - timeout, 0.0)))
    raise AssertionError("unreachable: the last retry returns or raises")


# Every message of a chat template adds a few tokens of its own (role markers, separators).
_TEMPLATE_TOKENS = 64


def worst_case_tokens(request: JudgeRequest) -> int:
    """An upper bound on a request's prompt tokens: its UTF-8 bytes (a byte-level BPE token
    is at least one byte), the response schema's too, plus the chat template's own."""
    text = request.system + request.prompt + json.dumps(request.schema)
    return len(text.encode("utf-8")) + _TEMPLATE_TOKENS


def worst_case_usd(price: Price, request: JudgeRequest) -> float:
    """What one call can cost at most: every prompt byte a token, and `max_tokens` out."""
    return price.cost(worst_case_tokens(request), request.max_tokens)


def seed_for(base: int | None, draw: int, attempt: int, item_id: str | None = None) -> int | None:
    """The seed of one call: per run (`base` + offsets), or per item when an id is given."""
    if base is None:
        return None
    if item_id is None:
        return base + _DRAW_STRIDE * draw + attempt
    # A hash, not an offset: items, draws and retries get unrelated streams, none shared.
    key = f"{base}/{item_id}/{draw}/{attempt}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") >> 1  # below 2**31


def judge(spec: JudgeSpec, version: str, subject: Subject, call: Call) -> JudgementRow:
    """Judge one subject once; always returns a row (a verdict or an explicit error)."""
    if spec.team is not None:
        return _judge_with_callable(spec, spec.team, version, subject, call)
    return _Judgement(spec, version, subject, call).run()


def _judge_with_callable(
    spec: JudgeSpec, team: TeamJudge, version: str, subject: Subject, call: Call
) -> JudgementRow:
    """One judgement by the team's callable (judges.core.team_judge): its requests are its
    own, recorded or replayed by the cassette the caller opened around this call."""
    started = time.perf_counter()

    def row(status: Status, prompt: str, **values: Any) -> JudgementRow:
        return JudgementRow(
            judge=spec.name, prompt_version=version, prompt_hash=prompt,
            model=str(call.backend.model), item_id=subject.item_id, category=subject.category,
            control=subject.control, run=call.run, repeat=call.repeat, status=status,
            expect=list(subject.expect), live=call.live,
            latency_s=round(time.perf_counter() - started, 3), **values,
        )  # fmt: skip

    try:
        arguments = team.bind(subject.inputs)
    except TeamJudgeError as error:
        return row("error", "", met=False, error=str(error))
    prompt = judgement_hash(team.ref, version, arguments)
    ledger = call.ledger if call.live else None
    model = str(call.backend.model)
    usage = Usage()
    try:
        if ledger is not None:  # its calls are the team's own: the cap stops the next one
            ledger.ensure_budget()
        seen: list[list[Any]] = []

        def attempt() -> Any:
            with call.tap() as replies:  # the tap is per thread: opened where the code runs
                seen.append(replies)
                return team.call(arguments)

        budget = BUDGET_TIMEOUTS * call.timeout_s
        try:
            returned = within(attempt, budget, f"judges-callable-{subject.item_id}")
        except CallableTimeout as timeout:
            call.abandon(timeout.thread)  # what it sends from now on reaches no cassette
            raise
        finally:
            usage = _callable_usage(list(seen[0]) if seen else [], call.price, ledger, model)
    except CallableTimeout as timeout:
        message = (
            f"{team.ref} gave no verdict within {timeout.seconds:g} s ({BUDGET_TIMEOUTS} x "
            f"--judge-timeout {call.timeout_s:g}) and was abandoned: nothing it sends from "
            "now on is recorded or answered; raise --judge-timeout SECONDS for a slow judge"
        )
        return row("transport", prompt, met=False, error=message, usage=usage)
    except CostCapReached as error:
        return row("cost_cap", prompt, met=False, error=str(error), usage=usage)
    except Exception as error:
        if call.is_fatal(error):  # a replay miss fails its test; it is not a verdict
            raise
        message = f"{team.ref} raised {type(error).__name__}: {error}"
        found = unreachable(error)  # a dead server or a refused key stops a recording early
        if found is not None:
            message += "" if found.detail in message else f" ({found.detail})"
            return row("transport", prompt, met=False, error=message, usage=usage,
                       error_kind=found.kind)  # fmt: skip
        return row(failure_status(error), prompt, met=False, error=message, usage=usage)
    try:
        verdict = as_verdict(returned)
    except TeamJudgeError as error:
        return row("error", prompt, met=False, error=f"{team.ref} {error}", usage=usage)
    try:
        met = all(expectation.holds(verdict) for expectation in subject.expect)
    except Exception as error:
        checked = partial(row, prompt=prompt, usage=usage)
        return _error_row(checked, "checking the expectations", error, verdict)
    return row("ok", prompt, verdict=verdict, met=met, usage=usage)


def _callable_usage(replies: list[Any], price: Price, ledger: Ledger | None, model: str) -> Usage:
    """What a callable's calls used, by the usage each reply reports: charged to the
    ledger when live (a reply that reports none is counted as a call, at no known cost;
    its worst case is the team's, not the harness's, to bound)."""
    usage = Usage()
    for body in replies:
        reported = reported_usage(body, price)
        if ledger is not None:
            usage.add(ledger.settle("", model, 0.0, reported))
        else:
            usage.add(settlement(reported, 0.0))
    return usage


def first_requests(
    spec: JudgeSpec,
    version: str,
    subject: Subject,
    sampling: Sampling | None = None,
    draw: int = 0,
) -> dict[str | None, JudgeRequest]:
    """The request of each facet's first attempt, exactly as `judge` sends it in draw
    `draw` (an importer writes released replies under these requests, so that they replay
    offline; a batch recording submits them at once, before any reply is known)."""
    call = Call(backend=None, price=None, live=False, sampling=sampling, draw=draw)  # type: ignore[arg-type]
    judgement = _Judgement(spec, version, subject, call)
    return {
        facet: judgement._request(facet, spec.request_schema(version, facet, judgement.inputs), 0)
        for facet in judgement.rendered
    }


class _Ended(Exception):
    """A judgement ended early; carries its (error) row."""

    def __init__(self, row: JudgementRow) -> None:
        super().__init__(row.status)
        self.row = row


class _Judgement:
    """The state of one judgement: what was rendered, spent and replied so far."""

    def __init__(self, spec: JudgeSpec, version: str, subject: Subject, call: Call) -> None:
        self.spec, self.version, self.subject, self.call = spec, version, subject, call
        self.inputs = spec.parse_inputs(subject.inputs)
        facets: list[str | None] = list(spec.config.facets) or [None]
        fields = self.inputs.prompt_fields()
        self.rendered = {facet: spec.prompts[version].render(facet, fields) for facet in facets}
        self.usage = Usage()
        self.started = time.perf_counter()
        self.deadline = time.monotonic() + BUDGET_TIMEOUTS * call.timeout_s
        self.replies: dict[str | None, tuple[BaseModel, str]] = {}
        self.coerced: list[str] = []

    def run(self) -> JudgementRow:
        try:
            for facet in self.rendered:
                self.replies[facet] = self._reply(facet)
        except _Ended as ended:
            return ended.row
        return self._verdict_row()

    def row(self, status: Status, **values: Any) -> JudgementRow:
        spec, call, subject = self.spec, self.call, self.subject
        return JudgementRow(
            judge=spec.name,
            prompt_version=self.version,
            prompt_hash=prompt_hash(spec.config.system, self.rendered),
            model=str(call.backend.model),
            item_id=subject.item_id,
            category=subject.category,
            control=subject.control,
            run=call.run,
            repeat=call.repeat,
            status=status,
            expect=list(subject.expect),
            attempts=call.attempts,
            usage=self.usage,
            live=call.live,
            latency_s=round(time.perf_counter() - self.started, 3),
            **values,
        )

    def _reply(self, facet: str | None) -> tuple[BaseModel, str]:
        """A parsed reply for one facet, asking again on a bad reply (bounded)."""
        reply_model = self.spec.reply_model(self.version, facet)
        schema = self.spec.request_schema(self.version, facet, self.inputs)
        last_error: ReplyError | None = None
        for attempt in range(self.spec.config.max_attempts):
            response = self._send(self._request(facet, schema, attempt))
            try:
                reply, conversions = _parse(
                    self.spec, response.text, reply_model, response.truncated
                )
            except ReplyError as error:
                last_error = error
                self.call.attempts.append(
                    Attempt(facet=facet, attempt=attempt, text=response.text,
                            error=str(error), error_kind=error.kind)
                )  # fmt: skip
                continue
            # The verdict keeps this reply as its `raw`: the attempt does not repeat it.
            self.call.attempts.append(Attempt(facet=facet, attempt=attempt, text=None))
            self.coerced += [f"{facet}.{c}" if facet else c for c in conversions]
            return reply, response.text
        where = f" ({facet})" if facet else ""
        raise _Ended(
            self.row(
                "unparseable",
                error=f"no usable reply{where} after {self.spec.config.max_attempts} "
                f"attempts; last: {last_error}",
            )
        )

    def _request(self, facet: str | None, schema: Any, attempt: int) -> JudgeRequest:
        sampling = self.call.sampling or self.spec.config.sampling
        item = self.subject.item_id if sampling.seed_per_item else None
        return JudgeRequest(
            system=self.spec.config.system,
            prompt=self.rendered[facet],
            schema_name=f"{self.spec.name}_{facet or 'verdict'}",
            schema=schema,
            max_tokens=sampling.max_tokens,
            temperature=sampling.temperature,
            seed=seed_for(sampling.seed, self.call.draw, attempt, item),
        )

    def _send(self, request: JudgeRequest) -> JudgeResponse:
        """One call (its retries included), charged to the row's usage and the ledger."""
        call = self.call
        try:
            return _complete(call, request, self.deadline, self._attempt)
        except CostCapReached as error:
            raise _Ended(self.row("cost_cap", error=str(error))) from None
        except Exception as error:
            if call.is_fatal(error):
                raise
            message = f"{type(error).__name__}: {error}"
            found = unreachable(error)
            if found is None:
                raise _Ended(self.row("transport", error=message)) from None
            if found.detail not in message:
                message += f" ({found.detail})"
            raise _Ended(self.row("transport", error=message, error_kind=found.kind)) from None

    def _attempt(self, request: JudgeRequest) -> JudgeResponse:
        """One attempt, settled by what the provider may bill for it.

        Live, its worst-case cost is reserved before sending, so calls in flight never pass
        the cap. A reply settles it at its reported usage, or at the worst case when it
        reported none; a failure after the request left (a reply cut off) at the worst
        case too; a failure before it left, or an error status, releases it."""
        call = self.call
        worst = worst_case_usd(call.price, request)
        ledger = call.ledger if call.live else None
        model = str(call.backend.model)
        hold = ledger.reserve(model, worst) if ledger is not None else ""
        try:
            response = call.backend.complete(request)
        except BaseException as error:
            sent = call.live and isinstance(error, Exception) and not call.is_fatal(error)
            if sent and worst > 0 and may_have_been_billed(error):
                self._charge(ledger, hold, worst, None)
            elif ledger is not None:
                ledger.release(hold)
            raise
        cost = call.price.cost(response.input_tokens, response.output_tokens)
        tokens = Reported(response.input_tokens, response.output_tokens, cost)
        self._charge(ledger, hold, worst, tokens if response.usage_reported else None)
        return response

    def _charge(
        self, ledger: Ledger | None, hold: str, worst: float, reported: Reported | None
    ) -> None:
        # A replay charges no ledger, but its row counts the call as the recording did.
        if ledger is None:
            self.usage.add(settlement(reported, worst))
        else:
            self.usage.add(ledger.settle(hold, str(self.call.backend.model), worst, reported))

    def _verdict_row(self) -> JudgementRow:
        try:
            verdict = self.spec.build_verdict(self.replies, self.inputs, self.version)
            dump = verdict.model_dump(mode="json")
        except Exception as error:
            return _error_row(self.row, "building the verdict", error, _raw(self.replies))
        status = dump.get("status", "ok")
        if status != "ok":
            missing = dump.get("missing") or []
            return self.row(
                status,
                verdict=dump,
                met=False,
                coerced=self.coerced,
                error=f"{status}: missing {missing}",
            )
        try:
            met = all(expectation.holds(dump) for expectation in self.subject.expect)
        except Exception as error:
            return _error_row(self.row, "checking the expectations", error, dump)
        return self.row("ok", verdict=dump, met=met, coerced=self.coerced)


def _parse(
    spec: JudgeSpec, text: str, reply_model: type[BaseModel], truncated: bool
) -> tuple[BaseModel, list[str]]:
    """Strict unless the judge opted in to lenient parsing (`coerce = true`)."""
    if spec.config.coerce:
        return parse_reply_coercing(text, reply_model, truncated=truncated)
    return parse_reply(text, reply_model, truncated=truncated), []


def _raw(replies: dict[str | None, tuple[BaseModel, str]]) -> dict[str, Any]:
    """The replies as a verdict's `raw` field, for a row whose verdict could not be built."""
    if list(replies) == [None]:
        return {"raw": replies[None][1]}
    return {"raw": {str(facet): text for facet, (_, text) in replies.items()}}


def _error_row(
    row: Callable[..., JudgementRow],
    step: str,
    error: Exception,
    verdict: dict[str, Any],
) -> JudgementRow:
    """A judge module or an expectation raised: an `error` row saying what, never a crash."""
    message = f"{step} raised {type(error).__name__}: {error}"
    return row("error", verdict=verdict, met=False, error=message)
