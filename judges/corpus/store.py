"""The judgements' working store: judgements.jsonl converted once to Parquet, checked by column.

JSONL stays the interchange format (what importers and `corpus judge` write, what rows.py
documents). Summarising a team's log row by row costs a pydantic object per judgement, so
the report reads the judgements through DuckDB instead: each line is parsed once, its keys
and value types are checked as columns, and the typed columns are cached as Parquet under
the cache folder, keyed by the JSONL's path, size, times and inode (a changed file is
converted again; the corpus folder is never written to).

The column checks accept only what they can prove the row checks would accept. Anything
else (a string for a number, a key given twice, an unknown item, a duplicate judgement, a
score off the scale, a line that is not JSON) sends the corpus to the row path of rows.py,
which refuses it with its file, line and fix, so both paths refuse the same rows with the
same words.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judges.corpus.engine import first_seen_systems, score_matrices
from judges.corpus.manifest import CorpusError, CorpusManifest
from judges.corpus.rows import JUDGEMENTS_FILE, Corpus, SummarisedJudgements, load_corpus
from judges.storage.cache import cache_dir

if TYPE_CHECKING:
    import duckdb

STORE_VERSION = 3  # bump when the Parquet columns change: older stores are converted again
FIELDS = ("system", "item", "judge", "run", "score", "error", "raw", "flagged")
NAME_LENGTH = (1, 200)  # rows.py's _NAME
RUN_LIMIT = 2**31  # a run number past this is left to the row checks (pydantic's StrictInt)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def store_path(jsonl: Path) -> Path:
    """Where the Parquet store of `jsonl` lives: a folder per JSONL path, a file per state of
    the file in it (size, modification and change times, inode: any write or replacement
    changes one; reading the whole file for a hash would cost seconds per gigabyte)."""
    stat = jsonl.stat()
    state = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, STORE_VERSION)
    version = _digest("\0".join(map(str, state)))
    return cache_dir() / "corpus-store" / _digest(str(jsonl.resolve())) / f"{version}.parquet"


def _sql_list(values: tuple[str, ...] | list[str]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


def _string(value: str) -> str:
    """SQL: the field's JSON text (as json_extract gives it) is a string: it opens with a
    quote. Read from the text, not parsed again."""
    return f"(left({value}, 1) = '\"')"


def _absent_or(value: str, check: str) -> str:
    """SQL: the field is absent, JSON null, or passes `check`."""
    return f"({value} IS NULL OR {value} = 'null' OR {check})"


# Each line parsed once: its keys and its fields' JSON values, then the column checks. The
# rows keep the file's order (DuckDB preserves insertion order), so a row's position in the
# Parquet file is its line order: no window over the whole log, which would hold it in
# memory.
_CONVERT = f"""
WITH parsed AS (
    SELECT json_type(json) AS shape, json_keys(json) AS keys,
           json_extract(json, {_sql_list([f"$.{f}" for f in FIELDS])}) AS v
    FROM read_ndjson_objects($source, format = 'newline_delimited')
), fields AS (
    SELECT shape, keys, v[1] AS system, v[2] AS item, v[3] AS judge, v[4] AS run,
           v[5] AS score, v[6] AS error, v[7] AS raw, v[8] AS flagged
    FROM parsed
)
SELECT system ->> '$' AS system, item ->> '$' AS item, judge ->> '$' AS judge,
       coalesce(TRY_CAST(run AS BIGINT), 0) AS run,
       CASE WHEN json_type(score) IN ('DOUBLE', 'UBIGINT', 'BIGINT')
            THEN TRY_CAST(score AS DOUBLE) END AS score,
       error ->> '$' AS error,
       CASE flagged WHEN 'true' THEN true WHEN 'false' THEN false END AS flagged,
       (shape = 'OBJECT'
        -- Only the format's keys, each once: as many keys as fields of the format found (a
        -- key given twice, or one the format lacks, makes more keys than fields).
        AND len(keys) = {" + ".join(f"({f} IS NOT NULL)::INTEGER" for f in FIELDS)}
        AND coalesce({_string("system")} AND {_string("item")} AND {_string("judge")}, false)
        AND length(system ->> '$') BETWEEN {NAME_LENGTH[0]} AND {NAME_LENGTH[1]}
        AND length(item ->> '$') BETWEEN {NAME_LENGTH[0]} AND {NAME_LENGTH[1]}
        AND length(judge ->> '$') BETWEEN {NAME_LENGTH[0]} AND {NAME_LENGTH[1]}
        AND (run IS NULL OR coalesce(json_type(run) = 'UBIGINT'
                                     AND TRY_CAST(run AS UBIGINT) < {RUN_LIMIT}, false))
        AND {_absent_or("score", "json_type(score) IN ('DOUBLE', 'UBIGINT', 'BIGINT')")}
        AND {_absent_or("error", _string("error"))}
        AND {_absent_or("raw", _string("raw"))}
        AND {_absent_or("flagged", "flagged IN ('true', 'false')")}) AS shaped
FROM fields
"""


def connect(memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """An embedded DuckDB; under `memory_limit` (e.g. "1GB") it spills to the cache folder."""
    import duckdb

    spill = cache_dir() / "duckdb-spill"
    try:
        spill.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OSError(
            f"{spill}: cannot write the corpus store's cache ({error.strerror}); set "
            "JUDGES_CACHE_DIR to a folder this user can write"
        ) from None
    config: dict[str, str | bool | int | float | list[str]] = {"temp_directory": str(spill)}
    if memory_limit:
        config["memory_limit"] = memory_limit
    try:
        return duckdb.connect(config=config)
    except duckdb.Error as error:
        raise ValueError(
            f"--memory-limit {memory_limit!r}: not a memory size DuckDB reads ({error}); "
            "give one such as 1GB or 512MB"
        ) from None


def convert(con: duckdb.DuckDBPyConnection, jsonl: Path) -> Path | None:
    """The Parquet store of `jsonl`, converted now unless a current one is cached; None when
    a line fails the column checks of its own (shape, types, lengths): rows.py names it."""
    import duckdb

    target = store_path(jsonl)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            con.execute(
                f"COPY ({_CONVERT}) TO '{_quoted(partial)}' (FORMAT parquet, COMPRESSION zstd)",
                {"source": str(jsonl)},
            ).fetchall()
            os.replace(partial, target)  # atomic: an interrupted run leaves no half store
        except (duckdb.InvalidInputException, duckdb.ConversionException):
            return None  # not JSON, not UTF-8, a truncated line: the row path says where
        finally:
            partial.unlink(missing_ok=True)
        for older in target.parent.glob("*.parquet"):  # the same JSONL before it changed
            if older != target:
                older.unlink(missing_ok=True)
    (shaped,) = con.execute(
        f"SELECT bool_and(shaped) FROM read_parquet('{_quoted(target)}')"
    ).fetchall()[0]
    return target if shaped is not False else None


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


@dataclass(frozen=True)
class StoreCounts:
    judgements: int
    errors: int


def cross_checked(
    con: duckdb.DuckDBPyConnection, store: Path, manifest: CorpusManifest, items: list[str]
) -> StoreCounts | None:
    """The checks of rows against the corpus, by column: every item and judge known, a score
    or an error (exactly one), a finite score on the scale. None when one fails (rows.py
    names the line). A judgement given twice is found where the engine places the cells."""
    for table, key, names in (
        ("known_items", "id", items),
        ("known_judges", "judge", list(manifest.judges)),
    ):
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT unnest($names::VARCHAR[]) AS {key}",
            {"names": names},
        ).fetchall()
    scale = manifest.scale
    judgements, errors, refused = con.execute(
        f"""
        SELECT count(*) AS judgements,
               count(*) FILTER (WHERE score IS NULL) AS errors,
               count(*) FILTER (WHERE item NOT IN (SELECT id FROM known_items)
                                OR judge NOT IN (SELECT judge FROM known_judges)
                                OR (score IS NULL) = (error IS NULL)
                                OR NOT (isfinite(score) AND score BETWEEN $low AND $high))
                 AS refused
        FROM read_parquet('{_quoted(store)}')
        """,
        {"low": scale.low, "high": scale.high},
    ).fetchall()[0]
    return None if refused else StoreCounts(judgements, errors)


def load_summarised(folder: Path, memory_limit: str | None = None) -> Corpus:
    """The corpus with its judgements read through the store and summarised by the engine
    (`Corpus.summarised`, no row objects). Whatever the column checks cannot prove valid
    goes to the row path, `rows.load_corpus`, which refuses it with its file, line and fix
    (or, should it accept it, summarises it row by row)."""
    jsonl = folder / JUDGEMENTS_FILE
    try:
        corpus = load_corpus(folder, judgements=False)
    except CorpusError:
        return load_corpus(folder)  # the first problem in the row path's own order
    if not jsonl.is_file():
        return load_corpus(folder)
    con = connect(memory_limit)
    try:
        store = convert(con, jsonl)
        items = tuple(item.id for item in corpus.items)
        counts = cross_checked(con, store, corpus.manifest, list(items)) if store else None
        if store is None or counts is None or counts.judgements == 0:
            return load_corpus(folder)
        matrices = score_matrices(con, store, list(corpus.manifest.judges), items)
        if matrices is None:
            return load_corpus(folder)
        systems = first_seen_systems(con)
    finally:
        con.close()
    summary = SummarisedJudgements(counts.judgements, counts.errors, systems, matrices)
    return dataclasses.replace(corpus, summarised=summary)
