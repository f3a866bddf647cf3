"""The aggregation of a judgement store into the statistics stage's input, in DuckDB.

The statistics (estimates.py, change.py, ppi.py) need, per judge and run, a systems x items
matrix of scores (NaN: not judged, or an error row), the same of the judge's own flags, and
each system's error rows. `CELLS` is that aggregation as one plain SQL statement over the
Parquet store: nothing in it is DuckDB's own, so the same statement runs on a partitioned
dataset in Spark SQL or DuckDB over object storage (`judgements` a view of the dataset,
`corpus_items` the item ids with their column). Its result is small (one row per judged
cell, integers and two floats); the scatter into matrices below is the only Python step.

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

# Per (judge, run): each system's row in first-seen order and its error rows.
SYSTEMS = """
SELECT judge, run, system,
       row_number() OVER (PARTITION BY judge, run ORDER BY min(ord)) - 1 AS "row",
       count(*) FILTER (WHERE score IS NULL) AS errors
FROM judgements
GROUP BY judge, run, system
"""

# Every scored cell: (judge, run, the system's row, the item's column, score, flag).
CELLS = f"""
WITH systems AS ({SYSTEMS})
SELECT j.judge, j.run, s."row", i."column", j.score,
       CASE WHEN j.flagged THEN 1.0 WHEN NOT j.flagged THEN 0.0 END AS flag
FROM judgements AS j
JOIN systems AS s ON s.judge = j.judge AND s.run = j.run AND s.system = j.system
JOIN corpus_items AS i ON i.id = j.item
WHERE j.score IS NOT NULL
"""


def score_matrices(
    con: duckdb.DuckDBPyConnection, store: Path, judges: list[str], items: tuple[str, ...]
) -> dict[tuple[str, int], ScoreMatrix]:
    """(judge, run) -> its matrix, in manifest order then run: what table.score_matrices
    builds from rows, built from the store."""
    import pyarrow as pa

    view = str(store).replace("'", "''")
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW judgements AS SELECT * FROM read_parquet('{view}')"
    ).fetchall()
    con.register("corpus_items", pa.table({"id": list(items), "column": np.arange(len(items))}))
    systems: dict[tuple[str, int], dict[str, tuple[int, int]]] = {}
    for judge, run, system, row, errors in con.execute(
        f'{SYSTEMS} ORDER BY judge, run, "row"'
    ).fetchall():
        systems.setdefault((judge, run), {})[system] = (row, errors)
    order = {judge: k for k, judge in enumerate(judges)}
    keys = sorted(systems, key=lambda key: (order[key[0]], key[1]))
    # Which matrix each cell belongs to, as one integer column (judge and run are few).
    con.register("matrix_keys", pa.table({
        "judge": [k[0] for k in keys], "run": [k[1] for k in keys], "code": list(range(len(keys)))
    }))  # fmt: skip
    cells = con.execute(
        f'SELECT k.code, c."row", c."column", c.score, coalesce(c.flag, \'NaN\'::DOUBLE) AS flag '
        f"FROM ({CELLS}) AS c JOIN matrix_keys AS k ON k.judge = c.judge AND k.run = c.run"
    ).fetchnumpy()
    code, rows, columns = cells["code"], cells["row"], cells["column"]
    scores, flags = cells["score"], cells["flag"]
    matrices: dict[tuple[str, int], ScoreMatrix] = {}
    for k, key in enumerate(keys):
        names = tuple(systems[key])
        grid = np.full((len(names), len(items)), np.nan)
        flag_grid = np.full_like(grid, np.nan)
        mine = code == k
        grid[rows[mine], columns[mine]] = scores[mine]
        flag_grid[rows[mine], columns[mine]] = flags[mine]
        errors = {name: systems[key][name][1] for name in names}
        matrices[key] = ScoreMatrix(key[0], key[1], names, items, grid, errors, flag_grid)
    return matrices


def first_seen_systems(con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """Every system judged, in the order of its first judgement (after score_matrices)."""
    found = con.execute("SELECT system FROM judgements GROUP BY system ORDER BY min(ord)")
    return tuple(system for (system,) in found.fetchall())
