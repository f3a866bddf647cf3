"""`python -m judges`: work on planted sets and reports without a test run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judges.core.spec import load_catalog
from judges.finale.cli import add_finale_command
from judges.sets.perturb import derive_all, load_derivations, write_derived
from judges.sets.planted import load_items, load_planted_set
from judges.sets.probes import write_probes


def _derive(args: argparse.Namespace) -> int:
    spec = load_catalog()[args.judge]
    folder = args.planted_sets / args.judge
    derivations = load_derivations(folder / "derived.toml")
    items = [i for i in load_items(folder / "items.jsonl", spec) if i.provenance.source == "hand"]
    derived = derive_all(items, derivations)
    write_derived(folder / "items.jsonl", derived)
    for item in derived:
        print(f"{item.id} {item.category}: {item.provenance.perturbation}")
    planted = load_planted_set(args.planted_sets, spec)
    for probe in write_probes(planted):
        print(f"{probe.id} probe {probe.probe}: {probe.change}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from judges.reports.folders import load_comparison
    from judges.stats.compare import comparison_markdown

    before, after = args.compare
    comparisons = load_comparison(args.reports, args.judge, before, after)
    for comparison in comparisons:
        print(comparison_markdown(comparison))
    if not comparisons:
        print(f"no main-run rows of {args.judge} prompt {after} to compare")
    return 0


def _report(args: argparse.Namespace) -> int:
    from judges.reports.folders import ResultsMissing
    from judges.reports.terminal import REBUILD_HINT, check_lines, report_lines
    from judges.reports.write import disk_reports

    if args.compare and not args.judge:
        print("python -m judges report: --compare A B needs --judge J", file=sys.stderr)
        return 2
    try:
        if args.compare:
            return _compare(args)
        built = disk_reports(args.reports, args.planted_sets, judge=args.judge)
    except ResultsMissing as error:
        print(f"python -m judges report: {error}", file=sys.stderr)
        return 2
    built = built.check() if args.check else built.write()
    for line in report_lines(built):
        print(line)
    for line in check_lines(built, "the results files", REBUILD_HINT):
        print(line, file=sys.stderr if built.differing else sys.stdout)
    return 1 if built.differing else 0


def _baseline(args: argparse.Namespace) -> int:
    from judges.baseline import (
        label_stability_gates,
        reading_list_gates,
        reliability_gates,
        write_baseline,
        write_probe_expectations,
    )
    from judges.core.results import read_jsonl
    from judges.reports.folders import Results, ResultsMissing, build_folder
    from judges.reports.sources import load_sources

    catalog = load_catalog()
    spec = catalog[args.judge]
    sources = load_sources(args.judge, catalog, args.planted_sets)
    rows_by_version = {}
    extra = {}
    for version in spec.versions:
        try:
            folder = build_folder(Results(args.reports), args.judge, version, sources)
        except ResultsMissing as error:
            print(f"python -m judges baseline: {error}", file=sys.stderr)
            return 2
        for line in folder.damaged:  # left out of the baseline: say so
            print(f"python -m judges baseline: damaged: {line}", file=sys.stderr)
        rows_by_version[version] = read_jsonl(args.reports / args.judge / version / "results.jsonl")
        for model in folder.models:
            sections = {
                "noise_floor": model.noise_floor,
                "test_retest": model.test_retest,
                "panel": model.panel,
                "sme": model.sme,
            }
            mine = [row for row in rows_by_version[version] if row.model == model.model]
            extra[(model.model, version)] = (
                reliability_gates(sections)
                | label_stability_gates(mine, dict(spec.config.labels))
                | reading_list_gates(mine, sources.planted)
            )
            # Ranking thresholds are set by hand (no statistic here derives them): keep them.
            kept = sources.planted.gates.get((model.model, version)) if sources.planted else None
            if kept is not None and kept.ranking:
                extra[(model.model, version)]["ranking"] = dict(kept.ranking)
            if kept is not None and kept.ranking_known_failure:
                extra[(model.model, version)]["ranking_known_failure"] = kept.ranking_known_failure
    probe_tables = _probe_baseline(args, spec, rows_by_version, extra)
    written = list(write_baseline(args.planted_sets / args.judge, rows_by_version, extra))
    if probe_tables is not None:
        written.append(write_probe_expectations(args.planted_sets / args.judge, probe_tables))
    for path in written:
        print(f"wrote {path}")
    return 0


def _probe_baseline(
    args: argparse.Namespace, spec: Any, rows_by_version: dict[str, Any], extra: dict[Any, Any]
) -> dict[tuple[str, str], Any] | None:
    """Fill `max_flip` into `extra` and return the accepted probe failures (None: no probes)."""
    from judges.baseline import probe_baseline
    from judges.sets.probes import load_probe_set

    probe_set = load_probe_set(load_planted_set(args.planted_sets, spec))
    if probe_set is None:
        return None
    fields = [*spec.config.dimensions, *([spec.config.flag] if spec.config.flag else [])]
    accepted: dict[tuple[str, str], Any] = {}
    for version, rows in rows_by_version.items():
        for model in sorted({row.model for row in rows}):
            mine = [row for row in rows if row.model == model]
            gates, failures = probe_baseline(mine, fields, probe_set.score)
            if gates:
                extra.setdefault((model, version), {})["max_flip"] = gates
            if failures:
                accepted[(model, version)] = failures
    return accepted


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m judges",
        description=__doc__,
        epilog="examples:\n"
        "  python -m judges derive product_identity\n"
        "  python -m judges report                      rebuild every report from results.jsonl\n"
        "  python -m judges report --judge geval        one judge only\n"
        "  python -m judges report --check              fail if a report differs from its rows\n"
        "  python -m judges report --judge product_identity --compare 0.3 0.3.1\n"
        "  python -m judges baseline product_identity   accept the recorded baseline\n"
        "  python -m judges finale --dry-run            promote finale finalists, no judging",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    derive = commands.add_parser(
        "derive",
        help="regenerate a planted set's generated items (derived.toml) and probes (probes.toml)",
    )
    derive.add_argument("judge", help="judge name, e.g. product_identity")
    derive.add_argument("--planted-sets", type=Path, default=Path("planted_sets"))
    derive.set_defaults(run=_derive)
    report = commands.add_parser(
        "report",
        help="rebuild report files from results.jsonl (no judging), or compare two versions",
        description="Rebuild report.md, report.json, failures.md, comparison.md and index.html "
        "in reports/<judge>/<version>/ from each folder's results.jsonl, without judging "
        "or pytest. With --compare, print the paired comparison of two prompt versions "
        "instead: items that flipped, McNemar's exact p, mean change per dimension.",
    )
    report.add_argument("--judge", help="only this judge (default: every judge with results)")
    report.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="print prompt version A against B of --judge (paired per item) to stdout",
    )
    report.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming each report file that differs from what the "
        "results files produce (hand edits, a renderer change not yet committed)",
    )
    report.add_argument("--reports", type=Path, default=Path("reports"), help="reports folder")
    report.add_argument("--planted-sets", type=Path, default=Path("planted_sets"))
    report.set_defaults(run=_report)
    baseline = commands.add_parser(
        "baseline",
        help="accept the recorded baseline: write expectations.toml and gates.toml",
        description="From reports/<judge>/<version>/results.jsonl of every prompt version, "
        "write the planted set's expectations.toml (every miss, as an accepted miss with its "
        "reason) and gates.toml (thresholds at what the judge achieved, rounded to 0.05 in "
        "the strict direction). Review both before committing.",
    )
    baseline.add_argument("judge", help="judge name, e.g. product_identity")
    baseline.add_argument("--reports", type=Path, default=Path("reports"))
    baseline.add_argument("--planted-sets", type=Path, default=Path("planted_sets"))
    baseline.set_defaults(run=_baseline)
    add_finale_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
