"""The aggregation of a judgement store into the statistics stage's input, in DuckDB.

The statistics (estimates.py, change.py, ppi.py) need, per judge and run, a systems x items
matrix of scores (NaN: not judged, or an error row), the same of the judge's own flags, and
each system's error rows. `SYSTEMS` and `CELLS` are that aggregation as plain SQL over the
Parquet store: nothing in them is DuckDB's own, so the same statements run on a partitioned
dataset in Spark SQL or DuckDB over object storage, with `judgements` a view of the dataset,
`corpus_items` the item ids with their column and `corpus_judges` the judges with their
position in corpus.toml. Their result is small beside the log (a few integers and two floats
per judgement); the scatter into matrices below is the only Python step.

A system's row is its first appearance in the JSONL for that judge and run (the row path's
order), so the report is the same byte for byte whichever path built it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from judges.corpus.table import ScoreMatrix

if TYPE_CHECKING:
    import duckdb

# Per (judge, run) -- one matrix each, in corpus.toml order then run -- each system's row in
# first-seen order, and its error rows.
SYSTEMS = """
SELECT j.judge, j.run, j.system,
       dense_rank() OVER (ORDER BY min(k.position), j.run) - 1 AS matrix,
       row_number() OVER (PARTITION BY j.judge, j.run ORDER BY min(j.ord)) - 1 AS "row",
       count(*) FILTER (WHERE j.score IS NULL) AS errors
FROM judgements AS j
JOIN corpus_judges AS k ON k.judge = j.judge
GROUP BY j.judge, j.run, j.system
"""

# Every judgement's cell: its matrix, the system's row, the item's column (NULL: an item
# items.jsonl does not list), the score (NULL: an error row) and the judge's own flag on a
# scored judgement (NULL: none given).
CELLS = f"""
WITH systems AS ({SYSTEMS})
SELECT s.matrix, s."row", i."column", j.score,
       CASE WHEN j.score IS NULL THEN NULL
            WHEN j.flagged THEN 1.0 WHEN NOT j.flagged THEN 0.0 END AS flag
FROM judgements AS j
JOIN systems AS s ON s.judge = j.judge AND s.run = j.run AND s.system = j.system
LEFT JOIN corpus_items AS i ON i.id = j.item
"""

# Past this many cells a duplicate is found by sorting rather than by an occupancy count.
OCCUPANCY_CELLS = 50_000_000


def _views(
    con: duckdb.DuckDBPyConnection, store: Path, judges: list[str], items: tuple[str, ...]
) -> None:
    view = str(store).replace("'", "''")
    # `ord`, the line order, is the row's position in the store (written in the file's order).
    con.execute(
        "CREATE OR REPLACE TEMP VIEW judgements AS SELECT * EXCLUDE (file_row_number), "
        f"file_row_number AS ord FROM read_parquet('{view}', file_row_number = true)"
    ).fetchall()
    # Lists in as SQL parameters: no Arrow or pandas import (0.3-0.4 s of a report's start).
    for table, key, place, names in (
        ("corpus_items", "id", "column", list(items)),
        ("corpus_judges", "judge", "position", judges),
    ):
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT unnest($names::VARCHAR[]) AS {key}, "
            f'unnest(range(len($names::VARCHAR[])))::INTEGER AS "{place}"',
            {"names": names},
        ).fetchall()


def _given_twice(matrix: np.ndarray, rows: np.ndarray, columns: np.ndarray, shape: tuple) -> bool:
    """Whether two judgements fall on one cell: one (system, item, judge, run) given twice."""
    cells = (matrix.astype(np.int64) * shape[0] + rows) * shape[1] + columns
    size = int(np.prod(shape[:2])) * int(matrix.max(initial=0) + 1)
    if size <= OCCUPANCY_CELLS:
        return bool(np.bincount(cells, minlength=size).max(initial=0) > 1)
    return bool(np.unique(cells).size < cells.size)


def score_matrices(
    con: duckdb.DuckDBPyConnection, store: Path, judges: list[str], items: tuple[str, ...]
) -> dict[tuple[str, int], ScoreMatrix] | None:
    """(judge, run) -> its matrix, in corpus.toml order then run: what table.score_matrices
    builds from rows, built from the store. None when a judgement names an item or judge
    the corpus does not list, or falls on a cell another already holds (the row checks
    then name its line)."""
    _views(con, store, judges, items)
    keys: dict[int, tuple[str, int]] = {}
    systems: dict[int, dict[str, int]] = {}
    for judge, run, system, matrix, _row, errors in con.execute(
        f'{SYSTEMS} ORDER BY matrix, "row"'
    ).fetchall():
        keys[matrix] = (judge, run)
        systems.setdefault(matrix, {})[system] = errors
    cells = con.execute(
        'SELECT matrix::INTEGER AS matrix, "row"::INTEGER AS "row", '
        'coalesce("column", -1)::INTEGER AS "column", '
        "coalesce(score, 'NaN'::DOUBLE) AS score, coalesce(flag, 'NaN'::DOUBLE) AS flag "
        f"FROM ({CELLS})"
    ).fetchnumpy()
    matrix, rows, columns = cells["matrix"], cells["row"], cells["column"]
    if columns.size and columns.min() < 0:
        return None  # an unknown item
    widest = max((len(s) for s in systems.values()), default=0)
    if _given_twice(matrix, rows, columns, (widest, len(items))):
        return None
    # Every matrix in one array, filled in one step (an error row leaves its cell NaN).
    grid = np.full((len(keys), widest, len(items)), np.nan)
    flag_grid = np.full_like(grid, np.nan)
    grid[matrix, rows, columns] = cells["score"]
    flag_grid[matrix, rows, columns] = cells["flag"]
    found: dict[tuple[str, int], ScoreMatrix] = {}
    for code, key in keys.items():
        names = tuple(systems[code])
        found[key] = ScoreMatrix(
            key[0], key[1], names, items, grid[code, : len(names)],
            systems[code], flag_grid[code, : len(names)],
        )  # fmt: skip
    return found


def first_seen_systems(con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """Every system judged, in the order of its first judgement (after score_matrices)."""
    found = con.execute("SELECT system FROM judgements GROUP BY system ORDER BY min(ord)")
    return tuple(system for (system,) in found.fetchall())
