"""passage_embeddings in Postgres: spaces, incremental writes, per-space HNSW indexes, dense search."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import psycopg
from pgvector import Vector
from psycopg import sql

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db.load import copy_rows
from citebible_pipeline.embeddings.documents import DERIVED, PassageDoc
from citebible_pipeline.embeddings.embedder import EmbeddingSpace

LEVELS = ("verse", "chapter", "pericope")
_META = ("level", "id", "book_order", "book", "book_name", "chapter", "verse_start", "verse_end", "ref",
         "testament", "genre", "text", "windows", "content_hash")
_META_TYPES = ("text", "integer", "smallint", "text", "text", "smallint", "smallint", "smallint", "text",
               "text", "text", "text", "smallint", "text")


def active_space(conn: psycopg.Connection) -> tuple[int, EmbeddingSpace] | None:
    row = conn.execute(
        "SELECT id, model_id, weights_sha256, dims, document_prefix, query_prefix, normalized, max_seq_length"
        " FROM embedding_spaces WHERE is_active"
    ).fetchone()
    if row is None:
        return None
    fields = dict(zip(("model_id", "weights_sha256", "dims", "document_prefix", "query_prefix", "normalized",
                       "max_seq_length"), row[1:]))
    return row[0], EmbeddingSpace(**fields)


def ensure_space(conn: psycopg.Connection, space: EmbeddingSpace) -> int:
    """The space's id, inserting it if new (two partitions starting at once agree on one row)."""
    conn.execute(
        "INSERT INTO embedding_spaces (space_key, model_id, weights_sha256, dims, document_prefix, query_prefix,"
        " normalized, max_seq_length) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (space_key) DO NOTHING",
        (space.key, space.model_id, space.weights_sha256, space.dims, space.document_prefix, space.query_prefix,
         space.normalized, space.max_seq_length))
    return conn.execute("SELECT id FROM embedding_spaces WHERE space_key = %s", (space.key,)).fetchone()[0]


def existing_hashes(conn: psycopg.Connection, space_id: int, translation: str) -> dict[tuple[str, int], str]:
    rows = conn.execute("SELECT level, id, content_hash FROM passage_embeddings WHERE space_id = %s AND translation = %s",
                        (space_id, translation))
    return {(lv, i): h for lv, i, h in rows}


def write_passages(
    conn: psycopg.Connection,
    space_id: int,
    translation: str,
    docs: Sequence[PassageDoc],
    hashes: Mapping[tuple[str, int], str],
    vectors: Mapping[tuple[str, int], np.ndarray],
) -> dict[str, int]:
    """Make the space's rows of this translation equal `docs` in one transaction: new vectors where given,
    metadata refreshed where it changed, rows that no longer exist removed (never another translation's).
    Returns counts. Its own transaction: it must not run inside one that later builds indexes."""
    _top_level(conn, "write_passages")
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "CREATE TEMP TABLE _stage_passages (level text, id integer, book_order smallint, book text, book_name text,"
            " chapter smallint, verse_start smallint, verse_end smallint, ref text, testament text, genre text,"
            " text text, windows smallint, content_hash text, embedding vector) ON COMMIT DROP"
        )
        rows = (
            (d.level, d.id, d.book_order, d.book, d.book_name, d.chapter, d.verse_start, d.verse_end, d.ref,
             d.testament, d.genre, d.text, 0 if d.windows[0] == DERIVED else len(d.windows), hashes[(d.level, d.id)],
             Vector(vectors[(d.level, d.id)]) if (d.level, d.id) in vectors else None)
            for d in docs
        )
        copy_rows(cur, "_stage_passages", (*_META, "embedding"), (*_META_TYPES, "vector"), rows)
        cur.execute(
            "DELETE FROM passage_embeddings p WHERE p.space_id = %s AND p.translation = %s AND NOT EXISTS"
            " (SELECT 1 FROM _stage_passages s WHERE s.level = p.level AND s.id = p.id)", (space_id, translation))
        removed = cur.rowcount
        meta = [c for c in _META if c not in ("level", "id")]
        cols = sql.SQL(", ").join(map(sql.Identifier, _META))
        s_cols = sql.SQL(", ").join(sql.SQL("s.{}").format(sql.Identifier(c)) for c in _META)
        updates = sql.SQL(", ").join(sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(c)) for c in meta)
        changed = sql.SQL(" OR ").join(sql.SQL("s.{0} IS DISTINCT FROM e.{0}").format(sql.Identifier(c)) for c in meta)
        # Only new vectors and changed metadata are written; untouched rows are not rewritten.
        cur.execute(
            sql.SQL(
                "INSERT INTO passage_embeddings AS p (space_id, translation, {cols}, embedding)"
                " SELECT %s, %s, {s_cols}, COALESCE(s.embedding, e.embedding) FROM _stage_passages s"
                " LEFT JOIN passage_embeddings e ON e.space_id = %s AND e.translation = %s AND e.level = s.level"
                "  AND e.id = s.id"
                " WHERE s.embedding IS NOT NULL OR (e.id IS NOT NULL AND ({changed}))"
                " ON CONFLICT (space_id, translation, level, id) DO UPDATE SET {updates}, embedding = EXCLUDED.embedding"
            ).format(cols=cols, s_cols=s_cols, updates=updates, changed=changed),
            (space_id, translation, space_id, translation),
        )
        written = cur.rowcount
        missing = cur.execute(
            "SELECT count(*) FROM _stage_passages s WHERE s.embedding IS NULL AND NOT EXISTS"
            " (SELECT 1 FROM passage_embeddings e WHERE e.space_id = %s AND e.translation = %s AND e.level = s.level"
            "  AND e.id = s.id)", (space_id, translation)).fetchone()[0]
        if missing:
            raise RuntimeError(f"{missing} passages have neither a new nor a stored vector; nothing was written")
    return {"removed": removed, "written": written}


def _top_level(conn: psycopg.Connection, what: str) -> None:
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        raise RuntimeError(f"{what} needs a connection with no open transaction (commit or roll back first)")


def _index_ddl_lock(conn: psycopg.Connection) -> None:
    """Index DDL on passage_embeddings, one partition at a time (every partition's HNSW indexes live on the
    one table), until the transaction ends."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('citebible:passage_embeddings:indexes', 0))")


def index_name(space_id: int, level: str, translation: str) -> str:
    return f"passage_embeddings_hnsw_s{space_id}_{translation}_{level}"


def ensure_indexes(conn: psycopg.Connection, space_id: int, dims: int, translation: str, m: int = 16,
                   ef_construction: int = 200, maintenance_work_mem: str = "1GB", rebuild: Collection[str] = ()) -> list[str]:
    """Partial HNSW index per level of this space and translation (cosine; a search of one translation
    never post-filters another's rows), then ANALYZE. Returns indexes created now (a level added to an
    existing space gets its index on the next build; a level in `rebuild` is reindexed)."""
    created = []
    _top_level(conn, "ensure_indexes")
    with conn.transaction():
        _index_ddl_lock(conn)
        conn.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(maintenance_work_mem)))
        for level in LEVELS:
            name = index_name(space_id, level, translation)
            if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0]:
                if level in rebuild:
                    conn.execute(sql.SQL("REINDEX INDEX {}").format(sql.Identifier(name)))
                    created.append(f"{name} (rebuilt)")
                continue
            conn.execute(sql.SQL(
                "CREATE INDEX {name} ON passage_embeddings USING hnsw ((embedding::vector({dims})) vector_cosine_ops)"
                " WITH (m = {m}, ef_construction = {ef}) WHERE space_id = {space} AND level = {level}"
                " AND translation = {translation}"
            ).format(name=sql.Identifier(name), dims=sql.Literal(int(dims)), m=sql.Literal(int(m)),
                     ef=sql.Literal(int(ef_construction)), space=sql.Literal(int(space_id)), level=sql.Literal(level),
                     translation=sql.Literal(translation)))
            created.append(name)
        conn.execute("ANALYZE passage_embeddings")  # inside: its lock ends with the DDL's, at this commit
    return created


def activate(conn: psycopg.Connection, space_id: int) -> int:
    """Make `space_id` the one the query side reads, and drop the other spaces, in one transaction."""
    _top_level(conn, "activate")
    with conn.transaction():
        _index_ddl_lock(conn)
        conn.execute("UPDATE embedding_spaces SET is_active = false WHERE is_active AND id <> %s", (space_id,))
        conn.execute("UPDATE embedding_spaces SET is_active = true WHERE id = %s", (space_id,))
        old = [r[0] for r in conn.execute("SELECT id FROM embedding_spaces WHERE id <> %s", (space_id,))]
        for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'passage_embeddings'"
                                    " AND indexname LIKE 'passage_embeddings_hnsw_s%'").fetchall():
            if int(name.removeprefix("passage_embeddings_hnsw_s").split("_")[0]) in old:
                conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute("DELETE FROM embedding_spaces WHERE id <> %s", (space_id,))
    return len(old)


def dense_search(conn: psycopg.Connection, space_id: int, dims: int, level: str, query: np.ndarray, k: int = 10,
                 ef_search: int | None = None, exact: bool = False,
                 translation: str = DEFAULT_TRANSLATION) -> list[tuple[int, str, float]]:
    """(id, ref, cosine similarity) nearest first. `exact` bypasses the index (for recall checks)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    started = time.perf_counter()
    dist = sql.SQL("embedding::vector({}) <=> %s::vector({})").format(sql.Literal(int(dims)), sql.Literal(int(dims)))
    # Exact search orders by an expression the index cannot serve (+ 0), so no planner setting has to
    # be switched off (a SET LOCAL inside a caller's transaction would outlive this call).
    order = sql.SQL("({}) + 0").format(dist) if exact else dist
    # ef_search below LIMIT silently returns fewer rows (pgvector default 40); set for the session on
    # every call, so it holds in autocommit mode too and never leaks a stale value into the next call.
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(max(ef_search or 40, k)),))
    rows = conn.execute(
        sql.SQL("SELECT id, ref, 1 - ({d}) FROM passage_embeddings WHERE space_id = %s AND level = %s"
                " AND translation = %s ORDER BY {o} LIMIT %s").format(d=dist, o=order),
        (Vector(query), space_id, level, translation, Vector(query), k), prepare=False,
    ).fetchall()
    dense_search.last_seconds = time.perf_counter() - started  # type: ignore[attr-defined]
    return [(r[0], r[1], float(r[2])) for r in rows]
