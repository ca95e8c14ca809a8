"""The reranker's features, computed here only, for training (rerank.pools) and serving (query.rerank) alike, from the
pool and tables loaded once (verse and chapter vectors, cross-references). A model trained on other FEATURES is refused."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import psycopg

from citebible_pipeline.bible.canon import chapter_base, split_id, verses_in_chapter_of
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.genre.tagger import GENRES
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.label_features import label_features
from citebible_pipeline.query.retrieve import Level, level

QUERY_FEATURES = ("q_pastoral", "q_theme_top", "q_words", "q_rewrites")
CANDIDATE_FEATURES = (
    "fused_rel", "fused_rank", "prior_rel", "prior_cover", "prior_sum", "prior_rank",
    "cos_q", "cos_q_best_verse", "cos_rw_max", "cos_rw_mean", "cos_rw_best_verse",
    "dense_lists", "dense_rank", "original_rank", "fulltext_rank", "label_rank", "variants",
    "is_verse", "is_range", "is_pericope", "is_chapter", "verses_log", "position", "genre_boost",
    "xref_pool_votes", "xref_pool_links", "xref_popularity", "label_cos_max", "label_cos_top3", "label_count",
    "label_share", "label_cos_rel", "label_near_rank", "rw_label_cos_max", "rw_label_count",
)
FEATURES: tuple[str, ...] = QUERY_FEATURES + CANDIDATE_FEATURES + tuple(f"genre_{g}" for g in GENRES)


@dataclass
class RerankQuery:
    """What the reranker knows of the query: the texts and vectors retrieval used, intent, the prior."""

    text: str
    vector: np.ndarray
    rewrite_vectors: np.ndarray  # (R, d), the step-back rewrites (may be empty)
    pastoral_score: float = 0.0
    theme_top: float = 0.0
    pastoral: bool = False
    prior: Mapping[tuple[int, int], float] = field(default_factory=dict)
    translation: str = DEFAULT_TRANSLATION  # whose verse vectors the features read
    label_spans: tuple | None = None  # query.labels.nearest: the nearest labels' passages (None: no label vectors)
    rewrite_label_spans: tuple | None = None  # the same, nearest to any step-back rewrite (None: none)


@dataclass
class PoolTables:
    """Loaded once per engine: verse vectors in id order, chapter vectors, cross-references by source."""

    verse_ids: np.ndarray  # sorted int64
    verse_vectors: np.ndarray  # float32 (n, d), unit length
    chapter_rows: dict[int, int]  # chapter id bbccc000 -> row in chapter_vectors
    chapter_vectors: np.ndarray
    xref_from: np.ndarray  # sorted
    xref_to: np.ndarray
    xref_votes: np.ndarray
    popularity: np.ndarray  # log1p of each verse's positive outgoing votes, aligned with verse_ids
    genre_boosts: dict[str, float]
    chapter_spans: np.ndarray | None = None  # (n, 2) first and last verse id of each chapter row (exact retrieval)

    def pins(self, q: np.ndarray, start: int, end: int, choose: Callable[[np.ndarray, np.ndarray], int] | None = None
             ) -> tuple[int | None, int | None]:
        """The verse of [start, end] nearest the query (what a passage is judged by) and the one `choose` (ids, cosines)
        picks, else the same (what present shows first), from one product; (None, None): no verse vectors there."""
        lo, hi = np.searchsorted(self.verse_ids, start), np.searchsorted(self.verse_ids, end, side="right")
        ids, sims = self.verse_ids[lo:hi], self.verse_vectors[lo:hi] @ q
        return (int(ids[np.argmax(sims)]), int(ids[choose(ids, sims) if choose else np.argmax(sims)])) if hi > lo else (None, None)

    @functools.cached_property
    def exact_levels(self) -> dict[str, Level]:
        """level -> its rows for `retrieve.exact_rows`: the rows the HNSW graphs index, made once per tables."""
        c = {} if self.chapter_spans is None else {"chapter": level(*self.chapter_spans.T, self.chapter_vectors)}
        return {"verse": level(self.verse_ids, self.verse_ids, self.verse_vectors), **c}


def _matrix(rows) -> tuple[np.ndarray, np.ndarray]:
    vecs = np.stack([np.asarray(r[1].to_numpy(), np.float32) for r in rows]) if rows else np.zeros((0, 1), np.float32)
    return np.fromiter((r[0] for r in rows), np.int64, len(rows)), vecs


def load_tables(conn: psycopg.Connection, space_id: int, genre_boosts: Mapping[str, float],
                translation: str = DEFAULT_TRANSLATION) -> PoolTables:
    verse_ids, verse_vectors = _matrix(conn.execute(
        "SELECT id, embedding FROM passage_embeddings WHERE space_id = %s AND level = 'verse' AND translation = %s"
        " ORDER BY id", (space_id, translation)).fetchall())
    chapters = conn.execute(
        "SELECT id, embedding, id + verse_start, id + verse_end FROM passage_embeddings WHERE space_id = %s"
        " AND level = 'chapter' AND translation = %s ORDER BY id", (space_id, translation)).fetchall()
    chapter_ids, chapter_vectors = _matrix(chapters)
    xr = np.array(conn.execute("SELECT from_id, to_start, votes FROM cross_references WHERE votes > 0"
                               " ORDER BY from_id, to_start").fetchall(), np.int64).reshape(-1, 3)
    out_votes, pos = np.zeros(len(verse_ids), np.float64), np.searchsorted(verse_ids, xr[:, 0])
    ok = (pos < len(verse_ids)) & (verse_ids[np.minimum(pos, len(verse_ids) - 1)] == xr[:, 0])
    np.add.at(out_votes, pos[ok], xr[ok, 2])
    return PoolTables(verse_ids, verse_vectors, {int(c): i for i, c in enumerate(chapter_ids)}, chapter_vectors,
                      xr[:, 0], xr[:, 1], xr[:, 2].astype(np.float64), np.log1p(out_votes), dict(genre_boosts),
                      np.array([(r[2], r[3]) for r in chapters], np.int64).reshape(-1, 2))


def _inv(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / rank


COL = {f: i for i, f in enumerate(FEATURES)}


def segments(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows lo[i]:hi[i] of every candidate, concatenated, and where each candidate's rows begin."""
    lens = hi - lo
    first = np.cumsum(lens) - lens
    return np.arange(lens.sum()) - np.repeat(first, lens) + np.repeat(lo, lens), first


def compute(t: PoolTables, q: RerankQuery, cands: Sequence[Candidate]) -> np.ndarray:
    """(len(cands), len(FEATURES)) float32, in FEATURES order; the pool order is the fused order. Array work over
    the whole pool at once (a loop per candidate was a quarter of a search)."""
    n = len(cands)
    X = np.zeros((n, len(FEATURES)), np.float32)
    if n == 0:
        return X
    col = COL
    rw = np.asarray(q.rewrite_vectors, np.float32).reshape(-1, len(q.vector))
    Q = np.vstack([q.vector[None, :].astype(np.float32), rw])  # row 0: the original
    X[:, col["q_pastoral"]] = q.pastoral_score
    X[:, col["q_theme_top"]] = q.theme_top
    X[:, col["q_words"]] = math.log1p(len(q.text.split()))
    X[:, col["q_rewrites"]] = len(rw)

    starts = np.fromiter((c.start for c in cands), np.int64, n)
    ends = np.fromiter((c.end for c in cands), np.int64, n)
    scores = np.fromiter((c.score for c in cands), np.float64, n)
    top_score = float(scores.max()) or 1.0
    prior_items = np.array([(s, e, w) for (s, e), w in q.prior.items()], np.float64).reshape(-1, 3)
    top_prior = float(prior_items[:, 2].max()) if len(prior_items) else 1.0
    if len(prior_items):
        overlap = (prior_items[None, :, 0] <= ends[:, None]) & (starts[:, None] <= prior_items[None, :, 1])
        weights = np.where(overlap, prior_items[None, :, 2], 0.0)
        X[:, col["prior_cover"]] = weights.max(axis=1) / top_prior
        X[:, col["prior_sum"]] = np.log1p(weights.sum(axis=1) / top_prior)
    X[:, col["fused_rel"]] = scores / top_score
    X[:, col["fused_rank"]] = np.log1p(np.arange(n))
    X[:, col["prior_rel"]] = np.fromiter((c.prior for c in cands), np.float64, n) / top_prior
    X[:, col["verses_log"]] = np.log1p(ends - starts + 1)
    _hit_features(X, cands)
    for i, c in enumerate(cands):
        X[i, col[f"is_{c.level}"]] = 1.0
        if c.level != "chapter":
            X[i, col["position"]] = (split_id(c.start)[2] - 1) / max(1, verses_in_chapter_of(c.start))
        X[i, col["genre_boost"]] = t.genre_boosts.get(c.genre or "", 1.0)
        if c.genre in GENRES:
            X[i, col[f"genre_{c.genre}"]] = 1.0
    _vector_features(t, Q, cands, starts, ends, X)
    _pool_links(t, starts, ends, X[:, col["xref_pool_votes"]], X[:, col["xref_pool_links"]])
    label_features(X, COL, q.label_spans, q.rewrite_label_spans, starts, ends)
    return X


def _hit_features(X: np.ndarray, cands: Sequence[Candidate]) -> None:
    """Each retriever's best rank (as 1/rank), how many dense lists and query variants found the candidate."""
    col = COL
    for i, c in enumerate(cands):
        best: dict[str, int] = {}
        dense = 0
        variants = set()
        for variant, retriever, _level, rank in c.hits:
            if rank < best.get(retriever, rank + 1):
                best[retriever] = rank
            variants.add(variant)
            if retriever == "dense":
                dense += 1
                if variant == "original":
                    X[i, col["original_rank"]] = max(X[i, col["original_rank"]], _inv(rank))
        X[i, col["prior_rank"]] = _inv(best.get("prior"))
        X[i, col["dense_lists"]] = dense
        X[i, col["dense_rank"]] = _inv(best.get("dense"))
        X[i, col["fulltext_rank"]] = _inv(best.get("fulltext"))
        X[i, col["label_rank"]] = _inv(best.get("labels"))
        X[i, col["variants"]] = len(variants)


def _vector_features(t: PoolTables, Q: np.ndarray, cands: Sequence[Candidate], starts: np.ndarray, ends: np.ndarray,
                     X: np.ndarray) -> None:
    """Similarities of the query (row 0 of Q) and its rewrites to each candidate's best verse and to its vector
    (a chapter's own, else the unit mean of its verses), and its most cross-referenced verse. A candidate's verses
    are a slice of the verse table (a view: gathering them into one array cost four times as much)."""
    col = COL
    lo = np.searchsorted(t.verse_ids, starts)
    hi = np.searchsorted(t.verse_ids, ends, side="right")
    best = np.zeros((len(cands), Q.shape[0]), np.float32)
    has = hi > lo  # a candidate with no verse vectors keeps zeros
    for i in np.flatnonzero(has):
        best[i] = (t.verse_vectors[lo[i]:hi[i]] @ Q.T).max(axis=0)
    cos = candidate_vectors(t, cands, lo, hi) @ Q.T
    X[has, col["cos_q_best_verse"]] = best[has, 0]
    X[has, col["cos_q"]] = cos[has, 0]
    if Q.shape[0] > 1:
        X[has, col["cos_rw_best_verse"]] = best[has, 1:].max(axis=1)
        X[has, col["cos_rw_max"]], X[has, col["cos_rw_mean"]] = cos[has, 1:].max(axis=1), cos[has, 1:].mean(axis=1)
    if has.any():
        rows, first = segments(lo[has], hi[has])
        X[has, col["xref_popularity"]] = np.maximum.reduceat(t.popularity[rows], first)


def verse_cosines(t: PoolTables, q: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """(starts, ends) -> the query's cosine to each span's best verse (0 for a span with no verse vectors): the
    product with the spans' verses only, then a segment maximum."""
    query = np.asarray(q, np.float32)

    def spans(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        lo = np.searchsorted(t.verse_ids, starts)
        hi = np.searchsorted(t.verse_ids, ends, side="right")
        out = np.zeros(len(starts), np.float32)
        has = hi > lo
        if has.any():
            rows, first = segments(lo[has], hi[has])
            out[has] = np.maximum.reduceat(t.verse_vectors[rows] @ query, first)
        return out

    return spans


def candidate_vectors(t: PoolTables, cands: Sequence[Candidate], lo: np.ndarray | None = None,
                      hi: np.ndarray | None = None) -> np.ndarray:
    """(len(cands), d) unit vectors: a chapter's own, else the unit mean of its verses' (a zero row: no verse
    vectors). `lo`, `hi`: each candidate's rows of the verse table, when the caller has them."""
    if lo is None or hi is None:
        lo = np.searchsorted(t.verse_ids, [c.start for c in cands])
        hi = np.searchsorted(t.verse_ids, [c.end for c in cands], side="right")
    vecs = np.zeros((len(cands), t.verse_vectors.shape[1]), np.float32)
    for i, c in enumerate(cands):
        if hi[i] <= lo[i]:
            continue
        row = t.chapter_rows.get(chapter_base(c.start)) if c.level == "chapter" else None
        if row is not None:
            vecs[i] = t.chapter_vectors[row]
        else:
            m = t.verse_vectors[lo[i]:hi[i]].sum(axis=0)  # the mean's direction; only the unit vector is used
            norm = math.sqrt(float(m @ m))
            vecs[i] = m / norm if norm > 0 else m
    return vecs


def _pool_links(t: PoolTables, starts: np.ndarray, ends: np.ndarray, votes_out: np.ndarray, links_out: np.ndarray) -> None:
    """Cross-reference votes between a candidate and the other candidates (both directions): passages
    the pool agrees on reinforce each other."""
    a = np.searchsorted(t.xref_from, starts)
    b = np.searchsorted(t.xref_from, ends, side="right")
    owners = np.repeat(np.arange(len(starts)), b - a)
    if len(owners) == 0:
        return
    rows, _ = segments(a, b)
    order = np.argsort(starts, kind="stable")
    sorted_starts = starts[order]
    target_pos = np.searchsorted(sorted_starts, t.xref_to[rows], side="right") - 1
    valid = target_pos >= 0
    target = np.where(valid, order[np.maximum(target_pos, 0)], -1)
    valid &= t.xref_to[rows] <= ends[np.maximum(target, 0)]
    valid &= target != owners
    votes = t.xref_votes[rows]
    n = len(starts)
    acc = np.zeros(n)
    np.add.at(acc, owners[valid], votes[valid])
    np.add.at(acc, target[valid], votes[valid])
    o, g = owners[valid], target[valid]
    pairs = np.unique(np.minimum(o, g) * n + np.maximum(o, g))  # each linked pair once, whichever way
    votes_out[:] = np.log1p(acc)
    links_out[:] = np.bincount(pairs // n, minlength=n) + np.bincount(pairs % n, minlength=n)
