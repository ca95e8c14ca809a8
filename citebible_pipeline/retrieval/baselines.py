"""Baseline retrievers: Postgres full text alone, and one raw query embedding at verse level.

Both return verse-level results from passage_embeddings of the active space and never abstain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import psycopg

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.embeddings.embedder import Embedder, check_space
from citebible_pipeline.embeddings.store import active_space, dense_search
from citebible_pipeline.gold.metrics import Result


@dataclass
class Retrieved:
    results: list[Result]
    abstained: bool = False


@dataclass
class RetrievalContext:
    conn: psycopg.Connection
    embedder: Embedder
    k: int = 50
    ef_search: int = 200
    memo: dict | None = field(default_factory=dict)  # retrieval answers shared by a query's variants; None: off
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        active = active_space(self.conn)
        if active is None:
            raise RuntimeError("no active embedding space: materialize passage_embeddings first")
        self.space_id, space = active
        check_space(space, self.embedder.space)
        self.dims = space.dims

    def prepare(self, queries: Sequence[str]) -> None:
        """Embed many queries in one batch (the query prefix is applied by the embedder)."""
        todo = [q for q in dict.fromkeys(queries) if q not in self._vectors]
        if todo:
            self._vectors.update(zip(todo, self.embedder.encode_queries(todo)))

    def forget(self) -> None:
        if self.memo is not None:
            self.memo.clear()

    def vector(self, query: str) -> np.ndarray:
        self.prepare([query])
        return self._vectors[query]


def full_text(ctx: RetrievalContext, query: str) -> Retrieved:
    """`bm25` in the table: Postgres full text (english stemming, terms OR-ed, ts_rank_cd). Not true
    BM25 (no idf saturation), but the lexical baseline a Postgres-only system would have."""
    rows = ctx.conn.execute(
        "WITH q AS (SELECT nullif(replace(plainto_tsquery('english', %s)::text, '&', '|'), '')::tsquery AS q)"
        " SELECT p.id FROM passage_embeddings p, q WHERE q.q IS NOT NULL AND p.space_id = %s AND p.level = 'verse'"
        " AND p.translation = %s"
        " AND p.tsv @@ q.q ORDER BY ts_rank_cd(p.tsv, q.q) DESC, p.id LIMIT %s",
        (query, ctx.space_id, DEFAULT_TRANSLATION, ctx.k),
    ).fetchall()
    return Retrieved([Result(r[0], r[0]) for r in rows])


def dense_raw(ctx: RetrievalContext, query: str) -> Retrieved:
    """One raw query embedding, verse level, no rewrite (the GitaChat baseline)."""
    hits = dense_search(ctx.conn, ctx.space_id, ctx.dims, "verse", ctx.vector(query), ctx.k, ef_search=ctx.ef_search)
    return Retrieved([Result(h[0], h[0]) for h in hits])


VARIANTS: dict[str, Callable[[RetrievalContext, str], Retrieved]] = {
    "bm25": full_text,
    "dense_raw": dense_raw,
}
