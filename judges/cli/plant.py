"""`python -m judges plant`: candidate planted items from a team's real rows, then review.

python -m judges plant JUDGE --from rows.jsonl     write planted_sets/JUDGE/candidates.jsonl
python -m judges plant --list                      the generators, built-in and the team's

With --judge-model, the model-written generators run too: recorded with --record (live
calls, cassettes under cassettes/planting/), replayed from their cassettes without it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tomllib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.calls.backends import BackendError, ModelRef
from judges.cli.live import add_call_options
from judges.cli.plant_review import shown
from judges.core.results import Expectation
from judges.core.spec import JudgeSpec
from judges.sets.candidates import (
    CANDIDATES_FILE,
    Candidate,
    Planting,
    plant,
    write_candidates,
)
from judges.sets.folder import ITEMS_FILE, PROBES_FILE, SetFolder
from judges.sets.generators import Generator, GeneratorError, Options, load_generators
from judges.sets.items import PlantedItem
from judges.sets.review import REVIEW_FILE
from judges.sets.source_rows import input_names, parse_mapping, read_rows

if TYPE_CHECKING:  # the recorded calls are imported only when a model is asked
    from judges.cli.plant_writer import Aim, RecordedWriter

NEEDS_ENTITIES = "entity_swap"  # runs by default only when the team gives its list
NEEDS_AIM = "rubric_level"  # runs only with --rubric-level FIELD=LEVEL


class PlantError(ValueError):
    """A `plant` option cannot be used; the message names it and the fix."""


def _entities(path: Path | None) -> dict[str, str]:
    """`--entities FILE`: a TOML file of `"name" = "its cousin"` lines."""
    if path is None:
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise PlantError(f"--entities {path}: not a readable TOML file ({error})") from None
    bad = sorted(k for k, v in table.items() if not isinstance(v, str) or not v or not k)
    if bad or not table:
        raise PlantError(
            f'--entities {path}: each line is "name" = "its cousin", e.g. "Acme Pro" = '
            f'"Acme Lite" (not a text: {bad or "the file is empty"})'
        )
    return table


def _conditions(texts: list[str] | None) -> tuple[Expectation, ...] | None:
    from judges.verdicts.estimate import parse_condition

    return tuple(parse_condition(text) for text in texts) if texts else None


def _usual(items: list[PlantedItem], control: bool) -> tuple[Expectation, ...]:
    """The expectation most of the set's defects (or controls) share; none when it has none."""
    shared = Counter(item.expect for item in items if item.control == control)
    return shared.most_common(1)[0][0] if shared else ()


def _expectations(
    args: argparse.Namespace, spec: JudgeSpec
) -> tuple[tuple[Expectation, ...], tuple[Expectation, ...]]:
    """The defect and control expectations: as given, or what the set's own items expect."""
    from judges.sets.planted import load_items

    defect, control = _conditions(args.expect), _conditions(args.control_expect)
    items_path = SetFolder(args.planted_sets, spec.name).items_path
    items = load_items(items_path, spec) if items_path.is_file() else []
    defect = defect or _usual(items, control=False)
    control = control or _usual(items, control=True)
    if not defect:
        raise PlantError(
            f"what must a generated defect meet? {items_path} has no defect to take it from: "
            "give it, e.g. --expect 'accuracy <= 1' (repeatable; all must hold)"
        )
    if args.control_label is not None and not control:
        raise PlantError(
            f"what must a control meet? {items_path} has no control to take it from: give "
            "it, e.g. --control-expect 'accuracy >= 2'"
        )
    return defect, control


def _chosen(args: argparse.Namespace, registry: dict[str, Generator]) -> dict[str, Generator]:
    if args.generators:
        names = [n.strip() for n in args.generators.split(",") if n.strip()]
        unknown = [n for n in names if n not in registry]
        if unknown:
            raise PlantError(
                f"--generators: {unknown} not known; the generators are {', '.join(registry)}"
            )
        if NEEDS_AIM in names and args.rubric_level is None:
            raise PlantError(
                f"--generators: {NEEDS_AIM} writes for one level of a dimension: give it, "
                "e.g. --rubric-level accuracy=1"
            )
        unwritten = [n for n in names if registry[n].written and args.judge_model is None]
        if unwritten:
            raise PlantError(
                f"--generators: {', '.join(unwritten)} are model-written: name the model that "
                "writes them, e.g. --judge-model local:NAME --judge-base-url URL --record"
            )
        return {n: registry[n] for n in names}
    return {
        n: g
        for n, g in registry.items()
        if (n != NEEDS_ENTITIES or args.entities)
        and (n != NEEDS_AIM or args.rubric_level)
        and (not g.written or args.judge_model)
    }


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _summary(planting: Planting, rows: int, path: Path, chosen: dict[str, Generator]) -> list[str]:
    made = planting.made()
    by = {c.generator: c.written for c in planting.candidates if c.written is not None}
    lines = [f"wrote {shown(path)}: {len(planting.candidates)} candidates from {rows} rows"]
    for name, generator in chosen.items():
        skipped = planting.skipped.get(name, Counter())
        written = by.get(name)
        kind = generator.kind + (
            f"; {written.model}, prompt {written.prompt_version}" if written else ""
        )
        line = f"  {name} ({kind}): {made[name]} made"
        for reason, n in sorted(skipped.items()):
            first = planting.skipped_lines[(name, reason)][:5]
            more = ", ..." if n > len(first) else ""
            line += f"; {_rows(n)} skipped, {reason} (lines {', '.join(map(str, first))}{more})"
        lines.append(line)
    if made["source"]:
        lines.append(f"  source (control): {made['source']} made, one per row labelled a control")
    if planting.unlabelled:
        lines.append(
            f"  {_rows(len(planting.unlabelled))} not labelled as controls, not planted from "
            f"(lines {', '.join(map(str, planting.unlabelled[:5]))}"
            f"{', ...' if len(planting.unlabelled) > 5 else ''})"
        )
    return lines


def _list(registry: dict[str, Generator]) -> int:
    for generator in registry.values():
        print(
            f"{generator.name:18} {generator.kind:10} {generator.category:18} {generator.summary}"
        )
    return 0


def run_plant(args: argparse.Namespace) -> int:
    try:
        registry = load_generators(args.generator_module or ())
    except GeneratorError as error:
        raise PlantError(str(error)) from None
    if args.list:
        return _list(registry)
    if args.judge is None:
        raise PlantError("name the judge: python -m judges plant JUDGE --from FILE")
    spec = args.catalog[args.judge]
    modes = [m for m in ("source", "review", "review_page", "apply") if getattr(args, m)]
    if len(modes) != 1:
        raise PlantError(
            "say what to do, one at a time: --from FILE (make candidates), --review (decide "
            "in the terminal), --review-page (decide in a browser) or --apply (add the "
            f"accepted ones to the set){'; got ' + ', '.join(modes) if modes else ''}"
        )
    if args.source is None:
        return _review_or_apply(args, spec)
    names = input_names(spec)
    field = args.field or names[-1]
    if field not in names:
        raise PlantError(f"--field {field}: not an input of {spec.name} ({', '.join(names)})")
    chosen = _chosen(args, registry)
    options = Options(entities=_entities(args.entities))
    defect, control = _expectations(args, spec)
    mapping = parse_mapping(args.map or [], names)
    rows = read_rows(args.source, spec, mapping, args.id_column, args.label_column)
    with _models(args, spec, chosen) as (writer, checker):
        planting = plant(
            spec.name, rows.rows, chosen, field=field, seed=args.seed, defect_expect=defect,
            control_expect=control, control_label=args.control_label,
            options=options, writer=writer,
        )  # fmt: skip
        if checker is not None:
            planting.candidates = [
                c if c.kind == "control" else checker.confirm(c) for c in planting.candidates
            ]
    path = args.planted_sets / spec.name / CANDIDATES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_candidates(path, planting.candidates)
    print(f"editing the input {field!r} of {spec.name} (--field for another), seed {args.seed}")
    if rows.ignored_columns:
        unused = ", ".join(rows.ignored_columns)
        print(f"columns not used (neither an input, the id nor the label): {unused}; "
              "--map COLUMN=INPUT if one is an input")  # fmt: skip
    if NEEDS_ENTITIES in registry and NEEDS_ENTITIES not in chosen and not args.generators:
        print(f"{NEEDS_ENTITIES}: not run (give the team's pairs with --entities FILE)")
    for line in _summary(planting, len(rows.rows), path, chosen):
        print(line)
    if checker is not None:
        print(_checked_line(planting.candidates, checker))
    capped = 0
    for asked in (writer, checker):
        if asked is not None and asked.record:
            print(f"{asked.model}: {asked.live_calls} live calls, cassettes in "
                  f"{shown(asked.cassettes)}; without --record, plant replays them")  # fmt: skip
        capped += 0 if asked is None else asked.capped
    if capped:
        print(
            f"INCOMPLETE: the cost cap of ${args.cost_cap:.4f} stopped {capped} model calls "
            "(nothing recorded for them); record them with a higher --cost-cap: the calls "
            "already recorded are replayed",
            file=sys.stderr,
        )
        return 1
    return 0


def _checked_line(candidates: list[Candidate], checker: RecordedWriter) -> str:
    checked = [c for c in candidates if c.confirmed is not None]
    disagree = [c.id for c in checked if c.confirmed is not None and not c.confirmed.agrees]
    line = (
        f"second model {checker.model}: {len(checked)} candidates checked, "
        f"{len(disagree)} disagree with their intended label"
    )
    if disagree:
        line += f" ({', '.join(disagree[:5])}{', ...' if len(disagree) > 5 else ''})"
    if checker.unconfirmed:
        reasons = Counter(checker.unconfirmed.values())
        line += "; not checked: " + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))
    return line + "; the review shows each check"


def _parsed(option: str, text: str) -> ModelRef:
    try:
        return ModelRef.parse(text)
    except BackendError as error:
        raise PlantError(f"{option}: {error}") from None


def _aim(text: str | None, spec: JudgeSpec) -> Aim | None:
    """`--rubric-level FIELD=LEVEL`: a dimension of the judge and a whole-number level, and
    the judge's newest prompt, which defines the levels, for the writer."""
    from judges.cli.plant_writer import Aim
    from judges.core.spec import version_key

    if text is None:
        return None
    name, _, level = text.partition("=")
    dimensions = spec.config.dimensions
    if name.strip() not in dimensions or not level.strip().isdigit():
        raise PlantError(
            f"--rubric-level {text}: give one of {spec.name}'s dimensions and a level (a "
            f"whole number, 0 or more), FIELD=LEVEL, e.g. {(dimensions or ('accuracy',))[0]}=1"
        )
    newest = spec.prompts[max(spec.prompts, key=version_key)]
    instructions = "\n\n".join(newest.templates.values())
    return Aim(name.strip(), int(level), instructions)


@contextmanager
def _models(
    args: argparse.Namespace, spec: JudgeSpec, chosen: dict[str, Generator]
) -> Iterator[tuple[RecordedWriter | None, RecordedWriter | None]]:
    """The model that writes the model-written candidates and the second model that checks
    each candidate (`--confirm-model`), either absent: live with --record (the embedded
    judge started for a local model without --judge-base-url), the network blocked
    without it. Both share one cost ledger, so --cost-cap holds for the command."""
    if args.cost_cap is not None and not args.record:
        raise PlantError("--cost-cap caps live calls: pass it with --record")
    if args.record and args.judge_model is None and args.confirm_model is None:
        raise PlantError("--record calls the model that writes candidates: name it with "
                         "--judge-model (e.g. local:NAME --judge-base-url URL)")  # fmt: skip
    wanted = {}
    if any(g.written for g in chosen.values()):
        wanted["--judge-model"] = _parsed("--judge-model", args.judge_model)
    if args.confirm_model is not None:
        wanted["--confirm-model"] = _parsed("--confirm-model", args.confirm_model)
    if not wanted:
        yield None, None
        return
    from judges.calls.ledger import Ledger
    from judges.cli.live import judging_backends
    from judges.cli.plant_writer import PLANTING_CASSETTES, RecordedWriter, WriterStopped
    from judges.cli.project import find_project

    cassettes = args.cassettes or find_project(Path.cwd()).rootdir / "cassettes"
    cassettes = cassettes / PLANTING_CASSETTES
    models = {str(model): model for model in wanted.values()}
    with (
        _recording_lock(cassettes, args.record),
        tempfile.TemporaryDirectory(prefix="judges-plant-") as scratch,
        judging_backends(
            models, record=args.record, base_url=args.judge_base_url,
            price_files=args.judge_prices, error=PlantError,
        ) as (backends, prices),
    ):  # fmt: skip
        ledger = Ledger(Path(scratch) / "ledger.jsonl", args.cost_cap)
        asked = {
            option: RecordedWriter(
                spec.name,
                model,
                backends[str(model)],
                prices[str(model)],
                cassettes,
                args.record,
                args.judge_base_url,
                ledger,
                args.judge_timeout,
            )
            for option, model in wanted.items()
        }
        if "--judge-model" in asked:
            asked["--judge-model"].aim = _aim(args.rubric_level, spec)
        try:
            yield asked.get("--judge-model"), asked.get("--confirm-model")
        except WriterStopped as stopped:
            raise PlantError(f"{stopped}; nothing was written") from None


@contextmanager
def _recording_lock(cassettes: Path, record: bool) -> Iterator[None]:
    """With --record, the cassette folder's recording lock, as every recording takes."""
    if not record:
        yield
        return
    from judges.calls.cassettes import lock_recording
    from judges.storage.files import FolderBusy

    cassettes.mkdir(parents=True, exist_ok=True)
    try:
        lock = lock_recording(cassettes)
    except FolderBusy as busy:
        raise PlantError(
            f"another recording ({busy.who}) holds {cassettes}; wait until "
            "it ends, then run this again"
        ) from None
    try:
        yield
    finally:
        lock.release()


def _review_or_apply(args: argparse.Namespace, spec: JudgeSpec) -> int:
    from judges.cli.init import item_prefix
    from judges.cli.plant_review import apply_lines, merge_decisions, review_in_terminal

    folder = args.planted_sets / spec.name
    if args.review:
        if not args.reviewer:
            raise PlantError("--review needs --reviewer NAME: each decision records who made it")
        made = review_in_terminal(folder, args.reviewer)
        decisions = shown(folder / REVIEW_FILE)
        print(
            f"review: {made['accept']} accepted, {made['edit']} edited, {made['reject']} "
            f"rejected, {made['skipped']} skipped; decisions in {decisions}; add the "
            f"accepted ones with: python -m judges plant {spec.name} --apply"
        )
        return 0
    if args.review_page:
        from judges.cli.review_page import write_review_page

        page = write_review_page(folder, spec.name)
        print(f"wrote {shown(page)}: open it in a browser, decide, download the decisions, then: "
              f"python -m judges plant {spec.name} --apply --decisions FILE")  # fmt: skip
        return 0
    if args.decisions is not None:
        merged = merge_decisions(folder, args.decisions)
        print(f"{merged} decisions from {args.decisions} added to {folder / REVIEW_FILE}")
    lines, warnings = apply_lines(args.planted_sets, spec, item_prefix(spec.name))
    for line in lines:
        print(line)
    for line in warnings:
        print(f"warning: {line}")
    return 0


def add_plant_command(commands: Any) -> None:
    plant_cmd = commands.add_parser(
        "plant",
        help="candidate planted items generated from real rows (JSONL or CSV), to review",
        description="Read real rows (the judged inputs, an optional id and label) and write "
        "candidate planted items to planted_sets/<judge>/candidates.jsonl, each with its "
        "source row, generator, seed and the expectation it should meet: defects (truncation, "
        "a sentence dropped, a number changed, a negation, an entity swapped) and invariance "
        f"items (blank lines, spaces, indentation, Markdown). Nothing joins {ITEMS_FILE} before "
        "review. See `python -m judges docs planting`.",
        epilog="example:\n  python -m judges plant support_reply --from rows.jsonl "
        "--map output=reply --control-label good",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plant_cmd.add_argument("judge", nargs="?", help="judge name, e.g. support_reply")
    plant_cmd.add_argument(
        "--from", dest="source", type=Path, metavar="FILE", help="the real rows: .jsonl or .csv"
    )
    plant_cmd.add_argument(
        "--map", action="append", metavar="COLUMN=INPUT",
        help="a column whose name differs from the judge's input (repeatable)",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--field", help="the input the generators edit (default: the judge's last input)"
    )
    plant_cmd.add_argument("--id-column", default="id", help="the rows' id column (default id)")
    plant_cmd.add_argument(
        "--label-column", default="label", help="the rows' label column (default label)"
    )
    plant_cmd.add_argument(
        "--control-label", metavar="LABEL",
        help="rows with this label are good answers: each becomes a control candidate, and "
        "only they are planted from",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--generators", metavar="A,B", help="only these generators (default: every one; "
        "entity_swap only with --entities)",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--generator-module", action="append", metavar="PKG.MODULE",
        help="a module of the team's defining GENERATOR (repeatable; python -m judges docs "
        "planting)",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--entities", type=Path, metavar="FILE",
        help='a TOML file of "name" = "its cousin" lines, for entity_swap',
    )  # fmt: skip
    plant_cmd.add_argument(
        "--expect", action="append", metavar="CONDITION",
        help="what a generated defect must meet, e.g. 'accuracy <= 1' (repeatable; default: "
        "what most of the set's defects expect)",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--control-expect", action="append", metavar="CONDITION",
        help="what a control must meet, e.g. 'accuracy >= 2' (default: what most of the "
        "set's controls expect)",
    )  # fmt: skip
    plant_cmd.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    plant_cmd.add_argument("--list", action="store_true", help="list the generators and stop")
    plant_cmd.add_argument(
        "--review", action="store_true",
        help="decide on each pending candidate in the terminal (accept, reject, edit), beside "
        "its source row; decisions go to planted_sets/<judge>/review.jsonl",
    )  # fmt: skip
    plant_cmd.add_argument("--reviewer", help="who decides (--review): written with each decision")
    plant_cmd.add_argument(
        "--review-page", action="store_true",
        help="write planted_sets/<judge>/review.html: decide in a browser, download decisions",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--apply", action="store_true",
        help=f"add the accepted candidates to {ITEMS_FILE} (invariance ones to {PROBES_FILE}) and "
        "say whether each category is large enough to decide",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--decisions", type=Path, metavar="FILE",
        help="with --apply: decisions downloaded from the review page, added to review.jsonl",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--judge-model", metavar="BACKEND:MODEL",
        help="the model that writes the model-written candidates (paraphrase, longer, "
        "shorter, label_flip), e.g. local:NAME or openai:MODEL; without it they do not run",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--rubric-level", metavar="FIELD=LEVEL",
        help="with --judge-model: rubric_level writes each row's answer for this level of "
        "this dimension, e.g. accuracy=1; its candidates expect exactly that level",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--confirm-model", metavar="BACKEND:MODEL",
        help="a second model that checks each candidate (not the controls): does it differ "
        "from its row in a way that matters? A disagreement is shown in the review",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--judge-base-url", metavar="URL",
        help="OpenAI-compatible server for a local: model (default with --record: start the "
        "embedded llama.cpp judge)",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--record", action="store_true",
        help="call the model for the rows whose cassette is missing and record them "
        "(cassettes/planting/); without it, every model-written text is replayed offline",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--cost-cap", type=float, metavar="USD",
        help="with --record: no call whose worst case could take the spend past this many USD",
    )  # fmt: skip
    add_call_options(plant_cmd)
    plant_cmd.add_argument(
        "--cassettes", "--cassette-dir", type=Path,
        help="cassette folder (default: cassettes/ beside the pytest ini file); model-written "
        "candidates are recorded under its planting/",
    )  # fmt: skip
    plant_cmd.add_argument(
        "--planted-sets", type=Path,
        help="planted sets folder (default: the ini's judges_planted_sets, or planted_sets)",
    )  # fmt: skip
    plant_cmd.set_defaults(run=run_plant)
