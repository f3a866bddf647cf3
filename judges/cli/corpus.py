"""`python -m judges corpus report NAME` and `corpus import-alpaca-eval SOURCE`: what the
judges say about the systems they grade, from a corpus folder (no judging), and the import
of released judgements into one."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.cli.project import find_project
from judges.storage.files import atomic_write_bytes

CORPORA = "corpora"  # under planted_sets/ (the inputs) and reports/ (the reports)
REPORT_FILES = ("corpus_report.md", "index.html", "review_queue.jsonl")


@dataclass(frozen=True)
class _Written:
    path: Path
    differs: bool


def corpus_files(folder: Path) -> dict[str, bytes]:
    """The report files of the corpus in `folder`, as bytes: what `report` writes."""
    from judges.corpus.html import corpus_html
    from judges.corpus.markdown import corpus_markdown
    from judges.corpus.report import build_report
    from judges.corpus.review_queue import queue_text
    from judges.corpus.rows import load_corpus

    report = build_report(load_corpus(folder))
    markdown = corpus_markdown(report)
    return {
        "corpus_report.md": markdown.encode("utf-8"),
        "index.html": corpus_html(report, markdown).encode("utf-8"),
        "review_queue.jsonl": queue_text(list(report.queue)).encode("utf-8"),
    }


def _defaults(args: Any) -> None:
    if args.corpora is None or args.reports is None:
        project = find_project(Path.cwd())
        args.corpora = args.corpora or project.planted_sets / CORPORA
        args.reports = args.reports or project.reports / CORPORA


def _names(args: Any) -> list[str]:
    if args.name:
        return [args.name]
    names = sorted(p.parent.name for p in args.corpora.glob("*/corpus.toml"))
    if not names:
        raise ValueError(
            f"{args.corpora}: no corpus here (a corpus is a folder with corpus.toml); import "
            "one with `python -m judges corpus import-alpaca-eval SOURCE`, or give --corpora"
        )
    return names


def _report(args: Any) -> int:
    _defaults(args)
    written: list[_Written] = []
    for name in _names(args):
        folder = args.corpora / name
        if not (folder / "corpus.toml").is_file():
            raise ValueError(f"{folder / 'corpus.toml'}: no such corpus (give its folder name)")
        for file_name, data in corpus_files(folder).items():
            path = args.reports / name / file_name
            differs = not path.is_file() or path.read_bytes() != data
            if differs and not args.check:
                atomic_write_bytes(path, data)
            written.append(_Written(path, differs))
    differing = [w for w in written if w.differs]
    if args.check:
        for w in differing:
            print(f"differs from its corpus: {w.path}", file=sys.stderr)
        if differing:
            print("rebuild with `python -m judges corpus report` and commit", file=sys.stderr)
            return 1
        print(f"{len(written)} corpus report files match their corpora")
        return 0
    for w in written:
        print(f"{'wrote' if w.differs else 'unchanged'} {w.path}")
    return 0


def _import_alpaca_eval(args: Any) -> int:
    from judges.corpus.alpaca_eval import import_alpaca_eval

    if args.corpora is None:
        args.corpora = find_project(Path.cwd()).planted_sets / CORPORA
    target = args.corpora / args.name
    imported = import_alpaca_eval(args.source, target, args.name, replace=args.replace)
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


def add_corpus_command(commands: argparse._SubParsersAction) -> None:
    corpus = commands.add_parser(
        "corpus",
        help="what the judges say about the systems they grade: rankings with intervals, "
        "a judge change's effect, PPI++ with labels, the review queue",
        description="A corpus is a folder under planted_sets/corpora/ (corpus.toml, "
        "items.jsonl, judgements.jsonl, optional labels.jsonl and published.jsonl; see "
        "docs/corpus.md). `report` writes reports/corpora/<name>/ without judging.",
    )
    actions = corpus.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="report or import-alpaca-eval"
    )
    report = actions.add_parser(
        "report",
        help="write corpus_report.md, index.html and review_queue.jsonl per corpus",
    )
    report.add_argument("name", nargs="?", help="one corpus (default: every one)")
    report.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming each report file that differs from its corpus",
    )
    report.add_argument("--corpora", type=Path, help="corpora folder (default: "
                        "planted_sets/corpora beside the pytest ini file)")  # fmt: skip
    report.add_argument("--reports", type=Path, help="where reports go (default: "
                        "reports/corpora beside the pytest ini file)")  # fmt: skip
    report.set_defaults(run=_report)
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
        help="replace an existing corpus of that name (without it, an existing one is kept)",
    )
    alpaca.set_defaults(run=_import_alpaca_eval)
