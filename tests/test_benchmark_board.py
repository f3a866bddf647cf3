"""A benchmark's leaderboard and its commands, on the hand-computed benchmark
(tests/_toy_benchmark.py): the overall row weighted as the benchmark says, judges of the same
items ranked together whatever their rule, ties, unparsed and inconsistent pairs apart,
position and length bias on real picks, the score's correlation with length; `python -m
judges import benchmark` (idempotent, refusing a different benchmark under the same name)
and `import llmbar --benchmark`; `python -m judges leaderboard pairwise --benchmark`."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction as F
from pathlib import Path

import pytest

from judges.cli.benchmarks import benchmark_folders, import_benchmark, llmbar_files
from judges.cli.importer import import_llmbar
from judges.cli.main import main
from judges.core.spec import load_catalog
from judges.sets.benchmark import BenchmarkError, load_benchmark
from judges.sets.imports import read_llmbar
from judges.sets.planted import PlantedSetError, load_planted_set
from judges.stats.fitness.benchmark_board import Board, boards
from tests._llmbar_release import write_llmbar_set
from tests._toy_benchmark import MANIFEST, write_toy


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    return write_toy(tmp_path / "src" / "toybench")


def _board(folder: Path, subset: str | None) -> Board:
    return next(b for b in boards(load_benchmark(folder)) if b.subset == subset)


def test_the_overall_board_ranks_every_judge_of_the_same_items_by_its_own_rule(toy: Path) -> None:
    board = _board(toy, None)
    assert [(e.judge, e.rule, e.score.value) for e in board.entries] == [
        ("rm-z", "single-order", F(7, 10)),
        ("llm-x", "vote", F(3, 5)),
        ("llm-y", "vote", F(2, 5)),
    ]
    assert board.items == 5 and len(board.neighbours) == 2


def test_ties_unparsed_and_inconsistent_pairs_are_counted_apart(toy: Path) -> None:
    entries = {e.judge: e for e in _board(toy, None).entries}
    counted = {j: (e.judgements, e.ties, e.unparsed, e.inconsistent) for j, e in entries.items()}
    assert counted == {
        "llm-x": (10, 2, 1, 3),  # ties m2/2, m3/1; none c2/1; differing m2, m3, c1
        "llm-y": (10, 3, 2, 2),  # ties m3 x2, c1/1; none m2 x2; differing c1, c2
        "rm-z": (5, 2, 0, None),  # equal scores on m2 and m3; one order
    }


def test_position_bias_counts_real_picks_only(toy: Path) -> None:
    entries = {e.judge: e for e in _board(toy, None).entries}
    x, y = entries["llm-x"].position, entries["llm-y"].position
    assert x is not None and y is not None and entries["rm-z"].position is None
    # llm-x picks: order 1 A(m1) B(m2) A(c1); order 2 A(m1) A(m3) B(c1) B(c2): first 4 of 7
    assert (x.first.successes, x.first.n, x.test.b, x.test.c) == (4, 7, 1, 0)
    assert (y.first.successes, y.first.n, y.test.b, y.test.c) == (3, 5, 1, 0)


def test_length_bias_on_picks_and_the_scores_correlation_with_length(toy: Path) -> None:
    entries = {e.judge: e for e in _board(toy, None).entries}
    x = entries["llm-x"].length  # longer: A on m1, B on c1 and c2; gold longer on m1, c2
    assert (x.longer.successes, x.longer.n, x.gold.successes, x.gold.n) == (4, 5, 2, 3)
    assert x.rho is None  # no scores
    z = entries["rm-z"].length
    assert z.rho == pytest.approx(1.0) and z.scored == 10  # lengths rise with the scores
    assert (z.longer.successes, z.longer.n) == (3, 3)


def test_chance_is_tested_on_pairs_with_a_winner_and_real_picks(toy: Path) -> None:
    entries = {e.judge: e for e in _board(toy, None).entries}
    assert {j: (e.chance.k, e.chance.n) for j, e in entries.items()} == {
        "llm-x": (3, 3), "llm-y": (1, 2), "rm-z": (2, 3)
    }  # fmt: skip


def test_a_subset_weighted_overall_row_has_no_interval(toy: Path) -> None:
    (toy / "benchmark.toml").write_text(
        MANIFEST.replace('weighting = "items"', 'weighting = "subsets"'), encoding="utf-8"
    )
    (toy / "published.jsonl").unlink()  # its overall figures are weighted by items
    entries = {e.judge: e for e in _board(toy, None).entries}
    assert entries["llm-x"].score.value == F(7, 12)
    assert entries["llm-x"].low != entries["llm-x"].low  # NaN


def test_a_judge_of_part_of_a_subset_is_ranked_in_a_group_of_its_own(toy: Path) -> None:
    path = toy / "judgements.jsonl"
    extra = [{"judge": "partial", "item": "m1", "order": o, "verdict": "A"} for o in (1, 2)]
    path.write_text(
        path.read_text(encoding="utf-8") + "".join(json.dumps(r) + "\n" for r in extra),
        encoding="utf-8",
    )
    math_boards = [b for b in boards(load_benchmark(toy)) if b.subset == "math"]
    assert [[e.judge for e in b.entries] for b in math_boards] == [
        ["rm-z", "llm-x", "llm-y"], ["partial"]
    ]  # fmt: skip


# --------------------------------------------------------------------------- the commands


def test_import_then_leaderboard_as_a_new_user_runs_them(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert main(["import", "benchmark", str(toy)]) == 0
    out = capsys.readouterr().out
    assert "toybench: 5 items in 2 subsets (math, code), 3 judges" in out
    assert "licence: unknown" in out and "published figures: 36 of 36 reproduced exactly" in out
    folder = project / "planted_sets" / "pairwise" / "benchmarks" / "toybench"
    assert 'kind = "benchmark"' in (folder / "set.toml").read_text(encoding="utf-8")
    assert main(["import", "benchmark", str(toy)]) == 0
    assert "0 files changed" in capsys.readouterr().out  # a second import changes no byte
    assert main(["leaderboard", "pairwise", "--benchmark", "toybench"]) == 0
    board = capsys.readouterr().out
    assert "benchmark toybench: source written by hand" in board and "licence: unknown" in board
    assert "toybench, overall (5 items, 3 judges)" in board
    assert "1  rm-z   single-order  70.00%" in board
    assert "2  llm-x  vote          60.00% [23.1, 88.2] (3/5)" in board
    assert main(["leaderboard", "pairwise"]) == 0  # no recorded version: the benchmarks
    assert "toybench, math (3 items, 3 judges)" in capsys.readouterr().out
    assert main(["leaderboard", "pairwise", "--benchmark", "nope"]) == 2
    assert "no benchmark 'nope'" in capsys.readouterr().err


def test_another_benchmark_under_the_same_name_is_refused_unless_replaced(
    toy: Path, tmp_path: Path
) -> None:
    planted = tmp_path / "planted_sets"
    import_benchmark(toy, planted)
    (toy / "published.jsonl").unlink()
    with pytest.raises(BenchmarkError, match=r"already holds a benchmark named 'toybench'.*-v2"):
        import_benchmark(toy, planted)
    done = import_benchmark(toy, planted, replace=True)
    assert not (done.folder / "published.jsonl").exists()
    renamed = write_toy(tmp_path / "v2", MANIFEST.replace('"toybench"', '"toybench-v2"'))
    import_benchmark(renamed, planted)
    assert [f.name for f in benchmark_folders(planted)] == ["toybench", "toybench-v2"]


def test_a_bad_benchmark_writes_nothing_and_exits_2(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (toy / "items.jsonl").write_text('{"id": "m1"}\n', encoding="utf-8")
    assert main(["import", "benchmark", str(toy), "--root", str(tmp_path)]) == 2
    assert "items.jsonl:1: subset: Field required" in capsys.readouterr().err
    assert not (tmp_path / "planted_sets").exists()


def test_the_suite_never_writes_the_source(toy: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in toy.iterdir()}
    import_benchmark(toy, tmp_path / "planted_sets")
    assert {p.name: p.read_bytes() for p in toy.iterdir()} == before


def test_llmbar_converted_to_the_neutral_form_reproduces_its_published_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "release"
    src.mkdir()
    (src / "LICENSE").write_text("MIT License\n\nCopyright ...\n", encoding="utf-8")
    winners = {
        "GPT-4": [("1", "1"), ("2", None), ("1", "2")],
        "Falcon": [("1", "1"), ("1", "1"), (None, None)],
    }
    write_llmbar_set(src, "Natural", winners)
    files = llmbar_files([read_llmbar(src, "Vanilla", "princeton-nlp/LLMBar@abc")])
    assert 'licence = "MIT License (LICENSE)"' in files["benchmark.toml"]
    command = ["import", "llmbar", str(src), "--benchmark", "--root", str(tmp_path)]
    assert main([*command, "--release", "princeton-nlp/LLMBar@abc"]) == 0
    out = capsys.readouterr().out
    assert "published figures: 6 of 6 reproduced exactly" in out
    benchmark = load_benchmark(tmp_path / "planted_sets/pairwise/benchmarks/llmbar-vanilla")
    assert {j.verdict for j in benchmark.judgements} == {"A", "B", "none"}


def test_every_llmbar_strategy_in_one_benchmark_ranked_on_the_same_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "release"
    src.mkdir()
    (src / "LICENSE").write_text("MIT License\n", encoding="utf-8")
    write_llmbar_set(src, "Natural", {"GPT-4": [("1", "1"), ("2", "2"), ("1", "1")]})
    other = src / "Natural" / "evaluators" / "GPT-4" / "Other"
    shutil.copytree(other.parent / "Vanilla", other)
    command = ["import", "llmbar", str(src), "--benchmark", "--strategy", "all"]
    assert main([*command, "--root", str(tmp_path), "--release", "x/LLMBar@1"]) == 0
    assert "published figures: 6 of 6 reproduced exactly" in capsys.readouterr().out
    benchmark = load_benchmark(tmp_path / "planted_sets/pairwise/benchmarks/llmbar")
    assert benchmark.judges == ("GPT-4/Other", "GPT-4/Vanilla")
    overall = next(b for b in boards(benchmark) if b.subset is None)
    assert [e.judge for e in overall.entries] == ["GPT-4/Other", "GPT-4/Vanilla"]


def test_a_judges_planted_set_is_never_of_kind_benchmark(tmp_path: Path) -> None:
    src = tmp_path / "release"
    src.mkdir()
    (src / "LICENSE").write_text("MIT License\n", encoding="utf-8")
    write_llmbar_set(src, "Natural", {"Good": [("1", "1"), ("2", "2"), ("1", "1")]})
    import_llmbar(src, tmp_path / "project")
    planted = tmp_path / "project" / "planted_sets"
    (planted / "pairwise" / "set.toml").write_text('kind = "benchmark"\n', encoding="utf-8")
    with pytest.raises(PlantedSetError, match=r'kind = "benchmark" is for a benchmark folder'):
        load_planted_set(planted, load_catalog()["pairwise"])


def test_an_llmbar_release_without_a_licence_converts_with_licence_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "release"
    src.mkdir()
    write_llmbar_set(src, "Natural", {"Good": [("1", "1"), ("2", "2"), ("1", "1")]})
    command = ["import", "llmbar", str(src), "--root", str(tmp_path), "--release", "x/LLMBar@1"]
    assert main(command) == 2
    assert "no LICENSE file" in capsys.readouterr().err  # the planted path needs one
    assert main([*command, "--benchmark"]) == 0
    assert "licence: unknown" in capsys.readouterr().out
    folder = tmp_path / "planted_sets/pairwise/benchmarks/llmbar-vanilla"
    assert load_benchmark(folder).manifest.licence == "unknown"
    assert not (folder / "LICENSE").exists()  # none invented
