"""The embedding stage as a function: documents in, only changed vectors computed, table updated."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import psycopg

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.embeddings.documents import (
    DERIVED,
    PassageDoc,
    VerseInput,
    build_documents,
    content_hash,
    pericope_documents,
)
from citebible_pipeline.embeddings.embedder import Embedder
from citebible_pipeline.embeddings.store import (
    LEVELS,
    activate,
    ensure_indexes,
    ensure_space,
    existing_hashes,
    write_passages,
)

log = logging.getLogger(__name__)
REINDEX_SHARE = 0.1  # rebuild a level's HNSW index when more than this share of its rows got new vectors


@dataclass
class BuildReport:
    space_id: int
    space_key: str
    verse_rows: int
    chapter_rows: int
    pericope_rows: int
    embedded_now: int
    texts_encoded: int
    reused: int
    removed: int
    written: int
    multi_window_chapters: int
    max_windows: int
    embed_seconds: float
    total_seconds: float
    indexes_created: list[str]
    spaces_dropped: int


def load_pericopes(conn: psycopg.Connection) -> list[tuple[int, int, str]]:
    if conn.execute("SELECT to_regclass('pericopes')").fetchone()[0] is None:
        return []
    return [tuple(r) for r in conn.execute("SELECT start_id, end_id, title FROM pericopes ORDER BY start_id")]


def derive_vectors(conn: psycopg.Connection, space_id: int, translation: str, docs: list[PassageDoc],
                   fresh: dict[tuple[str, int], np.ndarray]) -> dict[tuple[str, int], np.ndarray]:
    """A derived level's vector: the re-normalized mean of its verses' vectors (just encoded, or stored)."""
    if not docs:
        return {}
    verse_vecs = {vid: v for (level, vid), v in fresh.items() if level == "verse"}
    for vid, emb in conn.execute("SELECT id, embedding FROM passage_embeddings WHERE space_id = %s AND level = 'verse'"
                                 " AND translation = %s", (space_id, translation)):
        verse_vecs.setdefault(vid, np.asarray(emb.to_numpy(), np.float32))
    out = {}
    for d in docs:
        base = d.id // 1000 * 1000
        vs = [verse_vecs[v] for v in range(base + d.verse_start, base + d.verse_end + 1) if v in verse_vecs]
        if not vs:
            raise RuntimeError(f"{d.ref}: none of its verses has a vector to derive the {d.level} vector from")
        m = np.mean(vs, axis=0)
        out[(d.level, d.id)] = (m / np.linalg.norm(m)).astype(np.float32)
    return out


def load_inputs(conn: psycopg.Connection, translation: str = DEFAULT_TRANSLATION, books: Sequence[str] = ()
                ) -> tuple[list[VerseInput], dict[int, tuple[str, int, int]]]:
    """The translation's verses with their genres (only `books`, USFM codes, when given) and its chapters."""
    rows = conn.execute(
        "SELECT v.id, v.book_order, v.usfm_book, v.book_name, v.chapter, v.verse, v.verse_end, v.ref, v.testament,"
        " v.text, g.genre FROM verses v LEFT JOIN verse_genres g USING (translation, id)"
        " WHERE v.translation = %s AND (cardinality(%s::text[]) = 0 OR v.usfm_book = ANY(%s)) ORDER BY v.id",
        (translation, list(books), list(books))).fetchall()
    untagged = [r[7] for r in rows if r[10] is None]
    if untagged:
        raise RuntimeError(f"{len(untagged)} {translation} verses have no genre (e.g. {untagged[:3]}): materialize "
                           f"verse_genres for partition {translation} first")
    if not rows:
        raise RuntimeError(f"no {translation} verses{' in ' + ', '.join(books) if books else ''}: materialize "
                           f"bible_verses for partition {translation} first")
    chapters = {r[0]: (r[1], r[2], r[3]) for r in conn.execute(
        "SELECT id, ref, verse_start, verse_end FROM chapters WHERE translation = %s", (translation,))}
    return [VerseInput(*r) for r in rows], chapters


def embed_docs(embedder: Embedder, docs: list[PassageDoc], progress: Callable[[int, int], None] | None = None
               ) -> tuple[dict[tuple[str, int], np.ndarray], int]:
    """Vectors for `docs`: a verse is one text; a chapter is the re-normalized mean of its windows."""
    texts: list[str] = []
    starts: list[int] = []
    for d in docs:
        starts.append(len(texts))
        texts.extend(d.windows)
    vecs = embedder.encode_documents(texts, progress=progress)
    out: dict[tuple[str, int], np.ndarray] = {}
    for d, start in zip(docs, starts):
        v = vecs[start : start + len(d.windows)].mean(axis=0)
        out[(d.level, d.id)] = (v / np.linalg.norm(v)).astype(np.float32)
    return out, len(texts)


def build_passage_embeddings(conn: psycopg.Connection, embedder: Embedder, *, translation: str = DEFAULT_TRANSLATION,
                             books: Sequence[str] = (), chapter_vectors: str = "encode", pericope_vectors: str = "derive",
                             activate_space: bool = True, hnsw_m: int = 16, ef_construction: int = 200,
                             progress: Callable[[int, int], None] | None = None) -> BuildReport:
    """One translation's passages in the embedder's space. `chapter_vectors` / `pericope_vectors`: `encode`
    the level's text in windows or `derive` it from its verses' vectors. `activate_space`: make this space
    the one the query side reads (and drop the others); a second translation builds into the active one."""
    started = time.perf_counter()
    verses, chapters = load_inputs(conn, translation, books)
    space = embedder.space
    budget = embedder.window_budget()
    tokens = embedder.token_counts([v.text for v in verses])
    docs = build_documents(verses, tokens, budget, chapters, chapter_vectors)
    docs += pericope_documents(verses, load_pericopes(conn), pericope_vectors, {v.id: n for v, n in zip(verses, tokens)},
                               budget)
    space_id = ensure_space(conn, space)
    conn.commit()
    stored = existing_hashes(conn, space_id, translation)
    conn.commit()  # no transaction (and no table lock) stays open through the encoding
    hashes = {(d.level, d.id): content_hash(space.key, embedder.document_prefix, d) for d in docs}
    todo = [d for d in docs if stored.get((d.level, d.id)) != hashes[(d.level, d.id)]]
    log.info("%d passages, %d to embed, %d unchanged", len(docs), len(todo), len(docs) - len(todo))
    t0 = time.perf_counter()
    encode = [d for d in todo if d.windows[0] != DERIVED]
    vectors, n_texts = embed_docs(embedder, encode, progress) if encode else ({}, 0)
    vectors.update(derive_vectors(conn, space_id, translation, [d for d in todo if d.windows[0] == DERIVED], vectors))
    conn.commit()
    embed_s = time.perf_counter() - t0
    # The write commits before the index DDL starts: a transaction holding both its rows' lock and then
    # CREATE INDEX's share lock deadlocks with another partition doing the same (seen in CI).
    counts = write_passages(conn, space_id, translation, docs, hashes, vectors)
    # A level whose vectors were mostly rewritten gets its graph rebuilt: HNSW keeps the replaced
    # entries as dead nodes until a vacuum, and recall drifts after a bulk update.
    rebuilt = {lv for lv in LEVELS
               if sum(d.level == lv for d in todo) > REINDEX_SHARE * max(1, sum(d.level == lv for d in docs))}
    created = ensure_indexes(conn, space_id, space.dims, translation, hnsw_m, ef_construction, rebuild=rebuilt)
    dropped = activate(conn, space_id) if activate_space else 0
    chapter_docs = [d for d in docs if d.level == "chapter"]
    encoded_chapters = [d for d in chapter_docs if d.windows[0] != DERIVED]
    return BuildReport(
        space_id=space_id, space_key=space.key, verse_rows=sum(d.level == "verse" for d in docs), chapter_rows=len(chapter_docs),
        pericope_rows=sum(d.level == "pericope" for d in docs),
        embedded_now=len(todo), texts_encoded=n_texts, reused=len(docs) - len(todo), removed=counts["removed"],
        written=counts["written"], multi_window_chapters=sum(len(d.windows) > 1 for d in encoded_chapters),
        max_windows=max((len(d.windows) for d in encoded_chapters), default=0), embed_seconds=embed_s,
        total_seconds=time.perf_counter() - started, indexes_created=created, spaces_dropped=dropped,
    )
