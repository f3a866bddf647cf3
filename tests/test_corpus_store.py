"""The columnar store and the DuckDB aggregation give the report the row path gives, refuse
what the row path refuses (in its words: file, line, fix), and keep their cache out of the
corpus folder, converted again only when judgements.jsonl changes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judges.cli.main import main
from judges.corpus import engine
from judges.corpus.engine import score_matrices
from judges.corpus.manifest import CorpusError, load_manifest
from judges.corpus.markdown import corpus_markdown
from judges.corpus.report import build_report
from judges.corpus.rows import load_corpus
from judges.corpus.store import connect, convert, cross_checked, load_summarised, store_path
from judges.corpus.table import score_matrices as row_matrices

MANIFEST = """name = "mixed"
source = "written for this test"
licence = "unknown"
seed = 3

[scale]
low = 1
high = 7
verdict = "level"
step = 1
flag_below = 3

[judges.old]
reference = "ref"

[judges.new]
[judges.third]
"""


def _jsonl(path: Path, rows: list[dict[str, Any] | str]) -> None:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )


def _mixed(folder: Path, seed: int = 0) -> Path:
    """Every kind of row: scores (int and float, many digits), error rows, the judge's own
    flags, a second run, a reference system, labels, systems first seen in shuffled order,
    names in any Unicode (U+2028 too), a blank line."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.toml").write_text(MANIFEST, encoding="utf-8")
    items = [f"item \u2028{i} é" for i in range(40)]
    _jsonl(folder / "items.jsonl", [{"id": item} for item in items])
    systems = ["ref", "zeta", "alpha", "sys \u2028 ☃", "..", "m" * 200]
    rows: list[dict[str, Any] | str] = []
    for judge, run in (("old", 0), ("new", 0), ("new", 1), ("third", 0)):
        for system in systems:
            for item in items:
                if rng.random() < 0.1:
                    continue  # not judged on this item
                row: dict[str, Any] = {"system": system, "item": item, "judge": judge}
                if run:
                    row["run"] = run
                if rng.random() < 0.05:
                    row["error"] = "transport: timed out"
                elif rng.random() < 0.5:
                    row["score"] = int(rng.integers(1, 8))
                else:
                    row["score"] = float(rng.uniform(1, 7))
                if judge == "new" and rng.random() < 0.7 and "score" in row:
                    row["flagged"] = bool(rng.random() < 0.3)
                rows.append(row)
    order = rng.permutation(len(rows))
    shuffled: list[dict[str, Any] | str] = [rows[k] for k in order]
    shuffled.insert(5, "")
    _jsonl(folder / "judgements.jsonl", shuffled)
    labels = [
        {"system": s, "item": item, "score": int(rng.integers(1, 8))}
        for s in systems[1:4]
        for item in items[:8]
    ]
    _jsonl(folder / "labels.jsonl", labels)
    return folder


@pytest.mark.parametrize("seed", [0, 1])
def test_the_store_gives_the_row_paths_matrices_and_report_byte_for_byte(
    tmp_path: Path, seed: int
) -> None:
    folder = _mixed(tmp_path / "c", seed)
    rows = load_corpus(folder)
    summarised = load_summarised(folder)
    assert summarised.summarised is not None and summarised.judgements == ()
    expected = row_matrices(rows)
    found = summarised.summarised.matrices
    assert list(found) == list(expected)  # manifest order, then run
    for key, matrix in expected.items():
        got = found[key]
        assert got.systems == matrix.systems  # first-seen order
        assert got.items == matrix.items
        assert got.errors == matrix.errors
        np.testing.assert_array_equal(got.scores, matrix.scores)  # every float exact
        np.testing.assert_array_equal(got.flags, matrix.flags)
    assert summarised.systems == rows.systems
    assert summarised.judgement_count == len(rows.judgements)
    assert summarised.error_count == sum(j.score is None for j in rows.judgements)
    assert corpus_markdown(build_report(summarised)) == corpus_markdown(build_report(rows))


def test_under_a_memory_limit_the_figures_are_the_same(tmp_path: Path) -> None:
    folder = _mixed(tmp_path / "c")
    free = corpus_markdown(build_report(load_summarised(folder)))
    limited = corpus_markdown(build_report(load_summarised(folder, memory_limit="64MB")))
    assert limited == free


# The row checks' refusals (tests/test_corpus_rows.py), each on line 4 after a blank line.
BAD_ROWS: list[tuple[dict[str, Any] | str, str]] = [
    ({"score": "0.5"}, "score"),
    ('{"system": "a", "item": "i3", "judge": "old", "score": NaN}', "not a finite number"),
    ('{"system": "a", "item": "i3", "judge": "old", "score": Infinity}', "not a finite"),
    ('{"system": "a", "item": "i3", "judge": "old", "score": 1e400}', "not a finite"),
    ({"score": True}, "score"),
    ({"score": 1.7}, "off the scale [0, 1]"),
    ({"score": -0.1}, "off the scale [0, 1]"),
    ({"score": 0.5, "error": "timed out"}, "exactly one"),
    ({}, "exactly one"),
    ({"score": None, "error": None}, "exactly one"),
    ({"judge": "nosuch", "score": 0.5}, "'nosuch' is not in corpus.toml"),
    ({"item": "i9", "score": 0.5}, "'i9' is not in items.jsonl"),
    ({"run": -1, "score": 0.5}, "run"),
    ({"run": 1.0, "score": 0.5}, "run"),
    ({"run": None, "score": 0.5}, "run"),
    ({"run": "1", "score": 0.5}, "run"),
    ({"score": 0.5, "flagged": "yes"}, "flagged"),
    ({"score": 0.5, "flagged": 1}, "flagged"),
    ({"score": 0.5, "error": None, "raw": 3}, "raw"),
    ({"score": 0.5, "note": "x"}, "note"),
    ({"system": "", "score": 0.5}, "system"),
    ({"system": "s" * 201, "score": 0.5}, "system"),
    ({"system": 7, "score": 0.5}, "system"),
    ({"item": None, "score": 0.5}, "item"),
    ({"system": "a", "item": "i1", "judge": "old", "score": 0.0}, "already judged at line 1"),
    ({"system": "a", "item": "i1", "judge": "old", "error": "x"}, "already judged at line 1"),
    ('{"system": "a", "item": "i3", "judge": "old", "score": 0.5', "not JSON"),
    ('{"system": "a", "item": "i3", "judge": "old", "score": 0.5, "score": 1}', "twice"),
    ('["a", "i3", "old", 0.5]', "(row)"),
    ("null", "(row)"),
]


def _small(folder: Path, bad: dict[str, Any] | str) -> Path:
    folder.mkdir(parents=True)
    (folder / "corpus.toml").write_text(
        'name = "tiny"\nsource = "s"\nlicence = "unknown"\n\n[scale]\nlow = 0\nhigh = 1\n'
        'verdict = "side"\nmidpoint = 0.5\n\n[judges.old]\n[judges.new]\n',
        encoding="utf-8",
    )
    _jsonl(folder / "items.jsonl", [{"id": item} for item in ("i1", "i2", "i3")])
    row = bad if isinstance(bad, str) else {"system": "a", "item": "i3", "judge": "old", **bad}
    good: list[dict[str, Any] | str] = [
        {"system": "a", "item": "i1", "judge": "old", "score": 1.0},
        {"system": "a", "item": "i2", "judge": "old", "score": 0},
    ]
    _jsonl(folder / "judgements.jsonl", [*good, "", row])
    return folder


@pytest.mark.parametrize(("bad", "says"), BAD_ROWS)
def test_the_column_checks_decline_every_row_the_row_checks_refuse_and_the_message_is_theirs(
    tmp_path: Path, bad: dict[str, Any] | str, says: str
) -> None:
    folder = _small(tmp_path / "c", bad)
    jsonl = folder / "judgements.jsonl"
    # The columns alone decline the file: never a report from a row the docs refuse.
    con = connect()
    store = convert(con, jsonl)
    if store is not None:
        items = tuple(item.id for item in load_corpus(folder, judgements=False).items)
        manifest = load_manifest(folder)
        checked = cross_checked(con, store, manifest, list(items))
        assert checked is None or score_matrices(con, store, list(manifest.judges), items) is None
    con.close()
    with pytest.raises(CorpusError) as by_rows:
        load_corpus(folder)
    with pytest.raises(CorpusError) as through_store:
        load_summarised(folder)
    assert str(through_store.value) == str(by_rows.value)
    assert str(by_rows.value).startswith(f"{jsonl}:4: ") and says in str(by_rows.value)


def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path: Path) -> None:
    folder = _small(tmp_path / "c", {"score": 0.5})
    jsonl = folder / "judgements.jsonl"
    jsonl.write_bytes(jsonl.read_bytes().replace(b'"i3"', b'"i\xff3"'))
    with pytest.raises(CorpusError, match=r"judgements\.jsonl:4: not UTF-8"):
        load_summarised(folder)


def test_no_judgements_is_the_row_paths_refusal(tmp_path: Path) -> None:
    folder = _small(tmp_path / "c", {"score": 0.5})
    (folder / "judgements.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="no judgements; nothing to summarise"):
        load_summarised(folder)


def test_the_store_is_cached_outside_the_corpus_and_converted_again_when_the_jsonl_changes(
    tmp_path: Path,
) -> None:
    folder = _small(tmp_path / "c", {"score": 0.5})
    before = sorted(p.name for p in folder.iterdir())
    jsonl = folder / "judgements.jsonl"
    first = load_summarised(folder)
    store = store_path(jsonl)
    assert store.is_file() and folder not in store.parents
    assert sorted(p.name for p in folder.iterdir()) == before  # the corpus folder untouched
    converted = store.stat().st_mtime_ns
    again = load_summarised(folder)
    assert store.stat().st_mtime_ns == converted  # read from the cache, not converted again
    assert again.judgement_count == first.judgement_count == 3
    # A changed file is a new store: the new row is in the report.
    with jsonl.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"system": "b", "item": "i1", "judge": "new", "score": 1}) + "\n")
    os.utime(jsonl, ns=(converted + 10**9, converted + 10**9))
    changed = load_summarised(folder)
    assert store_path(jsonl) != store and changed.judgement_count == 4
    assert not store.exists() and store_path(jsonl).is_file()  # the older store removed
    assert "b" in changed.systems
    # No temporary of the conversion is left behind.
    assert not list(store.parent.glob(".*.tmp"))


def test_the_command_takes_a_memory_limit(tmp_path: Path) -> None:
    _mixed(tmp_path / "corpora" / "mixed")
    paths = ["--corpora", str(tmp_path / "corpora"), "--reports", str(tmp_path / "reports")]
    assert main(["corpus", "report", "mixed", *paths, "--memory-limit", "200MB"]) == 0
    written = (tmp_path / "reports" / "mixed" / "corpus_report.md").read_text(encoding="utf-8")
    assert written == corpus_markdown(build_report(load_corpus(tmp_path / "corpora" / "mixed")))


def _normalised(sql: str) -> str:
    return " ".join(sql.split())


def test_the_docs_show_the_engines_own_sql() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "corpus.md").read_text("utf-8")
    block = text.split("```sql\n", 1)[1].split("```", 1)[0]
    shown: dict[str, str] = {}
    name = ""
    for line in block.splitlines():
        if line.startswith("-- "):
            name = line[3:].split(":")[0]
        else:
            shown[name] = shown.get(name, "") + line + "\n"
    assert _normalised(shown["SYSTEMS"]) == _normalised(engine.SYSTEMS)
    cells = shown["CELLS"].replace("AS (SYSTEMS)", f"AS ({engine.SYSTEMS})")
    assert _normalised(cells) == _normalised(engine.CELLS)


def test_the_sql_gives_the_same_cells_over_a_partitioned_dataset(tmp_path: Path) -> None:
    """The statements need no single file: over a Parquet dataset partitioned by judge (as a
    team's log on object storage would be) they give the same cells."""
    folder = _mixed(tmp_path / "c")
    corpus = load_corpus(folder, judgements=False)
    items = tuple(item.id for item in corpus.items)
    con = connect()
    store = convert(con, folder / "judgements.jsonl")
    assert store is not None
    ordered = f'SELECT * FROM ({engine.CELLS}) ORDER BY matrix, "row", "column"'
    engine.score_matrices(con, store, list(corpus.manifest.judges), items)  # the views
    one_file = con.execute(ordered).fetchall()
    dataset = tmp_path / "dataset"
    con.execute(
        f"COPY (SELECT * FROM judgements) TO '{dataset}' (FORMAT parquet, PARTITION_BY (judge))"
    ).fetchall()
    assert len(list(dataset.glob("judge=*/*.parquet"))) == 3
    con.execute(
        "CREATE OR REPLACE TEMP VIEW judgements AS SELECT * FROM "
        f"read_parquet('{dataset}/*/*.parquet', hive_partitioning = true)"
    ).fetchall()
    assert con.execute(ordered).fetchall() == one_file
    con.close()


def test_the_stores_row_order_is_the_files_line_order_on_a_file_read_in_parallel(
    tmp_path: Path,
) -> None:
    """A system's row is its first line: the store keeps the file's order even when DuckDB
    reads the file in several parallel chunks (tens of MB here)."""
    folder = _small(tmp_path / "c", {"score": 0.5})
    rng = np.random.default_rng(4)
    systems = [f"s{k:04d}" for k in rng.permutation(3000)]
    items = [f"i{k}" for k in range(100)]
    _jsonl(folder / "items.jsonl", [{"id": item} for item in items])
    lines = [
        f'{{"system": "{system}", "item": "{item}", "judge": "old", "score": 0.5, '
        f'"raw": "{"x" * 40}"}}'
        for item in items
        for system in systems
    ]
    (folder / "judgements.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert (folder / "judgements.jsonl").stat().st_size > 30_000_000
    corpus = load_summarised(folder, memory_limit="200MB")
    assert corpus.summarised is not None
    assert corpus.systems == tuple(systems)
    assert corpus.summarised.matrices["old", 0].systems == tuple(systems)


def test_a_bad_memory_limit_and_an_unwritable_cache_are_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _mixed(tmp_path / "corpora" / "mixed")
    paths = ["--corpora", str(tmp_path / "corpora"), "--reports", str(tmp_path / "reports")]
    assert main(["corpus", "report", "mixed", *paths, "--memory-limit", "lots"]) == 2
    assert "--memory-limit 'lots': not a memory size" in capsys.readouterr().err
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("JUDGES_CACHE_DIR", str(blocked / "cache"))
    assert main(["corpus", "report", "mixed", *paths]) == 2
    err = capsys.readouterr().err
    assert "cannot write the corpus store's cache" in err and "JUDGES_CACHE_DIR" in err
    assert not (tmp_path / "reports" / "mixed").exists()


def test_an_interrupted_conversion_leaves_nothing_and_the_next_run_converts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _small(tmp_path / "c", {"score": 0.5})
    jsonl = folder / "judgements.jsonl"

    def interrupted(source: object, target: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("judges.corpus.store.os.replace", interrupted)
    con = connect()
    with pytest.raises(KeyboardInterrupt):
        convert(con, jsonl)
    store = store_path(jsonl)
    assert not store.exists() and not list(store.parent.iterdir())
    monkeypatch.undo()
    assert convert(con, jsonl) == store and store.is_file()
    con.close()


def test_the_documented_memory_limit_command_reproduces_the_committed_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/corpus.md's `corpus report alpaca_eval --memory-limit 1GB`, with --check: the
    committed report, byte for byte, nothing written."""
    root = Path(__file__).resolve().parents[1]
    docs = (root / "docs" / "corpus.md").read_text(encoding="utf-8")
    assert "python -m judges corpus report alpaca_eval --memory-limit 1GB\n" in docs
    paths = ["--corpora", str(root / "planted_sets" / "corpora"),
             "--reports", str(root / "reports" / "corpora")]  # fmt: skip
    code = main(["corpus", "report", "alpaca_eval", "--memory-limit", "1GB", "--check", *paths])
    assert code == 0, capsys.readouterr().err[-2000:]
