"""`python -m judges import benchmark SRC` and the benchmarks of `python -m judges leaderboard`.

A benchmark in the neutral format (`judges.sets.benchmark`, docs/pairwise-benchmarks.md) is
checked whole, then copied into `planted_sets/<judge>/benchmarks/<name>/` with a `set.toml`
saying `kind = "benchmark"`: its own set, beside every other benchmark and the judge's
planted set, its item ids its own (two releases never share an id), its judges judged only
on what they were imported for. Its judgements are data, replayed by no backend: an imported
judge needs no prompt file. A second import of the same files changes no byte; other files
under the same name are refused unless `--replace`.

`judges.cli.importer` keeps LLMBar's reader; `llmbar_files` converts what it reads into the
neutral form (`import llmbar SRC --benchmark`).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.reports.sections.benchmark import benchmark_text, published_lines
from judges.sets.benchmark import (
    FILES,
    ITEMS_FILE,
    JUDGEMENTS_FILE,
    MANIFEST_FILE,
    PUBLISHED_FILE,
    BenchmarkError,
    load_benchmark,
)
from judges.sets.folder import SET_FILE
from judges.sets.imports import JUDGE, ImportError_, Release, read_llmbar, strategies_found
from judges.stats.fitness.benchmark import benchmark_published
from judges.stats.fitness.benchmark_board import boards
from judges.stats.fitness.published import llmbar_published
from judges.storage.files import atomic_write_bytes

LICENCE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE")
SET_TOML = (
    "# A labelled benchmark's released judgements, imported with python -m judges import "
    "benchmark.\n# A wrong item is a statistic (its figure, interval and chance test), not a "
    "failed test;\n# the suite checks its published figures (published.jsonl) to the digit.\n"
    'kind = "benchmark"\n'
)


@dataclass(frozen=True)
class Imported:
    folder: Path
    changed: int
    lines: list[str]


def benchmark_root(planted_sets: Path, judge: str = JUDGE) -> Path:
    return planted_sets / judge / "benchmarks"


def benchmark_folders(planted_sets: Path, judge: str = JUDGE) -> list[Path]:
    return [
        p.parent for p in sorted(benchmark_root(planted_sets, judge).glob(f"*/{MANIFEST_FILE}"))
    ]


def _files(src: Path) -> dict[str, bytes]:
    names = [*FILES, *(n for n in LICENCE_FILES if (src / n).is_file())]
    return {name: (src / name).read_bytes() for name in names if (src / name).is_file()}


def import_benchmark(
    src: Path, planted_sets: Path, *, judge: str = JUDGE, replace: bool = False
) -> Imported:
    """Check `src` whole, then copy it into the project; nothing is written on a problem."""
    benchmark = load_benchmark(src)
    name = benchmark.manifest.name
    folder = benchmark_root(planted_sets, judge) / name
    files = _files(src) | {SET_FILE: SET_TOML.encode()}
    if folder.is_dir() and not replace:
        before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        if before != files:
            raise BenchmarkError(
                f"{folder} already holds a benchmark named {name!r} with other files; give "
                "this one another name in its benchmark.toml (a second release: "
                f'name = "{name}-v2"), or pass --replace to replace it'
            )
    changed = 0
    if folder.is_dir():
        for old in folder.iterdir():
            if old.is_file() and old.name not in files:
                old.unlink()
                changed += 1
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, data in files.items():
        path = folder / file_name
        if not path.is_file() or path.read_bytes() != data:
            atomic_write_bytes(path, data)
            changed += 1
    copied = load_benchmark(folder)
    matches = benchmark_published(copied)
    counts = {judge: sum(j.judge == judge for j in copied.judgements) for judge in copied.judges}
    equal = sum(m.equal for m in matches)
    lines = [
        f"{name}: {len(copied.items)} items in {len(copied.subsets)} subset"
        f"{'s' * (len(copied.subsets) != 1)} "
        f"({', '.join(copied.subsets)}), {len(counts)} judges "
        f"({', '.join(f'{j} {n} judgements' for j, n in counts.items())}); "
        f"licence: {copied.manifest.licence}; {changed} files changed in {folder}",
        f"published figures: {equal} of {len(matches)} reproduced exactly"
        if matches
        else "published figures: none given (published.jsonl)",
        *(published_lines([m for m in matches if not m.equal])),
    ]
    return Imported(folder, changed, lines)


def run_import(args: Any, release: Callable[[], str]) -> int:
    """`import benchmark SRC`, or `import llmbar SRC --benchmark` (`release`: its name)."""
    planted_sets = args.root / "planted_sets"
    try:
        if args.form == "benchmark":
            done = import_benchmark(args.src, planted_sets, replace=args.replace)
        else:
            name = release()
            every = strategies_found(args.src) if args.strategy == "all" else [args.strategy]
            reads = [read_llmbar(args.src, s, name, {}, set(), False) for s in every]
            done = import_llmbar_benchmark(reads, planted_sets, replace=args.replace)
    except (ImportError_, BenchmarkError, OSError) as error:
        print(f"python -m judges import: {error}", file=sys.stderr)
        return 2
    print("\n".join(done.lines))
    print(f"see it ranked: python -m judges leaderboard pairwise --benchmark {done.folder.name}")
    return 0


def leaderboard_lines(folder: Path) -> list[str]:
    benchmark = load_benchmark(folder)
    lines = benchmark_text(benchmark, boards(benchmark))
    matches = benchmark_published(benchmark)
    if matches:
        equal = sum(m.equal for m in matches)
        lines += ["", f"published figures: {equal} of {len(matches)} reproduced exactly"]
        lines += published_lines(matches)
    return lines


# --------------------------------------------------------------------------- LLMBar


_LABEL = {"1": "A", "2": "B", None: "none"}


def llmbar_files(reads: Sequence[Release]) -> dict[str, str]:
    """An LLMBar release (as `judges.sets.imports.read_llmbar` reads it, one per strategy) in
    the neutral form: subsets are its sets, both orders, its published `correct_average`,
    `correct_both` and `correct_False` as per-judgement, both-orders and single-order figures.
    With several strategies, each judge is `<model>/<strategy>`, all ranked on the same items."""
    first = reads[0]
    several = len(reads) > 1
    base = first.name.split("@")[0].rsplit("/", 1)[-1].lower()
    name = base if several else f"{base}-{first.strategy.lower()}"
    name = re.sub(r"[^a-z0-9._-]+", "-", name).strip("-._")[:64] or "llmbar"
    strategies = ", ".join(read.strategy for read in reads)
    # The licence as the release names it: its LICENSE file's first line, which is kept.
    named = next((line.strip() for line in first.license_text.splitlines() if line.strip()), "")
    licence = f"{named} (LICENSE)" if named else "unknown"
    manifest = (
        f"name = {json.dumps(name)}\n"
        f"description = {json.dumps(f'{first.name}, strategies {strategies}')}\n"
        f"source = {json.dumps(first.name)}\nlicence = {json.dumps(licence)}\n"
        'orders = 2\nrule = "per-judgement"\n\n[overall]\nweighting = "items"\n'
    )
    items = [
        {
            "id": item.id,
            "subset": item.category,
            "gold": _LABEL[str(item.expect[0].value)],
            "inputs": {
                "prompt": item.inputs["instruction"],
                "A": item.inputs["output_1"],
                "B": item.inputs["output_2"],
            },
        }
        for item in first.items
    ]
    judgements: list[dict[str, Any]] = []
    published: list[Mapping[str, Any]] = []
    for read in reads:
        if [item.id for item in read.items] != [item["id"] for item in items]:
            raise ImportError_(f"strategy {read.strategy} of {read.name} holds other items")

        def judge(model: str, strategy: str = read.strategy) -> str:
            return f"{model}/{strategy}" if several else model

        judgements += [
            {
                "judge": judge(r.model),
                "item": r.item_id,
                "order": 1 if r.order == "original" else 2,
                "verdict": _LABEL[r.winner],
                "reply": r.reply,
            }
            for r in read.replies
        ]
        published += [
            row
            for (category, model), stats in sorted(read.published.items())
            for row in llmbar_published(stats, judge(model), category)
        ]
    return {
        MANIFEST_FILE: manifest,
        ITEMS_FILE: _jsonl(items),
        JUDGEMENTS_FILE: _jsonl(judgements),
        PUBLISHED_FILE: _jsonl(published),
        **({"LICENSE": first.license_text} if first.license_text else {}),
    }


def _jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def import_llmbar_benchmark(
    reads: Sequence[Release], planted_sets: Path, *, replace: bool
) -> Imported:
    """The LLMBar release (one `Release` per strategy) converted, then imported as any
    benchmark is."""
    with tempfile.TemporaryDirectory() as temporary:
        src = Path(temporary)
        for file_name, text in llmbar_files(reads).items():
            (src / file_name).write_text(text, encoding="utf-8")
        return import_benchmark(src, planted_sets, replace=replace)
