"""The batch recording's planning and store, on the project's own G-Eval set (four facets,
each a request of its own): every facet is asked in the first round, a reply retry waits for
the next, a failed request ends its judgement; the store survives a torn write; batch prices
come from the price table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.calls.backends import BackendError, ModelRef, Price, load_batch_prices
from judges.calls.batch.store import RESULTS, BatchStore, Outcome, body_key
from judges.core.naming import Case
from judges.pytest_plugin.batch_plan import Planner
from judges.pytest_plugin.record_phase import Judgement, gather
from judges.pytest_plugin.session import JudgesSession, RecordMode, Settings

ROOT = Path(__file__).resolve().parent.parent
MODEL = ModelRef.parse("openai:gpt-4o-mini")


def _session(tmp_path: Path) -> JudgesSession:
    settings = Settings(
        rootdir=tmp_path,
        record=RecordMode.ALL,
        models=(MODEL,),
        cassettes=tmp_path / "cassettes",
        planted_sets=ROOT / "planted_sets",
        batch=True,
    )
    return JudgesSession(settings)


def _judgement(session: JudgesSession, run: str = "main") -> Judgement:
    item = session.catalogue.planted_sets["geval"].item("GE-01")
    version = session.catalogue.catalog["geval"].versions[-1]
    case = Case("geval", version, MODEL, item.id, item.slug)
    (judgement,) = gather(session, [(run, case, "test_geval")])
    return judgement


def _submit(store: BatchStore, judgement: Judgement, bodies: list[dict]) -> list[str]:
    requests = [store.new_request(judgement.path, str(MODEL), b, 0.0) for b in bodies]
    store.add_batch("openai", str(MODEL), requests, 0.0, 0.0)
    return [r.custom_id for r in requests]


def _completion(text: str) -> dict:
    message = {"role": "assistant", "content": text}
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def test_every_facet_is_asked_in_the_first_round(tmp_path: Path) -> None:
    session = _session(tmp_path)
    judgement = _judgement(session)
    store = BatchStore(session.settings.cassettes)

    plan = Planner(session).plan(store, [judgement])

    facets = session.catalogue.catalog["geval"].config.facets
    assert len(facets) == 4 and len(plan.needed) == len(facets)
    bodies = [body for _, body in plan.needed]
    assert len({body_key(b) for b in bodies}) == len(facets)
    assert [b["response_format"]["json_schema"]["name"] for b in bodies] == [
        f"geval_{facet}" for facet in facets
    ]
    assert plan.writable == [] and plan.awaiting == []

    # Submitted, not yet back: the judgement waits, nothing is asked twice.
    _submit(store, judgement, bodies)
    plan = Planner(session).plan(store, [judgement])
    assert plan.needed == [] and plan.awaiting == [judgement]


def test_an_unusable_reply_asks_for_that_facet_again_and_nothing_else(tmp_path: Path) -> None:
    session = _session(tmp_path)
    judgement = _judgement(session)
    store = BatchStore(session.settings.cassettes)
    bodies = [body for _, body in Planner(session).plan(store, [judgement]).needed]
    ids = _submit(store, judgement, bodies)
    store.add_outcomes([Outcome(custom_id=c, body=_completion("not a verdict")) for c in ids])

    plan = Planner(session).plan(store, [judgement])

    ((_, retry),) = plan.needed  # the first facet's second attempt: its own seed
    assert retry["response_format"] == bodies[0]["response_format"]
    assert retry["seed"] != bodies[0]["seed"]
    assert plan.writable == [] and plan.awaiting == []


def test_a_request_without_a_reply_ends_its_judgement_as_written(tmp_path: Path) -> None:
    session = _session(tmp_path)
    judgement = _judgement(session)
    store = BatchStore(session.settings.cassettes)
    bodies = [body for _, body in Planner(session).plan(store, [judgement]).needed]
    ids = _submit(store, judgement, bodies)
    store.add_outcomes([Outcome(custom_id=c, error="expired: no reply") for c in ids])

    plan = Planner(session).plan(store, [judgement])

    assert plan.writable == [judgement] and plan.needed == []
    # A resumed session gives the failed requests up and asks for them again.
    assert store.retire_failed() == len(ids)
    plan = Planner(session).plan(store, [judgement])
    assert [body_key(b) for _, b in plan.needed] == [body_key(b) for b in bodies]


def test_the_store_survives_a_torn_write_and_keeps_submission_order(tmp_path: Path) -> None:
    store = BatchStore(tmp_path)
    path = tmp_path / "j" / "1.0" / "m" / "A.yaml"
    body = {"model": "m", "seed": None}
    requests = [store.new_request(path, "openai:m", body, 0.1) for _ in range(3)]
    store.add_batch("openai", "openai:m", requests, 0.3, 1.0)
    store.add_outcomes([Outcome(custom_id=requests[0].custom_id, body={"ok": 1})])
    with (store.folder / RESULTS).open("a", encoding="utf-8") as stream:
        stream.write('{"custom_id": "jr000000')  # killed mid-line

    again = BatchStore(tmp_path)

    assert list(again.outcomes) == [requests[0].custom_id]
    pool = again.pools()[("j/1.0/m/A.yaml", body_key(json.loads(json.dumps(body))))]
    assert pool == [r.custom_id for r in requests]
    assert [b.hold_usd for b in again.open_batches()] == [0.3]
    again.remove()
    assert not BatchStore(tmp_path).exists


def test_batch_prices_come_from_the_table_or_its_discount(tmp_path: Path) -> None:
    extra = tmp_path / "prices.toml"
    extra.write_text(
        'batch_discount = 0.4\n[models."openai:x"]\ninput_per_mtok = 10\noutput_per_mtok = 20\n'
        '[models."openai:y"]\ninput_per_mtok = 1\noutput_per_mtok = 2\n'
        "batch_input_per_mtok = 0.7\nbatch_output_per_mtok = 0.9\n",
        encoding="utf-8",
    )
    prices = load_batch_prices(extra)
    assert prices["openai:x"] == Price(4.0, 8.0)
    assert prices["openai:y"] == Price(0.7, 0.9)
    assert prices["openai:gpt-4o-mini"] == Price(0.075, 0.30)  # the default table's own
    extra.write_text("batch_discount = 1.5\n", encoding="utf-8")
    with pytest.raises(BackendError, match="batch_discount"):
        load_batch_prices(extra)
