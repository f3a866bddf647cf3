"""Time the record phase: N live judgements against a fake judge server with a fixed latency,
at several concurrencies, and compare each with the ideal (calls x latency / concurrency).

Run by hand: python benchmarks/bench_record_concurrency.py [--calls 400] [--latency 1.0]
    [--concurrency 1,8,32] [--sequential-subset 20]
          or python benchmarks/bench_record_concurrency.py --quick   (seconds; the test suite
    runs it: 6 judgements at 20 ms, concurrency 1 and 3)

The server is the integration tests' fake OpenAI-compatible judge (tests/integration), in
a thread of this process on 127.0.0.1; each chat completion waits `--latency` seconds
before it answers. The planted set is product_identity with enough items that its prompt
versions x items give `--calls` judgements. Each concurrency records every judgement afresh
through `judges.pytest_plugin.record_phase.record_all`, exactly as `pytest --record` does before the
tests. Concurrency 1 is measured on the first `--sequential-subset` judgements only (400 s
otherwise) and extrapolated linearly; the table says so. After each round the cassettes are
compared byte for byte with the first round's: they must be identical. Nothing asserts on
time: the numbers are printed, not judged.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judges.calls.backends import ModelRef  # noqa: E402
from judges.calls.progress import Progress  # noqa: E402
from judges.core.naming import Case  # noqa: E402
from judges.pytest_plugin import record_phase  # noqa: E402
from judges.pytest_plugin.row_journal import RowJournal  # noqa: E402
from judges.pytest_plugin.session import JudgesSession, RecordMode, Settings  # noqa: E402
from tests.integration._support import (  # noqa: E402
    JUDGE,
    MODEL,
    FakeJudgeServer,
    planted_item,
    versions,
)


def make_project(root: Path, calls: int) -> None:
    per_version = -(-calls // len(versions()))
    items = [
        planted_item(f"PE-{i:03d}", f"item-{i:03d}", "cousin", f"answer number {i}")
        for i in range(per_version)
    ]
    items[0] = planted_item("PE-000", "item-000", "control", "the control", control=True)
    folder = root / "planted_sets" / JUDGE
    folder.mkdir(parents=True)
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))


def judgements(session: JudgesSession, calls: int) -> list[record_phase.Judgement]:
    planted = session.catalogue.planted_sets[JUDGE]
    model = ModelRef.parse(MODEL)
    needed = [
        ("main", Case(JUDGE, version, model, item.id, item.slug), f"bench::{item.id}")
        for version in versions()
        for item in planted.items
    ]
    return record_phase.gather(session, needed)[:calls]


def record(root: Path, url: str, calls: int, concurrency: int) -> tuple[float, dict[str, bytes]]:
    cassettes = root / "cassettes"
    shutil.rmtree(cassettes, ignore_errors=True)
    settings = Settings(
        rootdir=root,
        record=RecordMode.ALL,
        base_url=url,
        cassettes=cassettes,
        planted_sets=root / "planted_sets",
        reports=root / "reports",
    )
    session = JudgesSession(settings)
    todo = judgements(session, calls)
    progress = Progress(len(todo), lambda text, final: None, session.ledger.spent_usd)
    journal = RowJournal(root / f"rows-{concurrency}.jsonl")
    started = time.perf_counter()
    recorded = record_phase.record_all(session, todo, concurrency, progress, journal)
    elapsed = time.perf_counter() - started
    failed = [p for p, rows in recorded.items() if any(r.status != "ok" for r in rows)]
    if len(recorded) != len(todo) or failed:
        raise SystemExit(f"concurrency {concurrency}: {len(recorded)}/{len(todo)} recorded")
    files = {str(p.relative_to(cassettes)): p.read_bytes() for p in cassettes.rglob("*.yaml")}
    return elapsed, files


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--sequential-subset", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="6 calls, 20 ms, concurrency 1,3")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.latency, args.concurrency, args.sequential_subset = 6, 0.02, "1,3", 3
    server = FakeJudgeServer()
    server.judge.delay_s = args.latency
    reference: dict[str, bytes] = {}
    print(f"{args.calls} judgements, {args.latency:g} s latency per call")
    print("| concurrency | judgements timed | wall time (s) | ideal (s) | ratio to ideal |")
    print("|---:|---:|---:|---:|---:|")
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            make_project(root, args.calls)
            for concurrency in (int(c) for c in args.concurrency.split(",")):
                timed = args.calls if concurrency > 1 else args.sequential_subset
                elapsed, files = record(root, server.judge.url, timed, concurrency)
                same = {name: reference[name] for name in files if name in reference}
                if any(files[name] != data for name, data in same.items()):
                    raise SystemExit(f"concurrency {concurrency}: cassettes differ")
                reference.update(files)
                wall = elapsed * args.calls / timed
                ideal = args.calls * args.latency / concurrency
                note = (
                    f"{timed} (x{args.calls / timed:g} extrapolated)"
                    if timed != args.calls
                    else str(timed)
                )
                print(f"| {concurrency} | {note} | {wall:.1f} | {ideal:.1f} | {wall / ideal:.2f} |")
    finally:
        server.stop()
    print(f"cassettes byte-identical across concurrencies: {len(reference)} files compared")


if __name__ == "__main__":
    main()
