"""Every labelled benchmark under planted_sets/<judge>/benchmarks/: its files read whole, its
set.toml says it is a benchmark, and each judge's published figures (published.jsonl) come
out of its judgements exactly, rounded as published. A wrong item is a statistic, never a
test: the leaderboard shows it (`python -m judges leaderboard pairwise --benchmark NAME`)."""

import tomllib
from pathlib import Path

import pytest

from judges.reports.sections.benchmark import published_lines
from judges.sets.benchmark import load_benchmark
from judges.stats.fitness.benchmark import benchmark_published
from judges.stats.fitness.benchmark_board import boards

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = sorted(p.parent for p in (ROOT / "planted_sets").glob("*/benchmarks/*/benchmark.toml"))
JUDGES = [
    (folder, judge)
    for folder in FOLDERS
    for judge in sorted({row.judge for row in load_benchmark(folder).published})
]


def _name(folder: Path) -> str:
    return f"{folder.parents[1].name}-{folder.name}"


@pytest.mark.parametrize("folder", FOLDERS, ids=_name)
def test_a_benchmark_is_a_set_of_its_own_kind(folder: Path) -> None:
    table = tomllib.loads((folder / "set.toml").read_text(encoding="utf-8"))
    assert table.get("kind") == "benchmark", f'{folder / "set.toml"}: kind = "benchmark"'
    benchmark = load_benchmark(folder)
    assert benchmark.manifest.licence, 'a licence, or licence = "unknown"'
    ranked = boards(benchmark)
    assert {board.subset for board in ranked} == {*benchmark.subsets, None}


@pytest.mark.parametrize(
    ("folder", "judge"), JUDGES, ids=lambda v: v if isinstance(v, str) else _name(v)
)
def test_a_benchmark_reproduces_its_published_figures(folder: Path, judge: str) -> None:
    matches = [m for m in benchmark_published(load_benchmark(folder)) if m.published.judge == judge]
    differing = [m for m in matches if not m.equal]
    assert not differing, f"{folder.name}: published figures of {judge} not reproduced:\n" + (
        "\n".join(published_lines(differing))
    )
