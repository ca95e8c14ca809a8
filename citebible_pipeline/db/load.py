"""Bulk loading: binary COPY into a temp stage, then replace the target rows in one transaction.

Readers keep seeing the old rows (MVCC) until the commit, and a failure anywhere leaves them in
place, so a re-run is idempotent and never destroys data already loaded.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql


@dataclass(frozen=True)
class LoadStats:
    table: str
    deleted: int
    inserted: int
    seconds: float


def copy_rows(cur: psycopg.Cursor, table: str, columns: Sequence[str], types: Sequence[str], rows: Iterable[tuple]) -> int:
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    n = 0
    with cur.copy(stmt) as copy:
        copy.set_types(list(types))
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def replace_rows(
    conn: psycopg.Connection,
    table: str,
    columns: Sequence[str],
    types: Sequence[str],
    rows: Iterable[tuple],
    where: sql.Composable | None = None,
    params: Sequence | None = None,
    validate=None,
) -> LoadStats:
    """Replace the rows of `table` matching `where` (all rows if None) with `rows`, atomically.

    `validate(cur, stage_name)` may inspect the staged rows and raise to abort before the swap.
    """
    started = time.perf_counter()
    stage = f"_stage_{table}"
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(sql.SQL("CREATE TEMP TABLE {} (LIKE {} INCLUDING DEFAULTS) ON COMMIT DROP").format(
            sql.Identifier(stage), sql.Identifier(table)))
        inserted = copy_rows(cur, stage, columns, types, rows)
        if validate is not None:
            validate(cur, stage)
        where_sql = where if where is not None else sql.SQL("TRUE")
        cur.execute(sql.SQL("DELETE FROM {} WHERE {}").format(sql.Identifier(table), where_sql), params)
        deleted = cur.rowcount
        cols = sql.SQL(", ").join(map(sql.Identifier, columns))
        cur.execute(sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(
            sql.Identifier(table), cols, cols, sql.Identifier(stage)))
    return LoadStats(table, deleted, inserted, time.perf_counter() - started)
