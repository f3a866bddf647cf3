"""`python -m judges import`: released pairwise judgements into the project, idempotently.

`import benchmark SRC` (and `import llmbar SRC --benchmark`) takes the benchmark-neutral
format into a benchmark set of its own (`judges.cli.benchmarks`); the rest of this module is
the LLMBar reader's and the JSONL reader's path into the planted set and cassettes:

Writes, for a release read by `judges.sets.imports`:

- the items into `planted_sets/pairwise/items.jsonl` (other items kept, same ids replaced);
- `planted_sets/pairwise/releases/<name>/`: the release's LICENSE, its README (provenance),
  `prefixes.toml` (set -> id prefix, so a later import never renumbers) and its published
  statistics, `published/<category>/<model>.json`;
- one cassette per item and model, `cassettes/pairwise/<version>/imported-<model>/<item>.yaml`,
  holding the two orders as the two requests a replay sends, each answered by the released
  reply (`{"winner": "a" | "b" | null, "rationale": <the released text>}`), with the
  fingerprint `backend = imported`, model, strategy and source: never "recorded here".

A second import of the same release changes no byte. Tests read the project's copy only.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from judges.builtin.pairwise import ORDERS, to_position
from judges.calls.backends import IMPORTED, IMPORTED_PATH, BackendError, ModelRef, make_backend
from judges.calls.cassettes import FINGERPRINT_KEY, write_imported_cassette
from judges.cli.benchmarks import run_import
from judges.cli.release_versions import CONTENT, content_of, version_for
from judges.core.naming import Case
from judges.core.runner import first_requests
from judges.core.spec import JudgeSpec, load_catalog
from judges.sets.folder import SetFolder
from judges.sets.imports import (
    JUDGE,
    ImportError_,
    Release,
    Released,
    content_hashes,
    read_jsonl,
    read_llmbar,
    release_folder,
)
from judges.sets.items import PlantedItem
from judges.sets.planted import load_items
from judges.storage.files import atomic_write_text
from judges.storage.toml_files import toml_string

# The URI a replay never matches on (method, path and body only); the path is the SDK's.
_URI = f"http://imported.invalid{IMPORTED_PATH}"
IMPORTED_ORIGIN = "imported from a release, not recorded here"


@dataclass(frozen=True)
class Written:
    items: int
    cassettes: int
    changed: int
    models: tuple[str, ...]
    version: str = "0.1"
    # model -> the sets (categories) it has outputs for; empty: every item imported
    sets: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _write_if_changed(path: Path, text: str) -> bool:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return True


def known_prefixes(folder: Path) -> dict[str, str]:
    path = folder / "prefixes.toml"
    if not path.is_file():
        return {}
    return {str(k): str(v) for k, v in tomllib.loads(path.read_text(encoding="utf-8")).items()}


def taken_prefixes(
    planted_sets: Path, folder: Path, kept: list[PlantedItem], release: str
) -> set[str]:
    """The id prefixes of every other release of the judge (their prefixes.toml) and of the
    set's items not imported from this release: a new set's prefix repeats none of them."""
    taken: set[str] = set()
    for other in sorted((planted_sets / JUDGE / "releases").glob("*/prefixes.toml")):
        if other.parent != folder:
            taken |= set(known_prefixes(other.parent).values())
    taken |= {item.id.rsplit("-", 1)[0] for item in kept if item.provenance.release != release}
    return taken


def refuse_changes_elsewhere(read: Release, kept: list[PlantedItem], path: Path) -> None:
    """An import changes the items of the sets it imports, and no other set's figures: an
    item of another set (another release's, or the team's own) with a new item's id would
    be replaced, one in a new item's category would be scored with it."""
    new = {item.id: item for item in read.items}
    categories = {item.category: item for item in read.items}

    def origin(item: PlantedItem) -> tuple[str | None, str | None]:
        return item.provenance.release, item.provenance.release_set

    for item in kept:
        clash = new.get(item.id) or categories.get(item.category)
        if clash is None or origin(clash) == origin(item):
            continue
        theirs = item.provenance.release_set or item.category
        source = item.provenance.release or f"the team's own {item.provenance.source} items"
        how = (
            f"its item {item.id} would be replaced by {clash.provenance.release_set}'s"
            if item.id in new
            else f"its category {item.category} would also hold {clash.provenance.release_set}'s "
            "items"
        )
        raise ImportError_(
            f"{path}: importing {clash.provenance.release_set} of {read.name} would change "
            f"the figures of {theirs} ({source}), which this import does not import: {how}. "
            "Nothing was written. Give the set an id prefix of its own in the release's "
            "prefixes.toml, or import this release into a project of its own"
        )


def _merge_items(path: Path, items: list[PlantedItem], spec: JudgeSpec) -> bool:
    """The set's items with these replaced or appended; every other line kept as it is."""
    new = {item.id: item for item in items}
    lines: list[str] = []
    if path.is_file():
        for kept in load_items(path, spec):
            if kept.id not in new:
                lines.append(_item_line(kept))
    lines += [_item_line(item) for item in items]
    return _write_if_changed(path, "\n".join(lines) + "\n")


def _item_line(item: PlantedItem) -> str:
    return json.dumps(item.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def _response(model: str, item_id: str, order: str, reply: Released) -> dict[str, Any]:
    """A chat completion carrying the released reply; no usage was released (none here)."""
    content = {"winner": to_position(order, reply.winner), "rationale": reply.reply}
    return {
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": json.dumps(content, ensure_ascii=False),
                },
                "finish_reason": "stop",
            }
        ],
    }


def write_cassettes(
    spec: JudgeSpec,
    version: str,
    items: dict[str, PlantedItem],
    replies: list[Released],
    cassettes: Path,
    fingerprint: dict[str, str],
) -> tuple[int, int]:
    """One cassette per item and model, both orders; returns (written, changed)."""
    by_case: dict[tuple[str, str], dict[str, Released]] = defaultdict(dict)
    for reply in replies:
        by_case[(reply.model, reply.item_id)][reply.order] = reply
    written = changed = 0
    backends: dict[str, Any] = {}
    for (model_name, item_id), orders in sorted(by_case.items()):
        absent = [order for order in ORDERS if order not in orders]
        if absent:
            raise ImportError_(f"{model_name} on item {item_id}: no reply in order(s) {absent}")
        try:  # the release names the model, and the name becomes a cassette folder
            model = ModelRef.parse(f"{IMPORTED}:{model_name}")
        except BackendError as error:
            raise ImportError_(str(error)) from None
        if model_name not in backends:  # one SDK client per model: building one is slow
            backends[model_name] = make_backend(model, live=False)
        backend = backends[model_name]
        item = items[item_id]
        requests = first_requests(spec, version, item.subject())
        exchanges = [
            (
                backend.body(requests[order]),
                _response(model_name, item_id, order, orders[order]),
            )
            for order in ORDERS
        ]
        path = Case(spec.name, version, model, item.id, item.slug).cassette(cassettes)
        changed += write_imported_cassette(
            path, exchanges, fingerprint | {"model": model_name}, _URI
        )
        written += 1
    return written, changed


def import_llmbar(
    src: Path,
    root: Path,
    *,
    version: str | None = None,
    strategy: str = "Vanilla",
    release: str | None = None,
) -> Written:
    """Import an LLMBar-style folder into the project at `root` (planted_sets/, cassettes/).

    The release is known by its content (each set's dataset.json hash): a folder without
    the README, or under another name, is the release imported before. Each strategy is
    its own prompt version; `version` None takes the one the strategy was imported under.
    """
    planted_sets = root / "planted_sets"
    release = release or _release_name(src, planted_sets)
    folder = release_folder(planted_sets, release)
    version = version_for(strategy, version, release, folder, root / "cassettes")
    spec = _spec(version)
    items_path = SetFolder(planted_sets, JUDGE).items_path
    kept = load_items(items_path, spec) if items_path.is_file() else []
    taken = taken_prefixes(planted_sets, folder, kept, release)
    read = read_llmbar(src, strategy, release, known_prefixes(folder), taken)
    refuse_changes_elsewhere(read, kept, items_path)  # before anything is written
    changed = _write_release(read, folder, version)
    changed += _merge_items(items_path, read.items, spec)
    fingerprint = {
        "backend": IMPORTED,
        "origin": IMPORTED_ORIGIN,
        "source": release,
        "strategy": strategy,
    }
    items = {item.id: item for item in read.items}
    count, written = write_cassettes(
        spec, version, items, read.replies, root / "cassettes", fingerprint
    )
    models = tuple(sorted({reply.model for reply in read.replies}))
    covered = imported_coverage(spec, version, load_items(items_path, spec), root / "cassettes")
    return Written(len(read.items), count, changed + written, models, version, covered)


def imported_coverage(
    spec: JudgeSpec, version: str, items: list[PlantedItem], cassettes: Path
) -> dict[str, tuple[str, ...]]:
    """Every imported model under `version`, this import's and the releases' before it
    alike: the sets (categories) it has a cassette for. A release filed beside another
    adds items that the other's models never judged: each of those is named too."""
    covered: dict[str, tuple[str, ...]] = {}
    for folder in sorted((cassettes / spec.name / version).glob(f"{IMPORTED}-*")):
        first = next(iter(sorted(folder.glob("*.yaml"))), None)
        if first is None:
            continue
        metadata = (yaml.safe_load(first.read_text(encoding="utf-8")) or {}).get("metadata")
        name = str(((metadata or {}).get(FINGERPRINT_KEY) or {}).get("model") or "")
        if not name:
            continue
        model = ModelRef.parse(f"{IMPORTED}:{name}")
        sets = {
            item.category
            for item in items
            if Case(spec.name, version, model, item.id, item.slug).cassette(cassettes).is_file()
        }
        covered[name] = tuple(sorted(sets))
    return covered


def import_jsonl(
    path: Path, root: Path, *, model: str, version: str, source: str, strategy: str = ""
) -> Written:
    """Import a team's logged decisions on items already in the planted set."""
    spec = _spec(version)
    items = {i.id: i for i in load_items(SetFolder(root / "planted_sets", JUDGE).items_path, spec)}
    replies = read_jsonl(path, model, set(items))
    fingerprint = {
        "backend": IMPORTED,
        "origin": IMPORTED_ORIGIN,
        "source": source,
        "strategy": strategy or f"prompt {version}",
    }
    count, changed = write_cassettes(spec, version, items, replies, root / "cassettes", fingerprint)
    return Written(len({r.item_id for r in replies}), count, changed, (model,))


def _spec(version: str) -> JudgeSpec:
    spec = load_catalog()[JUDGE]
    if version not in spec.prompts:
        raise ImportError_(
            f"pairwise has no prompt version {version} ({', '.join(spec.versions)}); add "
            f"judges/prompts/pairwise/{version}/ naming the source's prompt by reference"
        )
    return spec


def _release_name(src: Path, planted_sets: Path) -> str:
    """`princeton-nlp/LLMBar@<commit>` when the folder's README names them; else the name of
    the release imported before with the same content; else the folder's name and hash."""
    readme = src / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    repository = re.search(r"\b([\w.-]+/LLMBar)\b", text)
    commit = re.search(r"commit ([0-9a-f]{7,40})", text)
    if repository or commit:
        name = repository.group(1) if repository else src.name
        return f"{name}@{commit.group(1)}" if commit else name
    hashes = content_hashes(src)
    for known in sorted((planted_sets / JUDGE / "releases").glob(f"*/{CONTENT}")):
        table = tomllib.loads(known.read_text(encoding="utf-8"))
        sets = table.get("sets", {})
        if any(sets.get(name) == digest for name, digest in hashes.items()):
            return str(table["name"])
    digest = hashlib.sha256("".join(sorted(hashes.values())).encode()).hexdigest()
    return f"{src.name}@sha256:{digest[:12]}"


def _write_release(read: Release, folder: Path, version: str) -> int:
    changed: int = _write_if_changed(folder / "LICENSE", read.license_text)
    if read.notes_text:
        changed += _write_if_changed(folder / "README.md", read.notes_text)
    prefixes = "".join(f"{toml_string(k)} = {toml_string(v)}\n" for k, v in read.prefixes.items())
    changed += _write_if_changed(folder / "prefixes.toml", prefixes)
    content = content_of(folder)
    sets = dict(content.get("sets", {})) | read.contents
    strategies = dict(content.get("strategies", {})) | {read.strategy: version}
    text = (
        f"# {read.name}: known by its content, whatever its folder or README\n"
        f"name = {toml_string(read.name)}\n\n[sets]\n"
        + "".join(f"{toml_string(k)} = {toml_string(v)}\n" for k, v in sorted(sets.items()))
        + "\n[strategies]  # strategy -> the prompt version its outputs are under\n"
        + "".join(f"{toml_string(k)} = {toml_string(v)}\n" for k, v in sorted(strategies.items()))
    )
    changed += _write_if_changed(folder / CONTENT, text)
    for (category, model), stats in sorted(read.published.items()):
        text = json.dumps(stats, indent=2, ensure_ascii=False) + "\n"
        changed += _write_if_changed(
            folder / "published" / read.strategy / category / f"{model}.json", text
        )
    return changed


def _run(args: Any) -> int:
    try:
        if args.form == "benchmark" or (args.form == "llmbar" and args.benchmark):
            return run_import(
                args, lambda: args.release or _release_name(args.src, args.root / "planted_sets")
            )
        if args.form == "llmbar":
            done = import_llmbar(
                args.src,
                args.root,
                version=args.prompt_version,
                strategy=args.strategy,
                release=args.release,
            )
        else:
            if not args.model or not args.source:
                raise ImportError_("import jsonl needs --model NAME and --source TEXT")
            done = import_jsonl(
                args.src,
                args.root,
                model=args.model,
                version=args.prompt_version or "0.1",
                source=args.source,
                strategy=args.strategy,
            )
    except (ImportError_, OSError) as error:
        print(f"python -m judges import: {error}", file=sys.stderr)
        return 2
    print(
        f"{done.items} items, {done.cassettes} cassettes ({done.changed} files changed) "
        f"for {', '.join(f'imported:{m}' for m in done.models)}"
    )
    _check_set_toml(args.root, done)
    return 0


def _check_set_toml(root: Path, done: Written) -> None:
    """Name the models set.toml must list for the offline gate to replay them, and the sets
    of a model with outputs for only some (else its version reads INCOMPLETE)."""
    files = SetFolder(root / "planted_sets", JUDGE)
    path, table = files.config_path, files.read_config()
    run = table.get("versions", {}).get(done.version, {})
    listed = set(run.get("models", []))
    absent = [f"imported:{m}" for m in done.models if f"imported:{m}" not in listed]
    if absent:
        print(
            f'add {", ".join(absent)} to [versions."{done.version}"] models in {path} so that '
            "the offline gate replays them"
        )
    every = set().union(*done.sets.values()) if done.sets else set()
    given = run.get("model_items", {})
    # Every model of the version: a second release filed beside the first adds sets the
    # first release's models never judged, and each of them needs its line too.
    for model, sets in sorted(done.sets.items()):
        if set(sets) != every and f"imported:{model}" not in given:
            print(
                f'imported:{model} has outputs for {", ".join(sets)} only: add "imported:{model}" '
                f'= {json.dumps(list(sets))} to [versions."{done.version}".model_items] in {path}'
            )


def add_import_command(commands: Any) -> None:
    """`python -m judges import llmbar SRC` and `python -m judges import jsonl FILE`."""
    parser = commands.add_parser(
        "import",
        help="import released pairwise judgements (LLMBar layout, or plain JSONL) as items "
        "and cassettes that replay offline",
        description="Writes the items into planted_sets/pairwise/ (with the release's licence "
        "and provenance) and one cassette per item and model under cassettes/pairwise/, "
        "fingerprinted as imported. A second import changes no byte.",
    )
    parser.add_argument(
        "form",
        choices=("benchmark", "llmbar", "jsonl"),
        help="the source's layout: benchmark (the neutral format: python -m judges docs "
        "pairwise-benchmarks), "
        "llmbar (LLMBar's folders), jsonl (a team's logged decisions on items imported before)",
    )
    parser.add_argument(
        "src", type=Path, help="a benchmark folder, an LLMBar-style folder, or a JSONL file"
    )
    parser.add_argument(
        "--benchmark",
        action="store_true",
        help="llmbar: convert it to the neutral format and import it as a benchmark set "
        "(planted_sets/pairwise/benchmarks/<name>/) instead of items and cassettes",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="benchmark: replace a benchmark of the same name imported before from other files",
    )
    parser.add_argument(
        "--prompt-version",
        help="the pairwise prompt version the judgements are filed under (llmbar default: the "
        "version the strategy was imported under before, else 0.1, LLMBar's Vanilla prompt by "
        "reference; jsonl default 0.1). Each strategy is its own version",
    )
    parser.add_argument(
        "--strategy",
        default="Vanilla",
        help="llmbar: the evaluators/<model>/<strategy> to read; with --benchmark, `all` "
        "reads every strategy into one benchmark, each judge as <model>/<strategy>",
    )
    parser.add_argument(
        "--release",
        help="release name (default: from the folder's README, else the release imported "
        "before with the same dataset files, else the folder's name and content hash)",
    )
    parser.add_argument("--model", help="jsonl: the judge model's name (imported:<name>)")
    parser.add_argument("--source", help="jsonl: where the decisions come from")
    parser.add_argument("--root", type=Path, default=Path("."), help="project root")
    parser.set_defaults(run=_run)
