"""Load parsed OpenBible rows with quality gates: stage, diff against the current table, refuse a
shrink of more than 20 %, then swap in one transaction (readers never see a partial table)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import psycopg
from psycopg import sql

from citebible_pipeline.db.load import LoadStats, replace_rows

MAX_SHRINK = 0.20


class ShrinkError(RuntimeError):
    pass


@dataclass
class Diff:
    before: int = 0
    after: int = 0
    added: int = 0
    removed: int = 0
    changed: int = 0


def topic_id(normalized_name: str) -> int:
    """Stable across refreshes: the first 63 bits of sha256 of the normalized name."""
    return int.from_bytes(hashlib.sha256(normalized_name.encode()).digest()[:8], "big") >> 1


def gated_replace(conn: psycopg.Connection, table: str, key: tuple[str, ...], value: tuple[str, ...],
                  columns: tuple[str, ...], types: tuple[str, ...], rows, max_shrink: float = MAX_SHRINK) -> tuple[LoadStats, Diff]:
    """replace_rows with a diff (added/removed/changed by key) and the shrink gate, checked on the stage."""
    diff = Diff()

    def validate(cur: psycopg.Cursor, stage: str) -> None:
        t, s = sql.Identifier(table), sql.Identifier(stage)
        join = sql.SQL(" AND ").join(sql.SQL("o.{0} = n.{0}").format(sql.Identifier(k)) for k in key)
        differs = sql.SQL(" OR ").join(sql.SQL("o.{0} IS DISTINCT FROM n.{0}").format(sql.Identifier(v)) for v in value)
        diff.before = cur.execute(sql.SQL("SELECT count(*) FROM {}").format(t)).fetchone()[0]
        diff.after = cur.execute(sql.SQL("SELECT count(*) FROM {}").format(s)).fetchone()[0]
        diff.added = cur.execute(sql.SQL("SELECT count(*) FROM {s} n WHERE NOT EXISTS (SELECT 1 FROM {t} o WHERE {j})"
                                         ).format(s=s, t=t, j=join)).fetchone()[0]
        diff.removed = cur.execute(sql.SQL("SELECT count(*) FROM {t} o WHERE NOT EXISTS (SELECT 1 FROM {s} n WHERE {j})"
                                           ).format(s=s, t=t, j=join)).fetchone()[0]
        if value:  # a key-only table (a set of rows) has nothing to change in place
            diff.changed = cur.execute(sql.SQL("SELECT count(*) FROM {t} o JOIN {s} n ON {j} WHERE {d}"
                                               ).format(s=s, t=t, j=join, d=differs)).fetchone()[0]
        if diff.before and diff.after < diff.before * (1 - max_shrink):
            raise ShrinkError(f"{table}: refresh would shrink the table from {diff.before:,} to {diff.after:,} rows "
                              f"(more than {max_shrink:.0%}); the previous data was kept")

    stats = replace_rows(conn, table, columns, types, rows, validate=validate)
    return stats, diff
