"""The learned reranker's features: computed here only, for training (rerank.pools) and serving
(query.rerank) alike, from what the pool already holds plus tables loaded once (verse and chapter
vectors, cross-references). A model stores FEATURES; a model trained on another list is refused."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import psycopg

from citebible_pipeline.bible.canon import chapter_base, split_id, verses_in_chapter_of
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.genre.tagger import GENRES
from citebible_pipeline.query.fuse import Candidate

QUERY_FEATURES = ("q_pastoral", "q_theme_top", "q_words", "q_rewrites")
CANDIDATE_FEATURES = (
    "fused_rel", "fused_rank", "prior_rel", "prior_cover", "prior_sum", "prior_rank",
    "cos_q", "cos_q_best_verse", "cos_rw_max", "cos_rw_mean", "cos_rw_best_verse",
    "dense_lists", "dense_rank", "original_rank", "fulltext_rank", "label_rank", "variants",
    "is_verse", "is_range", "is_pericope", "is_chapter", "verses_log", "position", "genre_boost",
    "xref_pool_votes", "xref_pool_links", "xref_popularity",
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


def _matrix(rows) -> tuple[np.ndarray, np.ndarray]:
    ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    vecs = np.stack([np.asarray(r[1].to_numpy(), np.float32) for r in rows]) if rows else np.zeros((0, 1), np.float32)
    return ids, vecs


def load_tables(conn: psycopg.Connection, space_id: int, genre_boosts: Mapping[str, float],
                translation: str = DEFAULT_TRANSLATION) -> PoolTables:
    verse_ids, verse_vectors = _matrix(conn.execute(
        "SELECT id, embedding FROM passage_embeddings WHERE space_id = %s AND level = 'verse' AND translation = %s"
        " ORDER BY id", (space_id, translation)).fetchall())
    chapter_ids, chapter_vectors = _matrix(conn.execute(
        "SELECT id, embedding FROM passage_embeddings WHERE space_id = %s AND level = 'chapter' AND translation = %s"
        " ORDER BY id", (space_id, translation)).fetchall())
    xr = np.array(conn.execute("SELECT from_id, to_start, votes FROM cross_references WHERE votes > 0"
                               " ORDER BY from_id, to_start").fetchall(), np.int64).reshape(-1, 3)
    out_votes = np.zeros(len(verse_ids), np.float64)
    pos = np.searchsorted(verse_ids, xr[:, 0])
    ok = (pos < len(verse_ids)) & (verse_ids[np.minimum(pos, len(verse_ids) - 1)] == xr[:, 0])
    np.add.at(out_votes, pos[ok], xr[ok, 2])
    return PoolTables(verse_ids, verse_vectors, {int(c): i for i, c in enumerate(chapter_ids)}, chapter_vectors,
                      xr[:, 0], xr[:, 1], xr[:, 2].astype(np.float64), np.log1p(out_votes), dict(genre_boosts))


def _inv(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / rank


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def compute(t: PoolTables, q: RerankQuery, cands: Sequence[Candidate]) -> np.ndarray:
    """(len(cands), len(FEATURES)) float32, in FEATURES order; the pool order is the fused order."""
    n = len(cands)
    X = np.zeros((n, len(FEATURES)), np.float32)
    if n == 0:
        return X
    col = {f: i for i, f in enumerate(FEATURES)}
    rw = np.asarray(q.rewrite_vectors, np.float32).reshape(-1, len(q.vector))
    Q = np.vstack([q.vector[None, :].astype(np.float32), rw])  # row 0: the original
    X[:, col["q_pastoral"]] = q.pastoral_score
    X[:, col["q_theme_top"]] = q.theme_top
    X[:, col["q_words"]] = math.log1p(len(q.text.split()))
    X[:, col["q_rewrites"]] = len(rw)

    starts = np.array([c.start for c in cands], np.int64)
    ends = np.array([c.end for c in cands], np.int64)
    top_score = max(c.score for c in cands) or 1.0
    prior_items = np.array([(s, e, w) for (s, e), w in q.prior.items()], np.float64).reshape(-1, 3)
    top_prior = float(prior_items[:, 2].max()) if len(prior_items) else 1.0
    if len(prior_items):
        overlap = (prior_items[None, :, 0] <= ends[:, None]) & (starts[:, None] <= prior_items[None, :, 1])
        weights = np.where(overlap, prior_items[None, :, 2], 0.0)
        X[:, col["prior_cover"]] = weights.max(axis=1) / top_prior
        X[:, col["prior_sum"]] = np.log1p(weights.sum(axis=1) / top_prior)

    lo = np.searchsorted(t.verse_ids, starts)
    hi = np.searchsorted(t.verse_ids, ends, side="right")
    for i, c in enumerate(cands):
        X[i, col["fused_rel"]] = c.score / top_score
        X[i, col["fused_rank"]] = math.log1p(i)
        X[i, col["prior_rel"]] = c.prior / top_prior
        ranks: dict[str, list[int]] = {}
        variants = set()
        for variant, retriever, _level, rank in c.hits:
            ranks.setdefault(retriever, []).append(rank)
            variants.add(variant)
            if retriever == "dense" and variant == "original":
                X[i, col["original_rank"]] = max(X[i, col["original_rank"]], _inv(rank))
        X[i, col["prior_rank"]] = _inv(min(ranks.get("prior", []), default=None))
        X[i, col["dense_lists"]] = len(ranks.get("dense", []))
        X[i, col["dense_rank"]] = _inv(min(ranks.get("dense", []), default=None))
        X[i, col["fulltext_rank"]] = _inv(min(ranks.get("fulltext", []), default=None))
        X[i, col["label_rank"]] = _inv(min(ranks.get("labels", []), default=None))
        X[i, col["variants"]] = len(variants)
        X[i, col[f"is_{c.level}"]] = 1.0
        X[i, col["verses_log"]] = math.log1p(c.end - c.start + 1)
        if c.level != "chapter":
            X[i, col["position"]] = (split_id(c.start)[2] - 1) / max(1, verses_in_chapter_of(c.start))
        X[i, col["genre_boost"]] = t.genre_boosts.get(c.genre or "", 1.0)
        if c.genre in GENRES:
            X[i, col[f"genre_{c.genre}"]] = 1.0
        block = t.verse_vectors[lo[i]:hi[i]]
        if len(block) == 0:
            continue
        sims = block @ Q.T  # (verses, 1 + R)
        X[i, col["cos_q_best_verse"]] = sims[:, 0].max()
        if len(rw):
            X[i, col["cos_rw_best_verse"]] = sims[:, 1:].max()
        row = t.chapter_rows.get(chapter_base(c.start)) if c.level == "chapter" else None
        vec = t.chapter_vectors[row] if row is not None else _unit(block.mean(axis=0))
        cos = Q @ vec
        X[i, col["cos_q"]] = cos[0]
        if len(rw):
            X[i, col["cos_rw_max"]], X[i, col["cos_rw_mean"]] = cos[1:].max(), cos[1:].mean()
        X[i, col["xref_popularity"]] = t.popularity[lo[i]:hi[i]].max()
    _pool_links(t, starts, ends, X[:, col["xref_pool_votes"]], X[:, col["xref_pool_links"]])
    return X


def _pool_links(t: PoolTables, starts: np.ndarray, ends: np.ndarray, votes_out: np.ndarray, links_out: np.ndarray) -> None:
    """Cross-reference votes between a candidate and the other candidates (both directions): passages
    the pool agrees on reinforce each other."""
    a = np.searchsorted(t.xref_from, starts)
    b = np.searchsorted(t.xref_from, ends, side="right")
    owners = np.repeat(np.arange(len(starts)), b - a)
    if len(owners) == 0:
        return
    rows = np.concatenate([np.arange(x, y) for x, y in zip(a, b)])
    order = np.argsort(starts, kind="stable")
    sorted_starts = starts[order]
    target_pos = np.searchsorted(sorted_starts, t.xref_to[rows], side="right") - 1
    valid = target_pos >= 0
    target = np.where(valid, order[np.maximum(target_pos, 0)], -1)
    valid &= t.xref_to[rows] <= ends[np.maximum(target, 0)]
    valid &= target != owners
    votes = t.xref_votes[rows]
    acc = np.zeros(len(starts))
    np.add.at(acc, owners[valid], votes[valid])
    np.add.at(acc, target[valid], votes[valid])
    pairs = {(int(min(o, g)), int(max(o, g))) for o, g in zip(owners[valid], target[valid])}
    cnt = np.zeros(len(starts))
    for x, y in pairs:
        cnt[x] += 1
        cnt[y] += 1
    votes_out[:] = np.log1p(acc)
    links_out[:] = cnt
