"""`python -m judges leaderboard <judge> [--version V] [--benchmark NAME]`: the evaluator
leaderboard of a pairwise judge, per set, from a prompt version's results.jsonl (no judging):
every model ranked by agreement, with its biases, their tests, price and time; and each
labelled benchmark imported for the judge (`judges.cli.benchmarks`): every judge that judged
the same items ranked together, overall and per subset, under the benchmark's rules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from judges.cli.benchmarks import benchmark_folders, leaderboard_lines
from judges.core.results import JudgementRow, read_jsonl
from judges.reports.sections.leaderboard import leaderboard_text
from judges.sets.benchmark import BenchmarkError
from judges.sets.planted import load_planted_set
from judges.stats.fitness.evaluator import Outputs
from judges.stats.fitness.leaderboard import leaderboards, leaderboards_by_items
from judges.stats.fitness.pairwise import is_pairwise
from judges.verdicts.pairwise import outputs_of


def _benchmarks(args: Any, folders: list[Path]) -> int:
    """Each labelled benchmark's boards; the exit status."""
    for folder in folders:
        try:
            print("\n".join(leaderboard_lines(folder)) + "\n")
        except BenchmarkError as error:
            print(f"python -m judges leaderboard: {error}", file=sys.stderr)
            return 2
    return 0


def _run(args: Any) -> int:
    folders = [] if args.version else benchmark_folders(args.planted_sets, args.judge)
    if args.benchmark:
        named = [f for f in folders if f.name == args.benchmark]
        if not named:
            print(
                f"python -m judges leaderboard: no benchmark {args.benchmark!r} under "
                f"{args.planted_sets / args.judge / 'benchmarks'} (imported: "
                f"{', '.join(f.name for f in folders) or 'none'}; import one with "
                "python -m judges import benchmark SRC)",
                file=sys.stderr,
            )
            return 2
        return _benchmarks(args, named)
    spec = args.catalog[args.judge]
    versions = [args.version] if args.version else list(spec.versions)
    if args.version and args.version not in spec.versions:
        print(
            f"python -m judges leaderboard: {args.judge} has no prompt version {args.version} "
            f"({', '.join(spec.versions)})",
            file=sys.stderr,
        )
        return 2
    recorded = [v for v in versions if (args.reports / args.judge / v / "results.jsonl").is_file()]
    if args.version and not recorded:
        path = args.reports / args.judge / args.version / "results.jsonl"
        print(f"python -m judges leaderboard: {path}: not recorded", file=sys.stderr)
        return 2
    if not recorded and not folders:
        print(
            f"python -m judges leaderboard: no results.jsonl of {args.judge} and no benchmark "
            f"under {args.planted_sets / args.judge / 'benchmarks'}",
            file=sys.stderr,
        )
        return 2
    outputs: Outputs = {}
    if recorded:
        outputs = outputs_of(load_planted_set(args.planted_sets, spec).items)
    labelled = []
    for version in recorded:
        path = args.reports / args.judge / version / "results.jsonl"
        rows = read_jsonl(path)
        if not is_pairwise(rows):
            print(
                f"python -m judges leaderboard: {path}: {args.judge} is not a pairwise judge "
                "(its items expect no winner per order); the leaderboard ranks pairwise judges",
                file=sys.stderr,
            )
            return 2
        for board in leaderboards(rows, outputs):
            print("\n".join(leaderboard_text(board, args.judge, version)) + "\n")
        labelled += [r.model_copy(update={"model": f"{r.model} ({version})"}) for r in rows]
    _across_versions(args.judge, labelled, outputs)
    return _benchmarks(args, folders)


def _across_versions(judge: str, rows: list[JudgementRow], outputs: Outputs) -> None:
    """Models of different prompt versions (strategies) that judged the same items of a set,
    ranked together on them."""
    for board in leaderboards_by_items(rows, outputs):
        versions = sorted({f.model.rsplit(" (", 1)[-1].rstrip(")") for f in board.entries})
        if len(versions) > 1:
            together = f"{', '.join(versions)} together"
            print("\n".join(leaderboard_text(board, judge, together)) + "\n")


def add_leaderboard_command(
    commands: argparse._SubParsersAction, planted_help: str, reports_help: str
) -> None:
    parser = commands.add_parser(
        "leaderboard",
        help="rank a pairwise judge's models per set: agreement, position and length bias, "
        "parsed replies, price and time, with their tests",
        description="From reports/<judge>/<version>/results.jsonl (no judging): per set, every "
        "judge model ranked by agreement with the gold label, P(prefer the output shown "
        "first) tested against 0.5, P(prefer the longer output) and P(prefer a list) beside "
        "the gold label's own, the share of parsed replies, price and time per 1,000 "
        "judgements, and the exact McNemar p against the model ranked next.",
    )
    parser.add_argument("judge", help="a pairwise judge, e.g. pairwise")
    parser.add_argument("--version", help="one prompt version (default: every recorded one)")
    parser.add_argument(
        "--benchmark",
        help="one labelled benchmark imported with `python -m judges import benchmark` (default: "
        "every one, after the prompt versions' boards)",
    )
    parser.add_argument("--reports", "--report-dir", type=Path, help=reports_help)
    parser.add_argument("--planted-sets", type=Path, help=planted_help)
    parser.set_defaults(run=_run)
