"""`python -m judges`: work on planted sets and reports without a test run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from judges.perturb import derive_all, load_derivations, write_derived
from judges.planted import load_items
from judges.spec import load_catalog


def _derive(args: argparse.Namespace) -> int:
    spec = load_catalog()[args.judge]
    folder = args.planted_sets / args.judge
    derivations = load_derivations(folder / "derived.toml")
    items = [i for i in load_items(folder / "items.jsonl", spec) if i.provenance.source == "hand"]
    derived = derive_all(items, derivations)
    write_derived(folder / "items.jsonl", derived)
    for item in derived:
        print(f"{item.id} {item.category}: {item.provenance.perturbation}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m judges", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    derive = commands.add_parser(
        "derive", help="regenerate a planted set's generated items from its derived.toml"
    )
    derive.add_argument("judge", help="judge name, e.g. product_identity")
    derive.add_argument("--planted-sets", type=Path, default=Path("planted_sets"))
    derive.set_defaults(run=_derive)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
