"""What a batch recording still has to submit, and which cassettes it can write now.

Each judgement is run as its test would run it (the runner, the official SDK, the same
requests), with every request answered from the batch store (`calls.batch.answers`). A judgement
whose every request has an outcome can be written; one that stops at a request without an
outcome needs that request submitted, and also the first attempt of each facet it has not
reached (every facet is asked in one round, not one facet per 24-hour round). Only reply
retries after an unusable reply wait for another round, as they would in a synchronous
recording.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judges.calls.backends import ModelRef, Price, make_backend
from judges.calls.batch.answers import Cursor, PlanTransport, http_library, stopped
from judges.calls.batch.store import BatchStore
from judges.core.runner import Call, first_requests, judge
from judges.pytest_plugin.record_phase import Judgement
from judges.pytest_plugin.session import JudgesSession


@dataclass
class Plan:
    writable: list[Judgement] = field(default_factory=list)
    needed: list[tuple[Judgement, dict[str, Any]]] = field(default_factory=list)
    awaiting: list[Judgement] = field(default_factory=list)


class Planner:
    def __init__(self, session: JudgesSession) -> None:
        self.session = session
        self.transport = PlanTransport()
        self._backends: dict[str, Any] = {}

    def backend(self, model: ModelRef) -> Any:
        """The model's SDK backend, built as the session builds it, sending to the planner."""
        if str(model) not in self._backends:
            base_url = self.session.settings.base_url
            backend: Any = make_backend(model, base_url=base_url, live=False)
            # A client of the SDK's own HTTP library (httpx2 for openai 3, httpx for 2).
            http = http_library(backend.client._client)
            backend.client = backend.client.with_options(
                http_client=http.Client(transport=self.transport)
            )
            self._backends[str(model)] = backend
        return self._backends[str(model)]

    def plan(self, store: BatchStore, judgements: Sequence[Judgement]) -> Plan:
        plan = Plan()
        pools = store.pools()
        for judgement in judgements:
            cursor, complete = self.walk(store, pools, judgement)
            if complete:
                plan.writable.append(judgement)
                continue
            plan.needed += [(judgement, body) for body in cursor.needed]
            if cursor.awaiting:
                plan.awaiting.append(judgement)
        return plan

    def cursor(self, store: BatchStore, pools: Any, judgement: Judgement) -> Cursor:
        relative = judgement.path.relative_to(store.cassettes).as_posix()
        return Cursor(store, pools, relative)

    def walk(self, store: BatchStore, pools: Any, judgement: Judgement) -> tuple[Cursor, bool]:
        """Run one judgement on the outcomes there are: (its cursor, whether it completed)."""
        session, case, run_plan = self.session, judgement.case, judgement.plan
        spec = session.catalogue.catalog[case.judge]
        subject = judgement.subject or session.catalogue.subject(case)
        backend = self.backend(case.model)
        cursor = self.cursor(store, pools, judgement)
        self.transport.cursor = cursor
        complete = True
        for repeat in range(run_plan.repeats_for(case.version)):
            call = Call(
                backend=backend,
                price=Price(0.0, 0.0),
                live=False,
                is_fatal=lambda error: stopped(error) is not None,
                run=judgement.run,
                repeat=repeat,
                draw=run_plan.draw_offset + repeat,
                sampling=run_plan.sampling,
                timeout_s=session.settings.judge_timeout_s,
            )
            self.transport.sent.clear()
            try:
                judge(spec, case.version, subject, call)
                continue
            except Exception as error:
                if stopped(error) is None:
                    raise
            complete = False
            self.transport.claiming = True
            try:
                firsts = first_requests(spec, case.version, subject, call.sampling, call.draw)
                for request in firsts.values():
                    try:
                        backend.complete(request)
                    except Exception as error:
                        if stopped(error) is None:
                            raise
            finally:
                self.transport.claiming = False
        self.transport.cursor = None
        return cursor, complete
