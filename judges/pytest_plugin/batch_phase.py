"""The batch record phase (`--record --batch`): the judgements of a record phase, sent
through the providers' batch APIs at their batch price and outside their rate limits.

In rounds, until every selected cassette is written:

1. plan (`batch_plan`): which cassettes can be written from the outcomes there are, and
   which requests are still needed;
2. write those cassettes: each judgement runs as its test would, its requests answered from
   the outcomes and recorded by vcrpy (`cassettes.answering`): the cassette a synchronous
   recording of the same replies writes, and the same rows;
3. submit what is needed, one batch per model (at most BATCH_MAX requests), each batch's
   worst case reserved against `--cost-cap` first (refused whole, with the figures), saved
   in the store before it is created;
4. poll the open batches (progress: status, counts, elapsed) and download those that ended;
   each reply is charged to the ledger at the batch price, used or not.

Interrupted, the store keeps everything: `--resume` polls the same batches again. Requests
that came back without a reply (expired, errored) end their judgements as error rows; a
resumed session submits those alone again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judges.calls.backends import (
    ModelRef,
    backend_of,
    is_transient,
    make_backend,
    open_batch_api,
    price_for,
)
from judges.calls.batch.answers import Cursor, usage_of, worst_usd
from judges.calls.batch.api import BatchAPI
from judges.calls.batch.store import BatchStore, Planned, Submitted
from judges.calls.cassettes import answering, threaded_recording
from judges.calls.ledger import CostCapReached, Reported
from judges.core.results import JudgementRow
from judges.pytest_plugin.batch_plan import Planner
from judges.pytest_plugin.record_phase import Judgement
from judges.pytest_plugin.row_journal import RowJournal
from judges.pytest_plugin.session import JudgesSession

BATCH_MAX = 10_000  # requests per batch (OpenAI takes 50 000, Anthropic 100 000)
DEFAULT_POLL_S = 60.0
RESUME = "pytest --record --batch --resume"


class BatchError(Exception):
    """The batch phase cannot go on as asked (cap, an unfinished recording, the API)."""


def check_store(store: BatchStore, resume: bool) -> None:
    """A recording left unfinished is resumed, never submitted again by accident."""
    if store.exists and not resume:
        open_batches = len(store.open_batches())
        raise BatchError(
            f"a batch recording into {store.cassettes} is unfinished ({open_batches} batch(es) "
            f"not downloaded, {len(store.failed())} request(s) failed): resume it with "
            f"`{RESUME}` (the same options), or delete {store.folder} to start afresh (what "
            "was submitted is paid for either way)"
        )


@dataclass
class BatchPhase:
    session: JudgesSession
    store: BatchStore
    write: Callable[[str, bool], None]  # (line, final), as the record phase's progress
    journal: RowJournal  # the phase's (`row_journal`)
    poll_s: float = DEFAULT_POLL_S
    apis: dict[str, BatchAPI] = field(default_factory=dict)
    holds: dict[str, str] = field(default_factory=dict)  # batch key -> ledger hold
    started: float = field(default_factory=time.monotonic)
    written: int = 0

    def api(self, model: str) -> BatchAPI:
        if model not in self.apis:
            ref = ModelRef.parse(model)
            base_url = self.session.settings.base_url
            backend: Any = make_backend(ref, base_url=base_url, live=True)
            self.apis[model] = open_batch_api(ref, backend.client)
        return self.apis[model]

    def run(self, judgements: Sequence[Judgement]) -> dict[Path, list[JudgementRow]]:
        """Record every judgement through batches; Ctrl-C keeps the store and re-raises."""
        for model in {str(j.case.model) for j in judgements}:
            kind = backend_of(model)
            if kind.batch_api is None:
                raise BatchError(
                    f"{model} is {kind.served}: it has no batch API; record it without --batch"
                )
        retried = self.store.retire_failed()
        if retried:
            self.write(f"judges batch: retrying {retried} failed request(s) alone", True)
        for batch in self.store.open_batches():  # submitted by an earlier session
            self.holds[batch.key] = self.session.ledger.hold(batch.model, batch.hold_usd)
        planner = Planner(self.session)
        recorded: dict[Path, list[JudgementRow]] = {}
        remaining = list(judgements)
        try:
            with threaded_recording():
                while remaining:
                    plan = planner.plan(self.store, remaining)
                    for judgement in plan.writable:
                        recorded[judgement.path] = self._write(judgement)
                    written = {j.path for j in plan.writable}
                    remaining = [j for j in remaining if j.path not in written]
                    if plan.needed:
                        self._submit(plan.needed)
                    if remaining:
                        self._poll_until_one_ends(len(judgements))
        except KeyboardInterrupt:
            self.write(self._line(len(judgements)), True)
            self.write(
                f"judges batch: interrupted; the batches go on at the provider and "
                f"are kept in {self.store.folder}: resume with  {RESUME}",
                True,
            )
            raise
        self.write(self._line(len(judgements)), True)
        self._finish()
        return recorded

    def _finish(self) -> None:
        failed = self.store.failed()
        unwritten = self.store.unwritten()
        if failed:
            self.write(
                f"judges batch: {len(failed)} request(s) came back without a reply: "
                f"their judgements are error rows; retry those alone with  {RESUME}",
                True,
            )
        elif unwritten:  # an earlier session asked for tests not selected in this one
            self.write(
                f"judges batch: replies for {len(unwritten)} cassette(s) of tests not "
                f"selected now are kept in {self.store.folder}; select them and run  {RESUME}",
                True,
            )
        else:
            self.store.remove()  # every reply is in the cassettes now

    # -- writing ---------------------------------------------------------------------

    def _write(self, judgement: Judgement) -> list[JudgementRow]:
        cursor = Cursor(
            self.store,
            self.store.pools(),
            judgement.path.relative_to(self.store.cassettes).as_posix(),
        )
        with answering(cursor.answer):
            rows = judgement.judge(self.session)
        self.journal.append(judgement.path, rows)
        self.store.mark_written(judgement.path)
        self.written += 1
        return rows

    # -- submitting ------------------------------------------------------------------

    def _submit(self, needed: list[tuple[Judgement, dict[str, Any]]]) -> None:
        by_model: dict[str, list[tuple[Judgement, dict[str, Any]]]] = {}
        for judgement, body in needed:
            by_model.setdefault(str(judgement.case.model), []).append((judgement, body))
        for model, wanted in sorted(by_model.items()):
            price = price_for(self.session.prices, ModelRef.parse(model))
            for start in range(0, len(wanted), BATCH_MAX):
                requests = [
                    self.store.new_request(j.path, model, body, worst_usd(price, body))
                    for j, body in wanted[start : start + BATCH_MAX]
                ]
                self._submit_one(model, requests)

    def _submit_one(self, model: str, requests: list[Planned]) -> None:
        worst = sum(r.worst_usd for r in requests)
        ledger = self.session.ledger
        try:
            hold = ledger.reserve(model, worst)
        except CostCapReached:
            spent, held, cap = ledger.spent_usd(), ledger.held_usd(), ledger.cap_usd or 0.0
            raise BatchError(
                f"cost cap: a batch of {len(requests)} request(s) to {model} may cost up to "
                f"${worst:.4f} at batch prices, and ${spent:.4f} spent + ${held:.4f} held of "
                f"the ${cap:.4f} cap leave ${max(cap - spent - held, 0.0):.4f}; nothing was "
                "submitted. Raise --cost-cap or select fewer tests"
            ) from None
        api = self.api(model)
        batch = self.store.add_batch(api.provider, model, requests, worst, time.time())
        self.holds[batch.key] = hold
        self._create(api, batch)

    def _create(self, api: BatchAPI, batch: Submitted) -> str:
        """Submit the batch; its id, also saved with it."""
        requests = [self.store.manifest.requests[c] for c in batch.custom_ids]
        try:
            batch_id = batch.batch_id = api.submit(batch, requests)
        except Exception as error:
            raise BatchError(
                f"creating a batch of {len(requests)} request(s) for {batch.model} failed: "
                f"{type(error).__name__}: {error}. It is kept in {self.store.folder}: "
                f"`{RESUME}` finds it if it was created, or submits it again"
            ) from None
        batch.status = "submitted"
        self.store.save()
        self.write(
            f"judges batch: submitted {batch.batch_id} ({len(requests)} request(s) "
            f"to {batch.model}, up to ${batch.hold_usd:.4f})",
            True,
        )
        return batch_id

    # -- polling ---------------------------------------------------------------------

    def _poll_until_one_ends(self, total: int) -> None:
        """Poll the open batches until at least one ended and was downloaded."""
        if not self.store.open_batches():
            raise BatchError("the batch phase has judgements left but no batch to wait for")
        while True:
            try:
                ended = self._poll()
            except Exception as error:
                if not is_transient(error):
                    raise BatchError(
                        f"polling the batches failed: {type(error).__name__}: {error}. They "
                        f"are kept in {self.store.folder}: go on with  {RESUME}"
                    ) from None
                self.write(f"judges batch: polling failed ({error}); trying again", True)
                ended = False
            self.write(self._line(total), False)
            if ended:
                return
            time.sleep(self.poll_s)

    def _poll(self) -> bool:
        ended = False
        for batch in self.store.open_batches():
            api = self.api(batch.model)
            if batch.batch_id is None:  # saved, then the session stopped: created or not?
                found = api.find(batch)
                batch.batch_id = found if found is not None else self._create(api, batch)
                self.store.save()
            state = api.state(batch.batch_id)
            batch.status, batch.ended = state.status, state.ended
            batch.counts = {"done": state.done, "failed": state.failed, "total": state.total}
            if state.ended:
                self._download(api, batch)
                ended = True
        self.store.save()
        return ended

    def _download(self, api: BatchAPI, batch: Submitted) -> None:
        outcomes = api.outcomes(batch)
        self.store.add_outcomes(outcomes)
        price = price_for(self.session.prices, ModelRef.parse(batch.model))
        ledger = self.session.ledger
        requests = self.store.manifest.requests
        for outcome in outcomes:
            if outcome.body is not None:  # billed whether or not a cassette uses it
                tokens = usage_of(outcome.body)
                reported = None if tokens is None else Reported(*tokens, price.cost(*tokens))
                worst = requests[outcome.custom_id].worst_usd
                ledger.settle("", batch.model, worst, reported)  # no usage: its worst case
        ledger.release(self.holds.pop(batch.key, ""))
        batch.downloaded = True
        self.store.save()

    def _line(self, total: int) -> str:
        batches = self.store.manifest.batches
        states = ", ".join(
            f"{b.batch_id or b.key[:8]} {b.status} {b.counts.get('done', 0)}/"
            f"{b.counts.get('total', len(b.custom_ids))}"
            for b in batches
            if not b.downloaded
        )
        elapsed = time.monotonic() - self.started
        spent = self.session.ledger.spent_usd()
        return (
            f"judges batch: {self.written}/{total} cassettes written; "
            f"{len(self.store.outcomes)}/{len(self.store.manifest.requests)} replies in"
            f"{'; open: ' + states if states else ''}; ${spent:.4f} spent; "
            f"{elapsed:.0f}s elapsed"
        )
