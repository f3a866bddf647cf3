"""One judgement, in one direction: render -> call (bounded retry) -> verdict -> result row.

Knows no pytest and no vcrpy: the caller passes a backend (whose HTTP may be recorded or
replayed) and says which exceptions must not become error rows (a cassette miss must fail
the test loudly, not hide as a `transport` row).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from judges.calls.backends import Backend, JudgeRequest, Price
from judges.calls.ledger import CostCapReached, Ledger
from judges.core.parsing import ReplyError, parse_reply, parse_reply_coercing
from judges.core.results import Attempt, Expectation, JudgementRow, Usage
from judges.core.spec import JudgeSpec, Sampling, prompt_hash

# Seeds of independent draws stay far apart so retries of one never meet another's.
_DRAW_STRIDE = 1000


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


def seed_for(base: int | None, draw: int, attempt: int) -> int | None:
    return None if base is None else base + _DRAW_STRIDE * draw + attempt


def judge(spec: JudgeSpec, version: str, subject: Subject, call: Call) -> JudgementRow:
    """Judge one subject once; always returns a row (a verdict or an explicit error)."""
    inputs = spec.parse_inputs(subject.inputs)
    prompt = spec.prompts[version]
    facets: list[str | None] = list(spec.config.facets) or [None]
    fields = inputs.prompt_fields()  # type: ignore[attr-defined]
    rendered = {facet: prompt.render(facet, fields) for facet in facets}
    usage = Usage()
    started = time.perf_counter()

    def row(status: str, **values: Any) -> JudgementRow:
        return JudgementRow(
            judge=spec.name,
            prompt_version=version,
            prompt_hash=prompt_hash(spec.config.system, rendered),
            model=str(call.backend.model),
            item_id=subject.item_id,
            category=subject.category,
            control=subject.control,
            run=call.run,
            repeat=call.repeat,
            status=status,  # type: ignore[arg-type]
            expect=list(subject.expect),
            attempts=call.attempts,
            usage=usage,
            live=call.live,
            latency_s=round(time.perf_counter() - started, 3),
            **values,
        )

    replies: dict[str | None, tuple[BaseModel, str]] = {}
    coerced: list[str] = []
    for facet in facets:
        reply_model = spec.reply_model(version, facet)
        request_schema = spec.request_schema(version, facet, inputs)
        last_error: ReplyError | None = None
        for attempt in range(spec.config.max_attempts):
            sampling = call.sampling or spec.config.sampling
            request = JudgeRequest(
                system=spec.config.system,
                prompt=rendered[facet],
                schema_name=f"{spec.name}_{facet or 'verdict'}",
                schema=request_schema,
                max_tokens=sampling.max_tokens,
                temperature=sampling.temperature,
                seed=seed_for(sampling.seed, call.draw, attempt),
            )
            try:
                if call.live and call.ledger is not None:
                    call.ledger.ensure_budget()
                response = call.backend.complete(request)
            except CostCapReached as error:
                return row("cost_cap", error=str(error))
            except Exception as error:
                if call.is_fatal(error):
                    raise
                return row("transport", error=f"{type(error).__name__}: {error}")
            cost = call.price.cost(response.input_tokens, response.output_tokens)
            usage.calls += 1
            usage.input_tokens += response.input_tokens
            usage.output_tokens += response.output_tokens
            usage.cost_usd = round(usage.cost_usd + cost, 8)
            if call.live and call.ledger is not None:
                call.ledger.charge(
                    str(call.backend.model), response.input_tokens, response.output_tokens, cost
                )
            try:
                reply, conversions = _parse(spec, response.text, reply_model, response.truncated)
            except ReplyError as error:
                last_error = error
                call.attempts.append(
                    Attempt(facet=facet, attempt=attempt, text=response.text,
                            error=str(error), error_kind=error.kind)
                )  # fmt: skip
                continue
            call.attempts.append(Attempt(facet=facet, attempt=attempt, text=response.text))
            replies[facet] = (reply, response.text)
            coerced += [f"{facet}.{c}" if facet else c for c in conversions]
            break
        else:
            where = f" ({facet})" if facet else ""
            return row(
                "unparseable",
                error=f"no usable reply{where} after {spec.config.max_attempts} attempts; "
                f"last: {last_error}",
            )

    verdict = spec.build_verdict(replies, inputs, version)
    dump = verdict.model_dump(mode="json")
    status = dump.get("status", "ok")
    if status != "ok":
        missing = dump.get("missing") or []
        return row(
            status, verdict=dump, met=False, coerced=coerced, error=f"{status}: missing {missing}"
        )
    met = all(expectation.holds(dump) for expectation in subject.expect)
    return row("ok", verdict=dump, met=met, coerced=coerced)


def _parse(
    spec: JudgeSpec, text: str, reply_model: type[BaseModel], truncated: bool
) -> tuple[BaseModel, list[str]]:
    """Strict unless the judge opted in to lenient parsing (`coerce = true`)."""
    if spec.config.coerce:
        return parse_reply_coercing(text, reply_model, truncated=truncated)
    return parse_reply(text, reply_model, truncated=truncated), []
