"""Stage 3, retrieve: every dense (variant x level) search and the full-text search in one round trip,
and the other SQL the engine needs (cross-references, display rows). All values are parameters."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import psycopg
from pgvector import Vector
from psycopg import sql

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.query.tuning import TUNING


@dataclass(frozen=True)
class DenseQuery:
    variant: int
    level: str
    vector: np.ndarray


# A row: (variant index, retriever, level, start id, end id, similarity)
Row = tuple[int, str, str, int, int, float]


class Level(NamedTuple):
    """One level's rows for exact search (`level`): start and end ids, the unit vectors as rows (`_top` rescores a few
    of them) and as one contiguous (dims, rows) matrix for the product. A few query vectors times the columns read the
    verse matrix 1.6-2.6x faster than the rows times the vectors with OpenBLAS on one thread, which packs the whole
    (rows, dims) matrix first (README "Twenty-ninth step")."""

    starts: np.ndarray
    ends: np.ndarray
    vectors: np.ndarray
    columns: np.ndarray


def level(starts: np.ndarray, ends: np.ndarray, vectors: np.ndarray) -> Level:
    """A level's rows for `exact_rows`, its columns copied once (the caller keeps it: a copy of the verse matrix)."""
    vectors = np.asarray(vectors, np.float32)
    return Level(np.asarray(starts), np.asarray(ends), vectors, np.ascontiguousarray(vectors.T))


def common_lexemes(conn: psycopg.Connection, space_id: int, min_share: float = 0.03) -> list[str]:
    """Lexemes in more than `min_share` of the verses ('god', 'lord', 'say'): OR-ing them into a full-text
    query ranks thousands of rows for no information (what idf would discount), so they are dropped."""
    total = conn.execute("SELECT count(*) FROM passage_embeddings WHERE space_id = %s AND level = 'verse'"
                         " AND translation = %s", (space_id, DEFAULT_TRANSLATION)).fetchone()[0]
    inner = sql.SQL("SELECT tsv FROM passage_embeddings WHERE space_id = {} AND level = 'verse' AND translation = {}"
                    ).format(sql.Literal(int(space_id)), sql.Literal(DEFAULT_TRANSLATION))
    rows = conn.execute("SELECT word FROM ts_stat(%s) WHERE ndoc > %s", (inner.as_string(conn), min_share * total)).fetchall()
    return sorted(r[0] for r in rows)


def or_query(conn: psycopg.Connection, text: str, common: Sequence[str]) -> str | None:
    """The text's english lexemes, less the common ones, OR-ed as tsquery text (None when none is left)."""
    lexemes = conn.execute("SELECT array_agg(DISTINCT lexeme) FROM unnest(to_tsvector('english', %s))"
                           " WHERE lexeme <> ALL(%s::text[])", (text, list(common))).fetchone()[0]
    if not lexemes:
        return None
    return " | ".join("'" + lx.replace("\\", "\\\\").replace("'", "''") + "'" for lx in sorted(lexemes))


def retrieve(conn: psycopg.Connection, space_id: int, dims: int, dense: Sequence[DenseQuery], k: int, ef_search: int,
             fulltext: str | None, fulltext_k: int = TUNING.fulltext_k, translation: str = DEFAULT_TRANSLATION, common: Sequence[str] = ()) -> list[Row]:
    """One statement: each dense search is its own ORDER BY ... LIMIT branch (so each uses the level's
    partial HNSW index and never post-filters); the full-text branch ORs the query's stemmed terms,
    less the `common` ones."""
    dist = sql.SQL("embedding::vector({d}) <=> %s::vector({d})").format(d=sql.Literal(int(dims)))
    span = sql.SQL("id / 1000 * 1000 + verse_start, id / 1000 * 1000 + verse_end")
    parts: list[sql.Composable] = []
    params: list = []
    # The tsquery goes in as a value (not built inside the statement) so the planner sees it and uses
    # the GIN index: built in-statement it cost 22 ms against 6 ms here.
    tsq = or_query(conn, fulltext, common) if fulltext else None
    if fulltext and not tsq:
        fulltext = None
    for q in dense:
        parts.append(sql.SQL(
            "(SELECT %s::int, 'dense', level, {span}, (1 - ({dist}))::float8 FROM passage_embeddings"
            " WHERE space_id = %s AND level = %s AND translation = %s ORDER BY {dist} LIMIT %s)"
        ).format(span=span, dist=dist))
        vec = Vector(q.vector)
        params += [q.variant, vec, space_id, q.level, translation, vec, k]
    if fulltext:
        parts.append(sql.SQL(
            "(SELECT 0, 'fulltext', level, {span}, ts_rank_cd(tsv, %s::tsquery)::float8 FROM passage_embeddings"
            " WHERE space_id = %s AND level = 'verse' AND translation = %s AND tsv @@ %s::tsquery"
            " ORDER BY 6 DESC, 4 LIMIT %s)"
        ).format(span=span))
        params += [tsq, space_id, translation, tsq, fulltext_k]
    if not parts:
        return []
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(max(ef_search, k)),))
    stmt = sql.SQL(" UNION ALL ").join(parts)
    return [tuple(r) for r in conn.execute(stmt, params, prepare=False).fetchall()]


def exact_rows(dense: Sequence[DenseQuery], levels: Mapping[str, Level], k: int, memo: dict | None = None) -> list[Row]:
    """Each dense search answered exactly from vectors in memory (`levels`: level -> its `Level`;
    `PoolTables.exact_levels`), in `retrieve`'s row shape and order: one matrix product per level for all its queries,
    nearest first, ties by start id. No graph is read, so a rebuilt index cannot change an answer. `memo`: answers kept
    by vector (`prefill_exact`; the evaluation and the training pools, where a theme's rewrite recurs in many queries
    and a query under many variants), the same to the bit as computing them."""
    answers: dict[int, list[Row]] = {}
    for name in dict.fromkeys(q.level for q in dense):
        idx = [i for i, q in enumerate(dense) if q.level == name]
        rows = levels[name]
        vecs = [np.asarray(dense[i].vector, np.float32) for i in idx]
        got = _nearest(rows, vecs, k, memo, name)
        for i, (top, sims) in zip(idx, got):
            answers[i] = [(dense[i].variant, "dense", name, int(rows.starts[r]), int(rows.ends[r]), float(s))
                          for r, s in zip(top, sims)]
    return [row for i in range(len(dense)) for row in answers[i]]


def _nearest(rows: Level, vecs: list[np.ndarray], k: int, memo: dict | None, name: str
             ) -> list[tuple[np.ndarray, np.ndarray]]:
    """(rows nearest first, their cosines) for each vector, from one matrix product for those not kept in `memo`. The
    product's last float32 bits depend on its width, a vector's place in it and the machine's BLAS kernels (up to 2e-7),
    so `_top` scores the rows near the k-th again one by one: an answer is the same whatever it was computed beside
    (tests: test_exact_memo_is_the_same_to_the_bit)."""
    keys = [(_EXACT, name, k, _digest([v])) for v in vecs] if memo is not None else None
    todo = list(range(len(vecs))) if keys is None else [j for j, key in enumerate(keys) if key not in memo]
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if todo:
        sims = np.stack([vecs[j] for j in todo]) @ rows.columns
        for c, j in enumerate(todo):
            out[j] = _top(sims[c], rows.starts, k, rows.vectors, vecs[j])
            if keys is not None:
                memo[keys[j]] = out[j]
    return [out[j] if j in out else memo[keys[j]] for j in range(len(vecs))]


_EXACT = "exact"  # the memo's key tag: `retrieve_once` shares the evaluation's memo


def _digest(vectors: Sequence[np.ndarray]) -> bytes:
    """The memo's key for vectors (their float32 bytes)."""
    return hashlib.blake2b(b"".join(np.asarray(v, np.float32).tobytes() for v in vectors), digest_size=16).digest()


EXACT_SLACK = 1e-5  # 50x the largest difference measured between two products' kinds (2e-7)


def _top(col: np.ndarray, starts: np.ndarray, k: int, mat: np.ndarray, vec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest rows, ties by start id: every row within EXACT_SLACK of the k-th best by the product is scored
    again by itself in float64 (a per-row sum, no BLAS kernel), and those scores order and are the answer."""
    n = min(k, len(starts))
    if n <= 0:
        return np.zeros(0, np.intp), col[:0]
    kth = np.partition(col, len(col) - n)[len(col) - n]
    near = np.flatnonzero(col >= kth - EXACT_SLACK)
    exact = np.einsum("ij,j->i", mat[near].astype(np.float64), np.asarray(vec, np.float64)).astype(np.float32)
    order = np.lexsort((starts[near], -exact))[:n]
    return near[order], exact[order]


def prefill_exact(memo: dict, levels: Mapping[str, Level], vectors: np.ndarray, k: int, chunk: int = 256) -> None:
    """Many queries' exact answers in a few matrix products (`memo` for `exact_rows`): a product of one sentence's few
    vectors reads the whole verse matrix for them, one of 256 reads it once for all."""
    vectors = np.asarray(vectors, np.float32)
    for name, rows in levels.items():
        for lo in range(0, len(vectors), chunk):
            _nearest(rows, list(vectors[lo:lo + chunk]), k, memo, name)


def retrieve_once(memo: dict | None, conn: psycopg.Connection, space_id: int, dims: int, dense: Sequence[DenseQuery],
                  k: int, ef_search: int, fulltext: str | None, **kw) -> list[Row]:
    """`retrieve`, answered from `memo` when the same request was made before: the evaluation ranks each query
    under many variants, most of which search alike, and an HNSW index answers one request the same way every
    time. Keyed by everything the statement reads; `memo` None is a plain `retrieve`."""
    if memo is None:
        return retrieve(conn, space_id, dims, dense, k, ef_search, fulltext, **kw)
    key = (space_id, k, ef_search, fulltext, tuple(sorted(kw.items())), tuple((q.variant, q.level) for q in dense),
           _digest([q.vector for q in dense]))
    if key not in memo:
        memo[key] = retrieve(conn, space_id, dims, dense, k, ef_search, fulltext, **kw)
    return memo[key]


def cross_references(conn: psycopg.Connection, spans: Sequence[tuple[int, int]], per_span: int, min_votes: int = 1
                     ) -> list[tuple[int, int, int, int]]:
    """(span index, to_start, to_end, votes): the best-voted references out of each span."""
    if not spans:
        return []
    return conn.execute(
        "SELECT s.i - 1, c.to_start, c.to_end, c.votes FROM unnest(%s::int[], %s::int[]) WITH ORDINALITY AS s(a, b, i)"
        " CROSS JOIN LATERAL (SELECT to_start, to_end, max(votes) AS votes FROM cross_references"
        "   WHERE from_id BETWEEN s.a AND s.b AND votes >= %s GROUP BY 1, 2 ORDER BY 3 DESC, 1 LIMIT %s) c"
        " ORDER BY 1, 4 DESC",
        ([a for a, _ in spans], [b for _, b in spans], min_votes, per_span),
    ).fetchall()


def verse_rows(conn: psycopg.Connection, space_id: int, ids: Sequence[int], translation: str = DEFAULT_TRANSLATION,
               vectors: tuple[np.ndarray, np.ndarray] | None = None) -> dict[int, tuple[str, str, np.ndarray | None]]:
    """id -> (ref, text, verse vector or None) for display. `vectors`: (sorted ids, rows) already in memory (the
    engine's pool tables of this space and translation): then only the texts are read, not 384 floats a verse."""
    if vectors is not None:
        vids, mat = vectors
        rows = conn.execute("SELECT id, ref, text FROM verses WHERE translation = %s AND id = ANY(%s)",
                            (translation, list(ids))).fetchall()
        pos = np.searchsorted(vids, [r[0] for r in rows])
        return {r[0]: (r[1], r[2], mat[p] if p < len(vids) and vids[p] == r[0] else None) for r, p in zip(rows, pos)}
    rows = conn.execute(
        "SELECT v.id, v.ref, v.text, e.embedding FROM verses v LEFT JOIN passage_embeddings e"
        " ON e.space_id = %s AND e.level = 'verse' AND e.id = v.id AND e.translation = v.translation"
        " WHERE v.translation = %s AND v.id = ANY(%s)",
        (space_id, translation, list(ids)),
    ).fetchall()
    return {r[0]: (r[1], r[2], None if r[3] is None else np.asarray(r[3].to_numpy(), np.float32)) for r in rows}


def passage_verses(conn: psycopg.Connection, start_id: int, end_id: int, translation: str = DEFAULT_TRANSLATION,
                   limit: int | None = None) -> list[tuple[int, str, str]]:
    """(id, ref, text) of the verses of a passage, in order, at most `limit` (the CLI's and the API's lookups)."""
    return conn.execute("SELECT id, ref, text FROM verses WHERE translation = %s AND id BETWEEN %s AND %s ORDER BY id"
                        " LIMIT %s", (translation, start_id, end_id, limit)).fetchall()
