"""`python -m judges corpus report NAME`, `corpus judge NAME` and `corpus import-alpaca-eval
SOURCE`: what the judges say about the systems they grade, from a corpus folder; judging its
outputs with this project's judges (replayed from cassettes, or live with --record); and the
import of released judgements into one."""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.cli.live import add_call_options
from judges.cli.project import find_project
from judges.storage.files import atomic_write_bytes, atomic_write_text

CORPORA = "corpora"  # under planted_sets/ (the inputs) and reports/ (the reports)
REPORT_FILES = ("corpus_report.md", "index.html", "review_queue.jsonl")


@dataclass(frozen=True)
class _Written:
    path: Path
    differs: bool


def corpus_files(folder: Path, memory_limit: str | None = None) -> dict[str, bytes]:
    """The report files of the corpus in `folder`, as bytes: what `report` writes."""
    return _built(folder, memory_limit)[1]


def _built(folder: Path, memory_limit: str | None = None) -> tuple[Any, dict[str, bytes]]:
    """The corpus report (as data) and its files; the judgements read through the columnar
    store (judges/corpus/store.py), DuckDB under `memory_limit` (e.g. "1GB")."""
    from judges.corpus.html import corpus_html
    from judges.corpus.markdown import corpus_markdown
    from judges.corpus.report import build_report
    from judges.corpus.review_queue import queue_text
    from judges.corpus.store import load_summarised

    report = build_report(load_summarised(folder, memory_limit))
    markdown = corpus_markdown(report)
    return report, {
        "corpus_report.md": markdown.encode("utf-8"),
        "index.html": corpus_html(report, markdown).encode("utf-8"),
        "review_queue.jsonl": queue_text(list(report.review_rows)).encode("utf-8"),
    }


def _disagreeing(folder: Path, report: Any) -> list[str]:
    """A line per published figure the judgements do not reproduce."""
    from judges.corpus.rows import PUBLISHED_FILE

    return [
        f"{folder / PUBLISHED_FILE}: {c.figure.judge} on {c.figure.system}: "
        f"{c.figure.published_as or c.figure.statistic} published {c.figure.value!r}, "
        f"recomputed {c.recomputed!r}"
        for c in report.published
        if not c.agrees
    ]


def _defaults(args: Any) -> None:
    if args.corpora is None or args.reports is None:
        project = find_project(Path.cwd())
        args.corpora = args.corpora or project.planted_sets / CORPORA
        args.reports = args.reports or project.reports / CORPORA


def _folder(corpora: Path, name: str) -> Path:
    """The corpus folder `name` under `corpora`: one plain folder name, never a path."""
    if not name.strip(".") or any(sep in name for sep in ("/", "\\", "\0")):
        raise ValueError(
            f"corpus name {name!r} is not a folder name under {corpora} (it would lead out of "
            "it); give the corpus folder's own name, e.g. alpaca_eval"
        )
    return corpora / name


def _names(args: Any) -> list[str]:
    if args.name:
        _folder(args.corpora, args.name)
        return [args.name]
    names = sorted(p.parent.name for p in args.corpora.glob("*/corpus.toml"))
    if not names:
        raise ValueError(
            f"{args.corpora}: no corpus here (a corpus is a folder with corpus.toml); import "
            "one with `python -m judges corpus import-alpaca-eval SOURCE`, or give --corpora"
        )
    return names


def _remembered(args: Any) -> tuple[Any, list[str]]:
    """Where `corpus report`'s answer is remembered for these options, and the options."""
    from judges.storage.unchanged import Remembered

    options = ["corpus report", args.name or "", f"--check={args.check}", str(args.corpora)]
    options += [str(args.reports), f"--memory-limit={args.memory_limit}"]
    project = find_project(Path.cwd()).rootdir
    return Remembered.of("corpus report", project, options), options


def _fingerprint(args: Any, options: list[str]) -> str:
    """The state of the corpora and their reports, the code and the packages."""
    from judges.storage.unchanged import fingerprint

    return fingerprint([args.corpora, args.reports], find_project(Path.cwd()).rootdir, options)


def _report(args: Any) -> int:
    _defaults(args)
    remembered, options = _remembered(args)
    answer = remembered.answer(_fingerprint(args, options))
    if answer is not None:  # the corpora and their reports as at its last clean run
        for line in [answer.note("python -m judges corpus report"), *answer.lines]:
            print(line)
        return 0
    code = _build_reports(args)
    if code == 0:  # remembered as the next run would say it: every file unchanged
        lines = [line.replace("wrote ", "unchanged ", 1) for line in args.said]
        remembered.keep(_fingerprint(args, options), lines)
    return code


def _build_reports(args: Any) -> int:
    """Build every corpus report, then write it or check it; `args.said` gets what it
    printed on stdout."""
    args.said = []
    written: list[_Written] = []
    disagreeing: list[str] = []
    for name in _names(args):
        folder = _folder(args.corpora, name)
        if not (folder / "corpus.toml").is_file():
            raise ValueError(f"{folder / 'corpus.toml'}: no such corpus (give its folder name)")
        report, files = _built(folder, args.memory_limit)
        disagreeing += _disagreeing(folder, report)
        for file_name, data in files.items():
            path = args.reports / name / file_name
            differs = not path.is_file() or path.read_bytes() != data
            if differs and not args.check:
                atomic_write_bytes(path, data)
            written.append(_Written(path, differs))
    differing = [w for w in written if w.differs]
    for line in disagreeing:
        print(f"published figure not reproduced: {line}", file=sys.stderr)
    if disagreeing:
        print(
            f"{len(disagreeing)} published figures differ from the judgements: find which of "
            "the two is wrong (a judgements.jsonl that is not the release's, a published.jsonl "
            "row copied wrong) and correct it",
            file=sys.stderr,
        )
    if args.check:
        for w in differing:
            print(f"differs from its corpus: {w.path}", file=sys.stderr)
        if differing:
            print("rebuild with `python -m judges corpus report` and commit", file=sys.stderr)
            return 1
        if disagreeing:
            return 1
        args.said.append(f"{len(written)} corpus report files match their corpora")
        print(args.said[-1])
        return 0
    for w in written:
        args.said.append(f"{'wrote' if w.differs else 'unchanged'} {w.path}")
        print(args.said[-1])
    return 1 if disagreeing else 0


def _judge(args: Any) -> int:
    from judges.calls.backends import ModelRef
    from judges.calls.cassettes import CassetteMiss
    from judges.calls.ledger import Ledger, Usage
    from judges.cli.live import judging_backends
    from judges.corpus.judging import cassette_path, judgements_text, merged, slots
    from judges.corpus.rows import JUDGEMENTS_FILE, load_corpus
    from judges.reports.terminal import overspend_lines, session_lines

    project = find_project(Path.cwd())
    args.corpora = args.corpora or project.planted_sets / CORPORA
    args.cassettes = args.cassettes or project.rootdir / "cassettes" / CORPORA
    folder = _folder(args.corpora, args.name)
    corpus = load_corpus(folder, judged=False)
    catalog = project.catalog()
    planned = slots(corpus, catalog)  # refuses names that would share a cassette
    models = {s.judged.model: s.model for s in planned}
    own_clients = frozenset(s.judged.model for s in planned if catalog[s.judged.judge].team)
    record_command = f"python -m judges corpus judge {args.name} --record"
    if args.cost_cap is not None and not args.record:
        raise ValueError("--cost-cap caps live calls: pass it with --record")
    # A --record with every cassette in place calls nothing: its backends are a replay's, so
    # no embedded judge is started and no price is needed for calls that are never made.
    calls = args.record and (
        args.rerecord
        or not all(
            cassette_path(args.cassettes, corpus.manifest.name, s).is_file() for s in planned
        )
    )
    with (
        _recording_lock(args) as _,
        tempfile.TemporaryDirectory(prefix="judges-corpus-") as scratch,
        judging_backends(
            models, record=calls, base_url=args.judge_base_url, price_files=args.judge_prices,
            own_clients=own_clients,
        ) as (backends, prices),
    ):  # fmt: skip
        ledger = Ledger(Path(scratch) / "ledger.jsonl", args.cost_cap)
        try:
            judged = list(_judged_rows(args, corpus, planned, catalog, backends, prices, ledger))
        except CassetteMiss as miss:
            raise ValueError(
                f"{miss.reason(ModelRef.parse(planned[0].judged.model))}; record the corpus "
                f"with: {record_command}"
            ) from None
        spend = ledger.spend()
        if args.record:
            usage: dict[str, Usage] = {}
            for row, _ in judged:
                usage.setdefault(row.model, Usage()).add(row.usage)
            rows_run = [row for row, _ in judged]
            for line in session_lines(rows_run, usage, ledger.totals(), spend):
                print(line, file=sys.stderr)
            for line in overspend_lines(spend):
                print(line, file=sys.stderr)
    rows = [judgement for _, judgement in judged]
    capped = sum(row.status == "cost_cap" for row, _ in judged)
    path = folder / JUDGEMENTS_FILE
    text = judgements_text(merged(corpus, rows))
    same = path.is_file() and path.read_text(encoding="utf-8") == text
    errors = sum(r.score is None for r in rows)
    summary = f"{len(rows)} judgements ({errors} error rows) of {len(planned)} planned"
    if args.check:
        if not same:
            print(f"differs from its cassettes: {path}; rejudge with `python -m judges corpus "
                  f"judge {args.name}` and commit", file=sys.stderr)  # fmt: skip
            return 1
        print(f"{summary}: {path} matches its cassettes")
        return 0
    if not same:
        atomic_write_text(path, text)
    print(f"{summary}: {'wrote' if not same else 'unchanged'} {path}")
    if capped:
        print(
            f"INCOMPLETE: the cost cap of ${args.cost_cap:.4f} stopped {capped} judgements "
            "(error rows, no cassette); record them with a higher --cost-cap: "
            f"{record_command} --cost-cap USD",
            file=sys.stderr,
        )
        return 1
    if spend is not None and spend.exceeded:  # said above, with the figures
        return 1
    print(f"next: python -m judges corpus report {args.name}")
    return 0


@contextmanager
def _recording_lock(args: Any) -> Iterator[None]:
    """With --record, the cassette folder's recording lock (the one a pytest --record
    session takes) for the whole command: a second recording refuses before any call."""
    if not args.record:
        yield
        return
    from judges.calls.cassettes import lock_recording
    from judges.storage.files import FolderBusy

    try:
        lock = lock_recording(args.cassettes)
    except FolderBusy as busy:
        raise ValueError(
            f"another recording ({busy.who}) holds {args.cassettes} (lock "
            f"file {busy.lock_file}); wait until it ends, then run this again: it records only "
            "what is still missing"
        ) from None
    try:
        yield
    finally:
        lock.release()


def _judged_rows(
    args: Any,
    corpus: Any,
    planned: list[Any],
    catalog: dict[str, Any],
    backends: dict[str, Any],
    prices: dict[str, Any],
    ledger: Any,
) -> Iterator[tuple[Any, Any]]:
    """Each slot judged in its cassette: a recorded one is replayed (with --record too,
    unless --rerecord), a missing one recorded with --record; progress on stderr."""
    from judges.calls.backends import replay_keys
    from judges.calls.cassettes import abandon, is_replay_miss, judge_in_cassette, tapped
    from judges.core.results import JudgementRow
    from judges.core.runner import Call
    from judges.corpus.judging import cassette_path, judge_slots

    kept = sum(cassette_path(args.cassettes, corpus.manifest.name, s).is_file() for s in planned)
    if args.record and kept:
        action = "re-recording" if args.rerecord else "replaying (pass --rerecord to re-record)"
        print(f"{kept} of {len(planned)} judgements already recorded: {action}", file=sys.stderr)

    def judge_in(slot: Any, judge_with: Callable[[Call], JudgementRow]) -> JudgementRow:
        path = cassette_path(args.cassettes, corpus.manifest.name, slot)
        live = args.record and (args.rerecord or not path.is_file())
        # A team's callable sends its own requests, through any HTTP library, with its own
        # client: every transport is recorded, and a replay needs no key.
        team = catalog[slot.judged.judge].team is not None
        call = Call(
            backend=backends[slot.judged.model], price=prices[slot.judged.model], live=live,
            is_fatal=is_replay_miss, run=f"run{slot.run}", draw=slot.run,
            timeout_s=args.judge_timeout, ledger=ledger if live else None, tap=tapped,
            abandon=abandon,
        )  # fmt: skip
        with replay_keys() if team and not live else nullcontext():
            (row,) = judge_in_cassette(
                path, slot.model, lambda: [judge_with(call)], record=live,
                server_fingerprint={}, every_transport=team,
            )  # fmt: skip
        return row

    for index, (slot, row, judgement) in enumerate(
        judge_slots(planned, catalog, judge_in, corpus.manifest.scale), start=1
    ):
        if row.live or judgement.score is None:  # a replay says only what went wrong
            outcome = judgement.error if judgement.score is None else f"score {judgement.score:g}"
            timing = f" in {row.latency_s:.1f} s" if row.live else ""
            print(
                f"[{index}/{len(planned)}] {slot.entry} run {slot.run} {slot.system} "
                f"{slot.item.id}: {outcome}{timing}",
                file=sys.stderr,
            )
        yield row, judgement


def _import_alpaca_eval(args: Any) -> int:
    from judges.corpus.alpaca_eval import import_alpaca_eval

    if args.corpora is None:
        args.corpora = find_project(Path.cwd()).planted_sets / CORPORA
    target = _folder(args.corpora, args.name)
    held = _held(target)
    imported = import_alpaca_eval(args.source, target, args.name, replace=args.replace)
    if held is not None:
        print(f"replaced the corpus {target}, which held {held}")
    print(
        f"imported {imported.judgements} judgements ({imported.errors} error rows kept) of "
        f"{len(imported.systems)} systems on {imported.items} items by "
        f"{len(imported.judges)} judges, and {imported.published} published figures, "
        f"into {imported.folder}"
    )
    for missing in imported.unpublished:
        print(f"note: no published leaderboard row for {missing}: nothing to check it against")
    print(f"next: python -m judges corpus report {args.name}")
    return 0


def _import(args: Any) -> int:
    """`corpus import FORMAT SOURCE`: a tool's log as a corpus, through one reader each."""
    from judges.corpus.importers.corpus_writer import summary_lines, write_corpus

    _only_its_options(args)
    if args.format == "alpaca-eval":
        args.name = args.name or "alpaca_eval"
        return _import_alpaca_eval(args)
    if args.corpora is None:
        args.corpora = find_project(Path.cwd()).planted_sets / CORPORA
    args.name = args.name or _corpus_name(args.source)
    target = _folder(args.corpora, args.name)
    if args.format in ("jsonl", "csv"):
        from judges.corpus.importers.tabular import parse_mapping, read_tabular

        rows = read_tabular(args.source, parse_mapping(args.map), args.judge_name)
    elif args.format == "promptfoo":
        from judges.corpus.importers.promptfoo import SYSTEM_FROM, read_promptfoo

        rows = read_promptfoo(args.source, _system(args, SYSTEM_FROM))
    elif args.format == "otel":
        from judges.corpus.importers.otel import DEFAULT_ITEM, DEFAULT_SYSTEM, read_otel

        attribute = _attributes(args.map, {"system": DEFAULT_SYSTEM, "item": DEFAULT_ITEM})
        rows = read_otel(args.source, attribute["system"], attribute["item"],
                         args.labels or "human", _label_scores(args.label_score))  # fmt: skip
    elif args.format == "mlflow":
        from judges.corpus.importers.mlflow_traces import read_mlflow

        rows = read_mlflow(args.source, args.experiment, args.labels)
    else:
        from judges.corpus.importers.inspect_log import SYSTEM_FROM, read_inspect

        labels = args.labels or "human"
        rows = read_inspect(args.source, labels, _system(args, SYSTEM_FROM))
    scale = {key: value for key in ("low", "high", "step", "midpoint")
             if (value := getattr(args, key)) is not None}  # fmt: skip
    written = write_corpus(rows, target, args.name, replace=args.replace, scale=scale)
    for line in summary_lines(written):
        print(line)
    print(f"next: python -m judges corpus report {args.name}")
    return 0


# The options each format reads; another one given is refused, never ignored.
_FORMAT_OPTIONS = {
    "jsonl": {"map", "judge_name", "low", "high", "step", "midpoint"},
    "csv": {"map", "judge_name", "low", "high", "step", "midpoint"},
    "inspect": {"labels", "system", "low", "high", "step", "midpoint"},
    "promptfoo": {"system", "low", "high", "step", "midpoint"},
    "mlflow": {"labels", "experiment", "low", "high", "step", "midpoint"},
    "otel": {"map", "labels", "label_score", "low", "high", "step", "midpoint"},
    "alpaca-eval": set(),
}


def _only_its_options(args: Any) -> None:
    given = [name for name in ("map", "judge_name", "labels", "label_score", "system",
                               "experiment", "low", "high", "step", "midpoint")
             if getattr(args, name)]  # fmt: skip
    other = [name for name in given if name not in _FORMAT_OPTIONS[args.format]]
    if other:
        options = ", ".join("--" + name.replace("_", "-") for name in other)
        raise ValueError(
            f"{options}: not an option of `corpus import {args.format}` (see "
            "'Importing what a team already logs' in `python -m judges docs corpus`); leave it "
            "out"
        )


def _system(args: Any, choices: tuple[str, ...]) -> str:
    """--system for this format: its first choice by default."""
    if args.system is None:
        return choices[0]
    if args.system not in choices:
        raise ValueError(
            f"--system {args.system}: a {args.format} system is its {' or its '.join(choices)}"
        )
    return str(args.system)


def _attributes(pairs: list[str], defaults: dict[str, str]) -> dict[str, str]:
    """otel's --map FIELD=ATTRIBUTE, for the fields it takes."""
    found = dict(defaults)
    for pair in pairs:
        field, sep, attribute = pair.partition("=")
        if not sep or not attribute or field not in defaults:
            raise ValueError(
                f"--map {pair!r}: for otel give {' or '.join(f'{f}=ATTRIBUTE' for f in defaults)}"
            )
        found[field] = attribute
    return found


def _label_scores(pairs: list[str]) -> dict[str, float]:
    """otel's --label-score LABEL=SCORE pairs: the team's stated rule for its labels."""
    found: dict[str, float] = {}
    for pair in pairs:
        label, sep, text = pair.rpartition("=")
        try:
            score = float(text)
        except ValueError:
            score = math.nan
        if not sep or not label or not math.isfinite(score):
            raise ValueError(
                f"--label-score {pair!r}: give LABEL=SCORE with SCORE a finite number, e.g. "
                "--label-score good=1"
            )
        if label in found and found[label] != score:
            raise ValueError(f"--label-score gives {label!r} twice; state one score per label")
        found[label] = score
    return found


def _corpus_name(source: Path) -> str:
    """A corpus name from the source's name: letters, digits, '_', '-' and '.' kept."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", source.stem if source.is_file() else source.name)
    return name.strip("._") or "imported"


def _held(folder: Path) -> str | None:
    """What a corpus folder holds, in words (what --replace replaces); None: no corpus."""
    from judges.corpus.manifest import MANIFEST_FILE
    from judges.corpus.rows import JUDGEMENTS_FILE
    from judges.storage.files import jsonl_lines

    if not (folder / MANIFEST_FILE).is_file():
        return None
    rows = folder / JUDGEMENTS_FILE
    text = rows.read_text(encoding="utf-8", errors="replace") if rows.is_file() else ""
    count = sum(bool(line.strip()) for line in jsonl_lines(text))
    return f"{count} judgement rows from {folder / MANIFEST_FILE}"


def add_corpus_command(commands: argparse._SubParsersAction) -> None:
    corpus = commands.add_parser(
        "corpus",
        help="what the judges say about the systems they grade: rankings with intervals, "
        "a judge change's effect, PPI++ with labels, the review queue",
        description="A corpus is a folder under planted_sets/corpora/ (corpus.toml, "
        "items.jsonl, judgements.jsonl, optional labels.jsonl and published.jsonl; see "
        "`python -m judges docs corpus`). `report` writes reports/corpora/<name>/ without judging.",
    )
    actions = corpus.add_subparsers(
        dest="action", required=True, metavar="ACTION",
        help="report, judge, import or import-alpaca-eval",
    )  # fmt: skip
    report = actions.add_parser(
        "report",
        help="write corpus_report.md, index.html and review_queue.jsonl per corpus",
    )
    report.add_argument("name", nargs="?", help="one corpus (default: every one)")
    report.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming each report file that differs from its corpus "
        "(a published figure the judgements do not reproduce exits 1 with or without it)",
    )
    report.add_argument("--corpora", type=Path, help="corpora folder (default: "
                        "planted_sets/corpora beside the pytest ini file)")  # fmt: skip
    report.add_argument("--reports", "--report-dir", type=Path, help="where reports go (default: "
                        "reports/corpora beside the pytest ini file)")  # fmt: skip
    report.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="DuckDB's memory limit for reading the judgements, e.g. 1GB (default: DuckDB's, "
        "80%% of RAM); past it DuckDB spills to the cache folder (JUDGES_CACHE_DIR)",
    )
    report.set_defaults(run=_report)
    judging = actions.add_parser(
        "judge",
        help="judge a corpus's outputs with its [judges.<name>.judged] entries, replayed from "
        "cassettes (live with --record), and write judgements.jsonl",
        description="Each judgement is replayed from its cassette under cassettes/corpora/ "
        "with the network blocked; --record makes the missing ones live (starting the "
        "embedded llama.cpp judge for local: models without --judge-base-url) and records "
        "them, one cassette per judgement, so an interrupted recording keeps what it did.",
    )
    judging.add_argument("name", help="the corpus (its folder under planted_sets/corpora)")
    judging.add_argument(
        "--record", action="store_true", help="record the judgements that have no cassette"
    )
    judging.add_argument(
        "--rerecord", action="store_true", help="with --record: re-record every judgement"
    )
    judging.add_argument(
        "--check", action="store_true",
        help="write nothing; exit 1 when judgements.jsonl differs from its cassettes",
    )  # fmt: skip
    judging.add_argument(
        "--judge-base-url",
        help="OpenAI-compatible server for local: judges (default with --record: start the "
        "embedded llama.cpp judge)",
    )
    judging.add_argument(
        "--cost-cap", type=float, metavar="USD",
        help="with --record: no live call whose worst case could take the spend past this "
        "many USD (each call reserved before it is sent, as pytest --cost-cap); the rest "
        "end as cost_cap error rows, recorded by a later run",
    )  # fmt: skip
    add_call_options(judging)
    judging.add_argument("--corpora", type=Path, help="corpora folder (default: "
                         "planted_sets/corpora beside the pytest ini file)")  # fmt: skip
    judging.add_argument("--cassettes", "--cassette-dir", type=Path,
                         help="cassette folder (default: cassettes/corpora beside the pytest "
                         "ini file)")  # fmt: skip
    judging.set_defaults(run=_judge)
    alpaca = actions.add_parser(
        "import-alpaca-eval",
        help="import AlpacaEval's released judgements and leaderboard rows as a corpus",
        description="From a release folder holding annotations/<system>/<annotator>.json, "
        "leaderboards/<annotator>_leaderboard.csv, and optionally LICENSE and PROVENANCE.md: "
        "a corpus folder with each annotator as a judge and each leaderboard row as "
        "published figures that `corpus report` recomputes and checks.",
    )
    alpaca.add_argument("source", type=Path, help="the release folder")
    alpaca.add_argument("--name", default="alpaca_eval", help="corpus name (default: "
                        "alpaca_eval)")  # fmt: skip
    alpaca.add_argument("--corpora", type=Path, help="corpora folder (default: "
                        "planted_sets/corpora beside the pytest ini file)")  # fmt: skip
    alpaca.add_argument(
        "--replace",
        action="store_true",
        help="replace an existing corpus of that name, saying what it held (without it, an "
        "existing one is kept; a second release goes under its own --name)",
    )
    alpaca.set_defaults(run=_import_alpaca_eval)
    _add_import(actions)


def _add_import(actions: argparse._SubParsersAction) -> None:
    from judges.corpus.importers import FORMATS

    importing = actions.add_parser(
        "import",
        help="import the judgements a tool logged (a JSONL or CSV, Inspect's eval logs, "
        "promptfoo's output, MLflow's trace assessments, OpenTelemetry GenAI evaluation "
        "events, an AlpacaEval release) as a corpus",
        description="Read SOURCE in FORMAT and write planted_sets/corpora/<name>/: systems, "
        "items, judges, runs and scores mapped as `python -m judges docs corpus` says per "
        "format; human ratings become labels.jsonl; what cannot be mapped is counted and named.",
    )
    importing.add_argument("format", choices=FORMATS, help="the tool whose log SOURCE is")
    importing.add_argument("source", type=Path, help="the log file, or its folder")
    importing.add_argument("--name", help="corpus name (default: from the source's name)")
    importing.add_argument("--corpora", type=Path, help="corpora folder (default: "
                           "planted_sets/corpora beside the pytest ini file)")  # fmt: skip
    importing.add_argument("--replace", action="store_true",
                           help="replace an existing corpus of that name")  # fmt: skip
    tabular = importing.add_argument_group("jsonl, csv and otel")
    tabular.add_argument(
        "--map", action="append", default=[], metavar="FIELD=COLUMN",
        help="the column a corpus field comes from (system, item, judge, score, run, flagged, "
        "label, output, error, input; default: the column of the field's own name); otel: "
        "the attribute of system (default service.name) or item (default gen_ai.response.id)",
    )  # fmt: skip
    tabular.add_argument("--judge-name", help="the judge of every row without a judge column")
    tools = importing.add_argument_group("inspect, promptfoo, mlflow and otel")
    tools.add_argument(
        "--labels", help="inspect and otel: the score or evaluation that is a human's label "
        "(default: human); mlflow: the name of the HUMAN assessments that are labels "
        "(default: the one name)",
    )  # fmt: skip
    tools.add_argument("--experiment", help="mlflow: the experiment (default: every one)")
    tools.add_argument(
        "--label-score", action="append", default=[], metavar="LABEL=SCORE",
        help="otel: the score of an evaluation's score.label the shared words (pass/fail, "
        "true/false, yes/no, correct/incorrect) do not cover, e.g. --label-score good=1; "
        "repeatable",
    )  # fmt: skip
    tools.add_argument(
        "--system", choices=("model", "task", "provider", "prompt"),
        help="what a system is: inspect's model (default) or task; promptfoo's provider "
        "(default; with its prompt when there are several) or prompt",
    )  # fmt: skip
    scale = importing.add_argument_group(
        "scale",
        "default: pass/fail (0 or 1) as two levels, 0/0.5/1 as three; any other "
        "scores need --low and --high, and --step (levels) or --midpoint (preferences)",
    )
    for option, meaning in (
        ("low", "the lowest score"), ("high", "the highest score"),
        ("step", "one level of a rubric (a level scale)"),
        ("midpoint", "a tie, for preferences against a reference (a side scale)"),
    ):  # fmt: skip
        scale.add_argument(f"--{option}", type=float, help=meaning)
    importing.set_defaults(run=_import)
