"""Everything the engine reads at start-up, in one place and one immutable value: every SQL statement the
engine runs before its first search lives here.

Per-translation state, stated once: genres, chapter genres, the Bible-vocabulary lexicon, the relevance
floor and the pericope titles are the WEB's (DEFAULT_TRANSLATION) and serve every translation, because they
are keyed by the shared verse ids; the vectors, texts and the reranker's pool tables are per translation
(retrieval and display read the searched translation's rows, `Engine.pool_tables(translation)`).
"""

from __future__ import annotations

import bisect
import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.embeddings.embedder import check_space
from citebible_pipeline.embeddings.store import active_space
from citebible_pipeline.query.floor import Floor, lexicon
from citebible_pipeline.query.harm import LIKELY, Voices
from citebible_pipeline.voice.model import DIRECTIVE, GRAVE, HARSH
from citebible_pipeline.query.labels import EMPTY, LabelIndex, build_index
from citebible_pipeline.query.models import EngineNotReady
from citebible_pipeline.query.promises import promised
from citebible_pipeline.query.retrieve import common_lexemes
from citebible_pipeline.query.route import SplitKeys, ThemeIndex, specificity

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pericopes:
    """start id -> (end id, title) of each pericope-level row; empty before pericopes exist."""

    spans: dict[int, tuple[int, str]]
    starts: tuple[int, ...]

    def of(self, vid: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self.starts, vid) - 1
        if i < 0:
            return None
        start = self.starts[i]
        end = self.spans[start][0]
        return (start, end) if vid <= end else None

    def title(self, start: int, end: int, level: str) -> str | None:
        """A pericope's heading, for a pericope result or any result that is exactly one (Psalm 23)."""
        p = self.spans.get(start)
        return p[1] if p is not None and (level == "pericope" or p[0] == end) else None


@dataclass(frozen=True)
class EngineData:
    space_id: int
    dims: int
    themes: ThemeIndex
    labels: LabelIndex  # document expansion: the passages' training-side labels (query.labels)
    genres: dict[int, str]  # verse id -> genre (WEB)
    chapter_genres: dict[int, str]  # a chapter result's start id -> genre (WEB)
    boosts: dict[str, float]
    lexicon: frozenset[str]
    floor: Floor | None
    common: tuple[str, ...]  # lexemes too common for full text
    pericopes: Pericopes
    translations: frozenset[str]
    voices: Voices  # what each verse does (passage_voice), for the harm stage


def load(conn, space, encode_queries: Callable[[list[str]], np.ndarray]) -> EngineData:
    """`space` is the embedder's; the index's active space must be the same one. Runs in one transaction
    without the pool's per-statement timeout (start-up reads whole tables once)."""
    conn.execute("SET LOCAL statement_timeout = 0")
    active = active_space(conn)
    if active is None:
        raise EngineNotReady("no active embedding space: materialize passage_embeddings first")
    space_id, stored = active
    check_space(stored, space)
    genres = dict(conn.execute("SELECT id, genre FROM verse_genres WHERE translation = %s", (DEFAULT_TRANSLATION,)))
    # a chapter row's id is bbccc000; its results start at verse_start (SQL does the id arithmetic here)
    chapter_genres = dict(conn.execute(
        "SELECT id / 1000 * 1000 + verse_start, genre FROM passage_embeddings WHERE space_id = %s AND level = 'chapter'"
        " AND translation = %s", (space_id, DEFAULT_TRANSLATION)))
    return EngineData(
        space_id=space_id, dims=stored.dims, themes=load_themes(conn, space_id, encode_queries), labels=load_labels(conn, space_id), genres=genres,
        chapter_genres=chapter_genres,
        boosts={g: float(w) for g, w in conn.execute("SELECT genre, weight FROM genre_boosts")},
        lexicon=lexicon(r[0] for r in conn.execute("SELECT text FROM verses WHERE translation = %s", (DEFAULT_TRANSLATION,))),
        floor=load_floor(conn, space_id), common=tuple(common_lexemes(conn, space_id)),
        pericopes=load_pericopes(conn, space_id),
        translations=frozenset(r[0] for r in conn.execute(
            "SELECT DISTINCT translation FROM passage_embeddings WHERE space_id = %s AND level = 'verse'", (space_id,))),
        voices=load_voices(conn),
    )


def load_themes(conn, space_id: int, encode_queries: Callable[[list[str]], np.ndarray]) -> ThemeIndex:
    meta = conn.execute("SELECT id, kind, key, name, rewrite, split_key FROM query_themes ORDER BY id").fetchall()
    cues = conn.execute("SELECT theme_id, embedding FROM theme_cues WHERE space_id = %s ORDER BY theme_id, cue",
                        (space_id,)).fetchall()
    if not meta or not cues:
        raise EngineNotReady("the theme vocabulary is missing for the active embedding space: materialize query_themes")
    row_of = {tid: i for i, (tid, *_rest) in enumerate(meta)}
    theme_rows = np.array([row_of[t] for t, _ in cues])
    if len(set(theme_rows.tolist())) != len(meta):
        raise EngineNotReady("some themes have no cue vectors: materialize query_themes again")
    vectors = np.stack([np.asarray(v.to_numpy(), np.float32) for _, v in cues])
    starts = np.flatnonzero(np.r_[True, theme_rows[1:] != theme_rows[:-1]])
    passages: list[list] = [[[], [], []] for _ in meta]
    for tid, s, e, w in conn.execute("SELECT theme_id, start_id, end_id, weight FROM theme_passages"):
        p = passages[row_of[tid]]
        p[0].append(s), p[1].append(e), p[2].append(w)
    kinds = [m[1] for m in meta]
    rewrite_vectors = vectors[starts].copy()  # a topic's rewrite is its name, its only cue
    pastoral = [i for i, k in enumerate(kinds) if k == "pastoral"]
    if pastoral:
        rewrite_vectors[pastoral] = encode_queries([meta[i][4] for i in pastoral])
    arrays = [(np.array(a, np.int64), np.array(b, np.int64), np.array(c, np.float64)) for a, b, c in passages]
    avoid = _spans(conn.execute("SELECT theme_id, start_id, end_id FROM theme_avoid ORDER BY theme_id, start_id"))
    return ThemeIndex(
        keys=[m[2] for m in meta], kinds=kinds, names=[m[3] for m in meta], rewrites=[m[4] for m in meta],
        split_keys=SplitKeys(m[5] for m in meta), cue_vectors=vectors, cue_starts=starts, rewrite_vectors=rewrite_vectors,
        passages=arrays, specificity=specificity(arrays, layers=kinds),
        avoid={row_of[tid]: spans for tid, spans in avoid.items()}, **_situations(conn, space_id),
    )


def _spans(rows) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """(owner, start, end) rows, in order -> owner -> (starts, ends): the wounding spans as harm.wounds reads them."""
    grouped: dict[int, list[tuple[int, int]]] = {}
    for owner, start, end in rows:
        grouped.setdefault(owner, []).append((start, end))
    return {k: (np.array([a for a, _ in v], np.int64), np.array([b for _, b in v], np.int64)) for k, v in grouped.items()}


def _situations(conn, space_id: int) -> dict:
    """ThemeIndex's situation fields (themes/situations.py): the judged sentences' vectors in `space_id` and each one's
    wounding spans; none (the stage reads the needs' lists alone) before query_themes wrote them."""
    if not conn.execute("SELECT to_regclass('situation_vectors')").fetchone()[0]:
        return {}
    rows = conn.execute("SELECT situation_id, embedding FROM situation_vectors WHERE space_id = %s ORDER BY situation_id",
                        (space_id,)).fetchall()
    spans = _spans(conn.execute("SELECT situation_id, start_id, end_id FROM situation_avoid ORDER BY situation_id, start_id"))
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return {"situation_vectors": np.stack([np.asarray(v.to_numpy(), np.float32) for _, v in rows]) if rows else None,
            "situation_avoid": [spans.get(i, none) for i, _ in rows]}


def load_voices(conn) -> Voices:
    """Whether each verse wounds a sufferer or a doer (harm.Voices) and what its WEB text promises (query.promises);
    none (with a warning) before passage_voice is materialized: the harm stage then reads the needs' avoid lists alone."""
    rows = conn.execute(
        "SELECT p.id, CASE WHEN hand IS NULL THEN harsh >= %(p)s OR voice = ANY(%(h)s)"
        " ELSE hand = ANY(%(h)s) OR hand_also = ANY(%(h)s) END,"
        " CASE WHEN hand IS NULL THEN grave >= %(p)s OR voice = ANY(%(g)s)"
        " ELSE hand = ANY(%(g)s) OR hand_also = ANY(%(g)s) END,"
        " CASE WHEN hand IS NULL THEN orders ELSE hand = ANY(%(d)s) END, v.text"
        " FROM passage_voice p LEFT JOIN verses v ON v.id = p.id AND v.translation = %(t)s ORDER BY p.id",
        {"p": LIKELY, "h": list(HARSH), "g": list(GRAVE), "d": list(DIRECTIVE), "t": DEFAULT_TRANSLATION}).fetchall() \
        if conn.execute("SELECT to_regclass('passage_voice')").fetchone()[0] else []
    if not rows:
        log.warning("no passage voices: materialize passage_voice (the harm stage reads only the avoid lists until then)")
    return Voices(np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], bool),
                  np.array([r[2] for r in rows], bool), np.array([r[3] for r in rows], bool), promised([r[4] for r in rows]))


def load_labels(conn, space_id: int | None = None) -> LabelIndex:
    """The label index; empty (no document expansion, with a warning) before query_themes wrote labels. Its vectors
    come from label_vectors in `space_id`; none there (a vocabulary built before them) leaves the label features at 0."""
    rows = conn.execute("SELECT label_id, label, split_key, start_id, end_id, weight FROM passage_labels"
                        " ORDER BY label_id, start_id, end_id").fetchall() \
        if conn.execute("SELECT to_regclass('passage_labels')").fetchone()[0] else []
    if not rows:
        log.warning("no passage labels: materialize query_themes (document expansion is off until then)")
        return EMPTY
    ids = list(dict.fromkeys(r[0] for r in rows))
    stored = {}
    if space_id is not None and conn.execute("SELECT to_regclass('label_vectors')").fetchone()[0]:
        stored = dict(conn.cursor(binary=True).execute(  # binary: ten times faster than the vectors' text form
            "SELECT label_id, embedding FROM label_vectors WHERE space_id = %s", (space_id,)).fetchall())
    vectors = None
    if stored and all(i in stored for i in ids):
        vectors = np.stack([np.asarray(stored[i].to_numpy(), np.float32) for i in ids])
    else:
        log.warning("no label vectors in this space for %d of %d labels: materialize query_themes (the reranker's "
                    "label features stay 0 until then)", sum(i not in stored for i in ids), len(ids))
    return build_index(rows, vectors=vectors)


def load_pericopes(conn, space_id: int) -> Pericopes:
    rows = conn.execute(
        "SELECT e.id, e.id / 1000 * 1000 + e.verse_end, p.title FROM passage_embeddings e JOIN pericopes p"
        " ON e.id BETWEEN p.start_id AND p.end_id WHERE e.space_id = %s AND e.level = 'pericope' AND e.translation = %s"
        " ORDER BY e.id", (space_id, DEFAULT_TRANSLATION)).fetchall() \
        if conn.execute("SELECT to_regclass('pericopes')").fetchone()[0] else []
    spans = {r[0]: (r[1], r[2]) for r in rows}
    return Pericopes(spans, tuple(sorted(spans)))


def load_floor(conn, space_id: int) -> Floor | None:
    row = conn.execute("SELECT features, coef, intercept, threshold FROM abstention_floors"
                       " WHERE is_active AND space_id = %s", (space_id,)).fetchone()
    if row is None:
        log.warning("no calibrated abstention floor for this space: materialize abstention_floor")
        return None
    return Floor(tuple(row[0]), np.array(row[1], np.float64), float(row[2]), float(row[3]))
