"""`python -m judges`: work on planted sets and reports without a test run."""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judges.cli.project import find_project
from judges.sets.folder import (
    DERIVED_FILE,
    EXPECTATIONS_FILE,
    GATES_FILE,
    PINS_FILE,
    PROBES_FILE,
    SET_FILE,
    SetFolder,
)

# The commands declared in their own modules, imported only when the command line names one
# of them (or asks for the full --help): together they bring in scipy, both SDKs and the
# report builder, seconds of every start. `report --check` and `corpus report` answer
# "unchanged" from a fingerprint in about a second (`_unchanged`), before the statistics
# stack is imported at all.
MODULE_COMMANDS = (
    "finale", "import", "leaderboard", "init", "plan", "estimate", "corpus", "plant", "docs",
)  # fmt: skip


def _derive(args: argparse.Namespace) -> int:
    from judges.sets.perturb import derive_all, load_derivations, write_derived
    from judges.sets.planted import load_items, load_planted_set
    from judges.sets.probes import write_probes

    spec = args.catalog[args.judge]
    folder = SetFolder(args.planted_sets, args.judge)
    derivations = load_derivations(folder.derived_path)
    items = [i for i in load_items(folder.items_path, spec) if i.provenance.source == "hand"]
    derived = derive_all(items, derivations)
    write_derived(folder.items_path, derived)
    for item in derived:
        print(f"{item.id} {item.category}: {item.provenance.perturbation}")
    planted = load_planted_set(args.planted_sets, spec)
    for probe in write_probes(planted):
        print(f"{probe.id} probe {probe.probe}: {probe.change}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from judges.reports.model.folders import load_comparison
    from judges.reports.render.comparison import comparison_markdown

    before, after = args.compare
    comparisons = load_comparison(args.reports, args.judge, before, after, args.catalog)
    for comparison in comparisons:
        print(comparison_markdown(comparison))
    if not comparisons:
        print(f"no main-run rows of {args.judge} prompt {after} to compare")
    return 0


def _report(args: argparse.Namespace) -> int:
    if args.compare and not args.judge:
        print("python -m judges report: --compare A B needs --judge J", file=sys.stderr)
        return 2
    if args.check and not args.compare:  # before the statistics stack is imported
        remembered, current = _check_fingerprint(args)
        answer = remembered.answer(current)
        if answer is not None:  # every input and report file as at its last passing check
            for line in [answer.note("python -m judges report --check"), *answer.lines]:
                print(line)
            return 0
    from judges.reports.model.folders import ResultsMissing, UnknownVersion
    from judges.reports.terminal import REBUILD_HINT, check_lines, report_lines, verdict_lines
    from judges.reports.write import disk_reports

    try:
        if args.compare:
            return _compare(args)
        built = disk_reports(args.reports, args.planted_sets, args.judge, args.catalog)
    except (ResultsMissing, UnknownVersion) as error:
        print(f"python -m judges report: {error}", file=sys.stderr)
        return 2
    built = built.check() if args.check else built.write()
    summary = report_lines(built)
    checked = check_lines(built, "the results files", REBUILD_HINT)
    for line in summary:
        print(line)
    for line in checked:
        print(line, file=sys.stderr if built.differing else sys.stdout)
    verdicts = verdict_lines(built)
    for line in verdicts:  # the answer last, as pytest's summary ends
        print(line)
    if args.check and not built.differing:
        kept = [line for line in summary if not line.startswith("run ")]  # this run's own
        remembered.keep(current, [*kept, *checked, *verdicts])
    return 1 if built.differing else 0


def _check_fingerprint(args: argparse.Namespace) -> tuple[Any, str]:
    """`report --check`'s remembered answer and the fingerprint of what it reads now: the
    results and reports, the planted sets, the prompts, the cassettes, the code."""
    from judges.storage.unchanged import Remembered, fingerprint

    project = find_project(Path.cwd()).rootdir
    prompts = sorted({spec.root for spec in args.catalog.values()})
    roots = [args.reports, args.planted_sets, *prompts, project / "cassettes"]
    options = ["report", "--check", f"--judge={args.judge or ''}", *map(str, roots)]
    return Remembered.of("report --check", project, options), fingerprint(roots, project, options)


def _baseline(args: argparse.Namespace) -> int:
    from judges.calls.cassettes import lock_recording
    from judges.cli.recorded import survey
    from judges.storage.files import FolderBusy

    catalog = args.catalog
    spec = catalog[args.judge]
    if args.accept is None:  # only an explicit --accept moves the baseline
        return survey(args.judge, spec.versions, args.reports, args.planted_sets, catalog)
    accept = args.accept
    if accept not in spec.versions:
        known = ", ".join(spec.versions)
        print(f"python -m judges baseline: --accept {accept}: not a prompt version of "
              f"{args.judge} ({known})", file=sys.stderr)  # fmt: skip
        return 2
    cassettes = find_project(Path.cwd()).rootdir / "cassettes"
    # The recording lock: a `--record` session replacing cassettes meanwhile would have a
    # mix of old and new ones pinned, then replace what was pinned.
    try:
        purpose = f"python -m judges baseline {args.judge} --accept"
        lock = lock_recording(cassettes, purpose, shared=True)
    except FolderBusy as busy:
        print(f"python -m judges baseline: --accept {accept}: refused, another session "
              f"({busy.who}) is recording into {cassettes} (lock file {busy.lock_file}); "
              "accepting now could pin a recording half replaced. Nothing written: run this "
              "again once it ends", file=sys.stderr)  # fmt: skip
        return 2
    try:
        return _accept(args, spec, cassettes)
    finally:
        lock.release()


def _accept(args: argparse.Namespace, spec: Any, cassettes: Path) -> int:
    """`baseline --accept`, under the cassette folder's recording lock."""
    from judges.cli.baseline import FLOORS_MET, fitness_lines, write_baseline
    from judges.cli.recorded import buried_refusal, lacking_refusal, refusal, repin_refusal
    from judges.reports.model.folders import ResultsMissing
    from judges.sets.pins import differing_pins, write_pins
    from judges.verdicts.acceptance import Refusal, acceptance
    from judges.verdicts.inputs import load_sources

    accept, catalog = args.accept, args.catalog
    sources = load_sources(args.judge, catalog, args.planted_sets)
    try:
        rows_by_version, reliability, models = _recorded_versions(args, spec, sources)
    except ResultsMissing as error:
        print(f"python -m judges baseline: {error}", file=sys.stderr)
        return 2
    accepted_rows = rows_by_version[accept]
    if sources.planted is None:  # no set says which items the baseline must hold
        print(f"python -m judges baseline: {'; '.join(sources.notes)}", file=sys.stderr)
        return 2
    accepted = [(model, accept) for model in sorted({row.model for row in accepted_rows})]
    files = SetFolder(args.planted_sets, args.judge)
    folder = files.path
    differing = differing_pins(folder, args.judge, accepted, cassettes)
    if differing and not args.repin:
        for line in repin_refusal(_baseline_command(args), differing, cassettes):
            print(f"python -m judges baseline: {line}", file=sys.stderr)
        return 1
    # The policy is the verdicts' (judges.verdicts.acceptance); this prints what it decided.
    checks = acceptance(
        accept, models[accept], accepted_rows, sources.planted, args.accept_not_fit,
        lambda: _probe_regressions(args, spec, rows_by_version, models[accept]),
    )  # fmt: skip
    refused = checks.refusal(
        bool(args.accept_regression), args.reset_floors, bool(args.accept_undecided),
        bool(args.accept_control_miss), bool(args.accept_no_verdict),
    )  # fmt: skip
    if refused is Refusal.PARTIAL:
        for line in refusal(args.judge, accept, checks.gaps, checks.asked):
            print(f"python -m judges baseline: {line}", file=sys.stderr)
        return 2
    if refused is Refusal.LACKING:
        for line in lacking_refusal(args.judge, accept, checks.lacking):
            print(f"python -m judges baseline: {line}", file=sys.stderr)
        return 2
    for version, found in models.items():
        for line in fitness_lines(args.judge, version, found):
            print(line)
    if refused is Refusal.NOT_FIT:
        print(f"python -m judges baseline: prompt {accept} is NOT FIT on "
              f"{', '.join(checks.not_fit_refused)} (no better than chance at what the set "
              "measures): not accepted as a baseline, nothing written. Improve the judge, or "
              'keep it knowingly with --accept-not-fit "<why>"', file=sys.stderr)  # fmt: skip
        return 1
    if refused is Refusal.UNDECIDED:
        print(f"python -m judges baseline: prompt {accept} is UNDECIDED on "
              f"{', '.join(checks.undecided)}: no chance test can decide at its set's size, "
              "so a coin flip would be accepted as well; not accepted, nothing written. Grow "
              f"the set (`python -m judges plan {args.judge}` says how many items), or accept "
              'it knowingly with --accept-undecided "<why>"', file=sys.stderr)  # fmt: skip
        return 1
    for model, lines in sorted(checks.regressions.items()):
        for line in lines:
            print(f"regression: {args.judge} {accept} on {model}: {line}")
    if refused is Refusal.REGRESSION:
        print(f"python -m judges baseline: prompt {accept} is significantly worse than the "
              f"accepted baseline on {', '.join(sorted(checks.regressions))} (the regression "
              "gates above): not accepted, nothing written. Keep the current baseline, or "
              'accept it knowingly with --accept-regression "<why>"',
              file=sys.stderr)  # fmt: skip
        return 1
    if refused is Refusal.FLOORS:
        # The new table would keep them (the team's floors are never dropped), and fail.
        for model, gates in sorted(checks.failing_floors.items()):
            for gate in gates:
                print(f"floor: {args.judge} {accept} on {model}: {gate.describe()}: fails")
        print(f"python -m judges baseline: prompt {accept} fails floors its table would keep "
              f"(above): not accepted, nothing written. Lower them in {GATES_FILE} if the team "
              "agrees, or replace every floor with its suggestion (--reset-floors)",
              file=sys.stderr)  # fmt: skip
        return 1
    if refused is Refusal.MISSES:
        for line in buried_refusal(args.judge, accept, checks):
            print(f"python -m judges baseline: {line}", file=sys.stderr)
        return 1
    not_fit, regressed = dict(checks.not_fit), checks.regressed(args.accept_regression or "")
    undecided = checks.undecided_reasons(args.accept_undecided or "")
    probe_tables = _probe_baseline(args, spec, rows_by_version, reliability)
    existing = files.read_gates()
    *written, notes = write_baseline(
        files,
        rows_by_version,
        reliability,
        accept=accept,
        existing=existing,
        reset_floors=args.reset_floors,
        not_fit=not_fit,
        regressed=regressed,
        undecided=undecided,
        miss_reasons=checks.miss_reasons(
            args.accept_control_miss or "", args.accept_no_verdict or ""
        ),
    )
    if probe_tables is not None:
        written.append(files.write_probe_expectations(probe_tables))
    today = datetime.date.today().isoformat()
    # Pinned with its cassettes and results: an accepted recording is never edited unseen.
    repinned = {
        key: f"{today}: {args.repin} ({len(names)} cassette(s) re-pinned)"
        for key, names in differing.items()
    }
    written.append(write_pins(folder, spec, accepted, today, cassettes, args.reports, repinned))
    for path in written:
        print(f"wrote {path}")
    for (model, version), names in sorted(differing.items()):
        for name in names:
            state = "re-pinned" if (cassettes / name).is_file() else "unpinned (gone)"
            print(f"{state}: {cassettes / name} ({args.judge} prompt {version} on {model}: "
                  f"--repin {args.repin!r})")  # fmt: skip
    print(f"accepted baseline: prompt {accept} (regression gates compare it and newer versions)")
    for line in _gate_sight(args.judge, spec, sources, accept, accepted_rows):
        print(line)
    if not any(row.run == "retest" for row in accepted_rows):
        # One draw as the reference: a lucky one fails honest re-records (gates-and-verdicts.md)
        print(f"note: prompt {accept} has no retest run, so its regression reference is one "
              "draw and a lucky recording makes honest re-records look worse; add "
              f"`retest = true` to {SET_FILE} and record the retest before relying on "
              "it")  # fmt: skip
    print(f"suggested floors (where none was set): {FLOORS_MET}")
    for line in notes:
        print(f"floor {line}")
    return 0


def _baseline_command(args: argparse.Namespace) -> str:
    """This `baseline --accept` command as run, for a hint: its folders where not the
    project's defaults."""
    project = find_project(Path.cwd())
    command = f"python -m judges baseline {args.judge} --accept {args.accept}"
    if args.planted_sets.absolute() != project.planted_sets.absolute():
        command += f" --planted-sets {args.planted_sets}"
    if args.reports.absolute() != project.reports.absolute():
        command += f" --reports {args.reports}"
    return command


def _recorded_versions(
    args: argparse.Namespace, spec: Any, sources: Any
) -> tuple[dict[str, list[Any]], dict[tuple[str, str], dict[str, Any]], dict[str, Any]]:
    """Every prompt version's rows, the reliability floors each (model, version) suggests,
    and its report's models (with their fitness). Raises ResultsMissing when a version has
    no results file."""
    from judges.cli.baseline import label_stability_gates, reading_list_gates, reliability_floors
    from judges.core.results import read_jsonl
    from judges.reports.model.folders import Results, build_folder

    rows_by_version = {}
    reliability = {}
    models = {}
    for version in spec.versions:
        folder = build_folder(Results(args.reports), args.judge, version, sources)
        models[version] = folder.models
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
            reliability[(model.model, version)] = (
                reliability_floors(sections)
                | label_stability_gates(mine, dict(spec.config.labels))
                | reading_list_gates(mine, sources)
            )
    return rows_by_version, reliability, models


def _gate_sight(judge: str, spec: Any, sources: Any, accept: str, rows: list[Any]) -> list[str]:
    """Per model, what the detection gate of the versions gated against the new baseline
    will see, against gates.toml's min_detectable_drop (judges.stats.regression.sensitivity)."""
    from judges.reports.sections import sensitivity
    from judges.sets.planted import Gates
    from judges.verdicts.regressions import baseline_sensitivity

    lines = []
    fields = (tuple(spec.config.dimensions), spec.config.flag)
    for model in sorted({row.model for row in rows if row.run == "main"}):
        table = sources.planted.gates.get((model, accept)) or Gates()
        mine = [row for row in rows if row.model == model]
        paired, scores = baseline_sensitivity(model, accept, mine, sources, fields, table)
        for found in paired:
            if not found.blind:
                lines.append(f"sees: {judge} {accept} on {model}: {sensitivity.seen(found)}")
                continue
            lines.append(
                f"warning: {judge} {accept} on {model}: its regression gates are "
                f"{sensitivity.blind_to(found)} ({GATES_FILE} min_detectable_drop "
                f"{found.required * 100:.0f} points): {sensitivity.needs(found)}; a PASS gated "
                f"against it will say so. `python -m judges plan {judge} --drop "
                f"{found.required:g}` plans the set"
            )
        for score in scores:
            lines.append(f"sees: {judge} {accept} on {model}: {sensitivity.score_seen(score)}")
    return lines


def _probe_regressions(
    args: argparse.Namespace, spec: Any, rows_by_version: dict[str, Any], models: Any
) -> dict[str, str]:
    """Per model, the accepted version's bias probes significantly worse than its baseline's."""
    from judges.cli.baseline import probe_regression
    from judges.sets.probes import load_recipe

    recipe = load_recipe(SetFolder(args.planted_sets, args.judge).probes_path)
    if recipe is None:
        return {}
    fields = [*spec.config.dimensions, *([spec.config.flag] if spec.config.flag else [])]
    found = {}
    for m in models:
        if m.baseline_version is None or m.baseline_version not in rows_by_version:
            continue
        base = [r for r in rows_by_version[m.baseline_version] if r.model == m.model]
        mine = [r for r in rows_by_version[args.accept] if r.model == m.model]
        line = probe_regression(base, mine, fields, recipe.score)
        if line is not None:
            found[m.model] = f"{line}, against prompt {m.baseline_version}"
    return found


def _probe_baseline(
    args: argparse.Namespace, spec: Any, rows_by_version: dict[str, Any], extra: dict[Any, Any]
) -> dict[tuple[str, str], Any] | None:
    """Fill `max_flip` into `extra` and return the accepted probe failures (None: no probes)."""
    from judges.cli.baseline import probe_baseline
    from judges.sets.planted import load_planted_set
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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or, when `command` names one, of the commands whose
    modules it needs (what `main` parses with: no other command's module is imported)."""
    if command in MODULE_COMMANDS:
        from_modules: tuple[str, ...] = (command,)
    elif command in ("derive", "report", "baseline"):  # declared here, imported as they run
        from_modules = ()
    else:  # the full --help, or a name argparse will refuse listing every command
        from_modules = MODULE_COMMANDS
    estimate_example = ""
    if "estimate" in from_modules:
        from judges.cli.power import ESTIMATE_EXAMPLE

        estimate_example = f"  {ESTIMATE_EXAMPLE}\n"
    parser = argparse.ArgumentParser(
        prog="python -m judges",
        description=__doc__,
        epilog="examples:\n"
        "  python -m judges derive product_identity\n"
        "  python -m judges report                      rebuild every report from results.jsonl\n"
        "  python -m judges report --judge geval        one judge only\n"
        "  python -m judges report --check              fail if a report differs from its rows\n"
        "  python -m judges report --judge product_identity --compare 0.3 0.3.1\n"
        "  python -m judges init support_reply          a new judge: prompts, set, tests, CI\n"
        "  python -m judges baseline product_identity --accept 0.3.1   accept a baseline\n"
        "  python -m judges leaderboard pairwise --version 0.1   rank the judge models per set\n"
        "  python -m judges finale --dry-run            promote finale finalists, no judging\n"
        "  python -m judges plan product_identity --drop 0.1 --power 0.8\n"
        "  python -m judges plant support_reply --from rows.jsonl   candidate items to review\n"
        f"{estimate_example}"
        "  python -m judges corpus report alpaca_eval   rank a corpus's systems per judge\n"
        "  python -m judges docs your-own-judge         a documentation page (docs: the list)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_derive(commands)
    _add_report(commands)
    _add_baseline(commands)
    for name in dict.fromkeys("plan" if n == "estimate" else n for n in from_modules):
        _add_module_command(commands, name)
    return parser


def _add_module_command(commands: Commands, name: str) -> None:
    """Declare `name` (of MODULE_COMMANDS; `plan` declares `estimate` too) from its module."""
    if name == "finale":
        from judges.cli.finale import add_finale_command

        add_finale_command(commands)
    elif name == "import":
        from judges.cli.importer import add_import_command

        add_import_command(commands)
    elif name == "leaderboard":
        from judges.cli.leaderboard import add_leaderboard_command

        add_leaderboard_command(commands, PLANTED_SETS_HELP, REPORTS_HELP)
    elif name == "init":
        from judges.cli.init import add_init_command

        add_init_command(commands)
    elif name == "plan":
        from judges.cli.power import add_power_commands

        add_power_commands(commands, str)
    elif name == "corpus":
        from judges.cli.corpus import add_corpus_command

        add_corpus_command(commands)
    elif name == "plant":
        from judges.cli.plant import add_plant_command

        add_plant_command(commands)
    elif name == "docs":
        from judges.cli.docs import add_docs_command

        add_docs_command(commands)
    else:
        raise AssertionError(f"no module declares the command {name!r}")


Commands = argparse._SubParsersAction  # what add_subparsers returns: one add_parser per command


def _add_derive(commands: Commands) -> None:
    derive = commands.add_parser(
        "derive",
        help=f"regenerate a planted set's generated items ({DERIVED_FILE}) and probes "
        f"({PROBES_FILE})",
    )
    derive.add_argument("judge", help="judge name, e.g. product_identity")
    derive.add_argument("--planted-sets", type=Path, help=PLANTED_SETS_HELP)
    derive.set_defaults(run=_derive)


def _add_report(commands: Commands) -> None:
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
    report.add_argument("--reports", "--report-dir", type=Path, help=REPORTS_HELP)
    report.add_argument("--planted-sets", type=Path, help=PLANTED_SETS_HELP)
    report.set_defaults(run=_report)


class _VersionWithoutAccept(argparse.Action):
    """`baseline JUDGE 1.0`: a version accepted only with --accept, so say the command."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values is None:  # no positional version: what a correct command gives
            setattr(namespace, self.dest, None)
            return
        judge = getattr(namespace, "judge", None) or "JUDGE"
        parser.error(
            f"a prompt version is accepted only with --accept: did you mean "
            f"`python -m judges baseline {judge} --accept {values}`?"
        )


def _add_baseline(commands: Commands) -> None:
    baseline = commands.add_parser(
        "baseline",
        help=f"accept a recorded run as the baseline: {EXPECTATIONS_FILE} and {GATES_FILE}",
        description="From reports/<judge>/<version>/results.jsonl of every prompt version, "
        f"write the planted set's {EXPECTATIONS_FILE} (every miss, as an accepted miss with its "
        f"reason) and {GATES_FILE}: `baseline` names the accepted prompt version, whose main run "
        "every version's regression gates compare with (paired McNemar, one-sided mid-p). "
        f"Floors the team set in {GATES_FILE} are kept; a missing floor is suggested from the "
        "interval's bound (lower Wilson bound rounded down to 0.05), never the point value. "
        "Review both files before committing.",
    )
    baseline.add_argument("judge", help="judge name, e.g. product_identity")
    # A version given without --accept would be "unrecognized": name the fix instead.
    baseline.add_argument(
        "version", nargs="?", action=_VersionWithoutAccept, help=argparse.SUPPRESS
    )
    baseline.add_argument(
        "--accept",
        metavar="VERSION",
        help="prompt version to accept as the baseline; it must be fully recorded. Without "
        "it, nothing is written: the command says what each version's recording holds",
    )
    baseline.add_argument(
        "--reset-floors",
        action="store_true",
        help="replace every floor with its suggestion (the team's floors are lost)",
    )
    baseline.add_argument(
        "--accept-not-fit",
        metavar="REASON",
        help="accept a NOT FIT version (no better than chance) anyway; the reason is written "
        f"to {GATES_FILE} as accept_not_fit, and its fitness test becomes a strict xfail",
    )
    baseline.add_argument(
        "--accept-regression",
        metavar="REASON",
        help="accept a version significantly worse than the current baseline (a failing "
        f"regression gate) anyway; the reason is written to {GATES_FILE} as accept_regression",
    )
    baseline.add_argument(
        "--accept-undecided",
        metavar="REASON",
        help="accept an UNDECIDED version (its set too small for any chance test to decide) "
        f"anyway; the reason is written to {GATES_FILE} as accept_undecided",
    )
    baseline.add_argument(
        "--accept-control-miss",
        metavar="REASON",
        help="accept controls the version marks down (new ones, each named first) as "
        f"accepted misses anyway; the reason is written beside each in {EXPECTATIONS_FILE}",
    )
    baseline.add_argument(
        "--accept-no-verdict",
        metavar="REASON",
        help="accept items the version gave no verdict (an error, a reply it could not read, "
        "a dropped item; each named first) as accepted misses anyway; the reason is written "
        f"beside each in {EXPECTATIONS_FILE}",
    )
    baseline.add_argument(
        "--repin",
        metavar="REASON",
        help="accept again a version whose pinned cassettes differ from the bytes on disk "
        "(edited, replaced or deleted since acceptance): each is named and pinned anew, and "
        f"the reason is written to {PINS_FILE} as repinned. Without it such an acceptance "
        "is refused, nothing written",
    )
    baseline.add_argument("--reports", "--report-dir", type=Path, help=REPORTS_HELP)
    baseline.add_argument("--planted-sets", type=Path, help=PLANTED_SETS_HELP)
    baseline.set_defaults(run=_baseline)


PLANTED_SETS_HELP = "planted sets folder (default: the ini's judges_planted_sets, or planted_sets)"
REPORTS_HELP = "reports folder (default: reports/ beside the pytest ini file)"
# What a mistake in the project's own files raises: one line on stderr, never a traceback.
USER_ERRORS = (ValueError, OSError)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    try:
        if args.command in (
            "derive",
            "report",
            "baseline",
            "plan",
            "estimate",
            "leaderboard",
            "plant",
        ):
            _project_defaults(parser, args)
        return int(args.run(args))
    except USER_ERRORS as error:
        print(f"python -m judges {args.command}: {' '.join(str(error).split())}", file=sys.stderr)
        return 2


def _project_defaults(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The judges, planted sets and reports of the project pytest would run here."""
    project = find_project(Path.cwd())
    args.catalog = project.catalog()
    args.planted_sets = args.planted_sets or project.planted_sets
    if hasattr(args, "reports"):
        args.reports = args.reports or project.reports
    if args.judge is not None and args.judge not in args.catalog:
        known = ", ".join(sorted(args.catalog))
        parser.error(f"unknown judge {args.judge!r}; known: {known}")
