"""Where the finale's judge calls are recorded, and the `Call` factory that replays them.

`<root>/<judge-model-slug>/<run>/<episode>.yaml`; the cross-check's cassette ends
`.cross.yaml`. Each slot is judged inside its cassette through the cassette facade
(`judges.calls.cassettes.in_cassette`), as the pytest session's judgements are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from judges.calls.backends import Backend, JudgeRequest, JudgeResponse, ModelRef, Price
from judges.calls.cassettes import CassetteMiss, in_cassette, is_replay_miss
from judges.calls.ledger import Ledger, Reported
from judges.core.naming import safe_name
from judges.core.runner import Call, worst_case_usd
from judges.finale.config import PRIMARY, FinaleError
from judges.finale.plan import CallSlot, JudgeCallFactory

__all__ = ["CassetteMissing", "cassette_factory", "cassette_path"]


def cassette_path(root: Path, model: ModelRef, run: str, episode_id: str, role: str) -> Path:
    """`<root>/<judge-model-slug>/<run>/<episode>.yaml`; the cross-check's ends `.cross.yaml`."""
    suffix = "" if role == PRIMARY else f".{role}"
    return root / model.slug / safe_name(run) / f"{safe_name(episode_id)}{suffix}.yaml"


class CassetteMissing(FinaleError):
    """A replayed judgement has no recorded response."""


class _ReplayBudget:
    """In a replay, charge the ledger with each recorded call as the live run did.

    The runner keeps the ledger only for live calls; without this a replay of a cost-capped
    recording would run past the point where the recording stopped and miss its cassettes.
    """

    def __init__(self, inner: Backend, price: Price, ledger: Ledger) -> None:
        self.model = inner.model
        self.inner = inner
        self.price = price
        self.ledger = ledger

    def complete(self, request: JudgeRequest) -> JudgeResponse:
        self.ledger.ensure_budget()
        response = self.inner.complete(request)
        cost = self.price.cost(response.input_tokens, response.output_tokens)
        tokens = Reported(response.input_tokens, response.output_tokens, cost)
        # As the live run settled it: a reply without usage at its worst case.
        reported = tokens if response.usage_reported else None
        self.ledger.settle("", str(self.model), worst_case_usd(self.price, request), reported)
        return response


def cassette_factory(
    root: Path,
    *,
    record: bool,
    backends: Mapping[str, Backend],
    prices: Mapping[str, Price],
    record_command: str,
) -> JudgeCallFactory:
    """A `Call` per slot inside its cassette; a replay miss raises `CassetteMissing`."""

    @contextmanager
    def factory(slot: CallSlot) -> Iterator[Call]:
        path = cassette_path(root, slot.model, slot.finalist, slot.episode_id, slot.role)
        price = prices[str(slot.model)]
        backend = backends[str(slot.model)]
        if not record and slot.ledger.cap_usd is not None:
            backend = _ReplayBudget(backend, price, slot.ledger)
        try:
            with in_cassette(path, slot.model, record=record):
                yield Call(
                    backend=backend, price=price, live=record, ledger=slot.ledger,
                    is_fatal=is_replay_miss, run=slot.role, sampling=slot.sampling,
                )  # fmt: skip
        except CassetteMiss as miss:
            if miss.unreadable:
                raise CassetteMissing(
                    f"{miss.unreadable}.\nRecord the finale with:  {record_command}"
                ) from None
            state = (
                "does not exist" if not path.is_file()
                else "does not hold this request (the recording stopped earlier, e.g. at a "
                "lower cost cap, or the prompt, summary, transcript or sampling changed since)"
            )  # fmt: skip
            raise CassetteMissing(
                f"no recorded {slot.role} judgement of {slot.finalist} on {slot.episode_id} "
                f"({slot.model}): cassette {path} {state}.\n"
                f"Record the finale with:  {record_command}"
            ) from None

    return factory
