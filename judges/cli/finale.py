"""`python -m judges finale`: load the config, print or write the promotion, run the panel.

A replay blocks the network; `--record` makes live calls (starting the embedded llama.cpp
judge when a local model has no `--base-url`) and records every one into a cassette.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judges.calls.backends import Backend, BackendError, Price
from judges.cli.live import judging_backends
from judges.core.spec import SpecError
from judges.finale.cassettes import cassette_factory, cassette_path
from judges.finale.config import (
    CROSS,
    PRIMARY,
    Episode,
    FinaleConfig,
    FinaleError,
    load_candidates,
    load_config,
    load_episodes,
)
from judges.finale.plan import judging_plan, plan_lines, write_promotion
from judges.finale.promotion import Promotion, promote_finalists
from judges.finale.run import FinaleResult, run_finale
from judges.verdicts.vocabulary import INCOMPLETE

__all__ = ["add_finale_command", "cli_finale"]

DEFAULT_CONFIG = Path("planted_sets/finale/finale.toml")
DEFAULT_OUT = Path("reports/finale")
DRY_RUN_OUT = Path(".judges-tmp/finale-dry-run")  # never the committed reports/
DEFAULT_CASSETTES = Path("cassettes/finale")
RECORD_COMMAND = "python -m judges finale --record"


def add_finale_command(commands: Any) -> argparse.ArgumentParser:
    """Add `finale` to the subcommands of `python -m judges`."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "finale",
        help="promote qualifier finalists per stratum and score them with the geval judge",
        description="Promote finalists from a finale config's candidate runs (top N per "
        "stratum by the qualifier metric, floor x leader, global cap), write promotion.json, "
        "then score every finalist with the primary judge and the top ones per stratum with "
        "the cross-check judge, replayed from cassettes (or live with --record), and write "
        "finalists.jsonl, finale_report.json and finale_report.md.",
    )
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="finale TOML")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"artifact folder (default: {DEFAULT_OUT}; with --dry-run: {DRY_RUN_OUT}, so a "
        "dry run never rewrites the committed reports)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="write promotion.json and print it; no judging"
    )
    parser.add_argument(
        "--record", action="store_true", help="make live judge calls and record the cassettes"
    )
    parser.add_argument(
        "--cost-cap", type=float, metavar="USD", help="override the config's cost_cap_usd"
    )
    parser.add_argument(
        "--base-url",
        "--judge-base-url",
        help="OpenAI-compatible server for local: judges (default with --record: start the "
        "embedded llama.cpp judge)",
    )
    parser.add_argument(
        "--cassettes",
        "--cassette-dir",
        type=Path,
        default=DEFAULT_CASSETTES,
        help="cassette folder",
    )
    parser.add_argument(
        "--judge-prices", type=Path, action="append", default=[], metavar="FILE",
        help="extra price table (TOML) overriding judges/calls/prices.toml",
    )  # fmt: skip
    parser.set_defaults(run=cli_finale)
    return parser


def _record_command(args: argparse.Namespace) -> str:
    extra = []
    if args.config != DEFAULT_CONFIG:
        extra += ["--config", str(args.config)]
    if args.cassettes != DEFAULT_CASSETTES:
        extra += ["--cassettes", str(args.cassettes)]
    return " ".join([RECORD_COMMAND, *(shlex.quote(part) for part in extra)])


def _fail(message: str) -> int:
    print(f"python -m judges finale: {message}", file=sys.stderr)
    return 2


def cli_finale(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
        if args.cost_cap is not None:
            config = config.with_cost_cap(args.cost_cap)
        root = args.config.parent
        candidates = load_candidates(root / config.candidates)
        episodes = load_episodes(root / config.episodes)
        promotion = promote_finalists(candidates, config)
        plan = judging_plan(promotion, episodes, config)
    except (FinaleError, SpecError, ValidationError) as error:
        return _fail(str(error))

    if args.out is None:
        args.out = DRY_RUN_OUT if args.dry_run else DEFAULT_OUT
    if args.dry_run:
        path = write_promotion(args.out, promotion, plan)
        print("\n".join([*promotion.lines(), "", *plan_lines(plan), "", f"wrote {path}"]))
        return 0
    if not args.record:
        nothing = _nothing_recorded(args, config, promotion, episodes)
        if nothing:
            return _fail(nothing)
    try:
        with _cli_backends(args, config) as (backends, prices):
            factory = cassette_factory(
                args.cassettes, record=args.record, backends=backends, prices=prices,
                record_command=_record_command(args),
            )  # fmt: skip
            result = run_finale(
                config, candidates, episodes,
                judge_call_factory=factory, out_dir=args.out,
                progress=lambda line: print(line, file=sys.stderr),
                source="python -m judges finale" + (" --record" if args.record else ""),
            )  # fmt: skip
    except (FinaleError, BackendError) as error:
        return _fail(str(error))
    _print_outcome(result)
    return 0


def _nothing_recorded(
    args: argparse.Namespace,
    config: FinaleConfig,
    promotion: Promotion,
    episodes: Sequence[Episode],
) -> str | None:
    """The message for a replay with not one cassette in place, else None."""
    needed = [
        cassette_path(args.cassettes, model, f.run, e.episode_id, role)
        for role, finalists, model in (
            (PRIMARY, promotion.finalists, config.primary),
            (CROSS, promotion.cross_checked, config.cross),
        )
        for f in finalists
        for e in episodes
    ]
    if not needed or any(path.is_file() for path in needed):
        return None
    return (
        f"no recorded finale judgements under {args.cassettes} (none of the "
        f"{len(needed)} cassettes exists, e.g. {needed[0]}).\n"
        f"Record them with:  {_record_command(args)}"
    )


def _print_outcome(result: FinaleResult) -> None:
    for path in result.paths.values():
        print(f"wrote {path}")
    missing = result.report["missing"]
    if missing["judgements"]:
        print(
            f"{INCOMPLETE}: the cost cap stopped the run; {missing['judgements']} judgements are "
            f"missing (listed in {result.paths['report_md']})"
        )
    if result.report["contested"]:
        print(f"contested: {', '.join(result.report['contested'])}")


def _cli_backends(
    args: argparse.Namespace, config: FinaleConfig
) -> AbstractContextManager[tuple[dict[str, Backend], dict[str, Price]]]:
    """Backends per model (`judges.cli.live`): the primary and the cross-check judge."""
    models = {str(m): m for m in (config.primary, config.cross)}
    return judging_backends(
        models, record=args.record, base_url=args.base_url, price_files=args.judge_prices,
        error=FinaleError,
    )  # fmt: skip
