"""The Engine: loads the models, the theme vocabulary and a connection pool once, then wires the pure
stages (analyze -> route/rewrite -> retrieve -> fuse -> expand -> merge -> rerank -> boost -> floor ->
display). Safe to share across threads: the pool hands each search its own connection."""

from __future__ import annotations

import bisect
import logging
import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from citebible_pipeline.bible.canon import by_order, split_id
from citebible_pipeline.bible.references import format_range, parse_reference
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db.connection import database_url, get_pool
from citebible_pipeline.embeddings.embedder import Embedder, check_space
from citebible_pipeline.embeddings.store import active_space
from citebible_pipeline.query import display as disp
from citebible_pipeline.query.analyze import analyze, validate
from citebible_pipeline.query.boost import final_scores
from citebible_pipeline.query.floor import Floor, lexicon, lexicon_coverage
from citebible_pipeline.query.fuse import Candidate, RankedList, fuse
from citebible_pipeline.query.merge import merge
from citebible_pipeline.query.models import (
    Analysis,
    EngineNotReady,
    Hit,
    QueryValidationError,
    Related,
    Result,
    Rewrite,
    SearchOptions,
    SearchResponse,
    VerseText,
)
from citebible_pipeline.query.features import PoolTables, RerankQuery, load_tables
from citebible_pipeline.query.rerank import KINDS, CrossEncoderReranker, Reranker, RerankerError, choice, fetch_row, load_row
from citebible_pipeline.query.retrieve import DenseQuery, common_lexemes, cross_references, retrieve, verse_rows
from citebible_pipeline.query.rewrite import LLMConfig, rewrites
from citebible_pipeline.query.route import ThemeIndex, clauses, prior_scores, route

log = logging.getLogger(__name__)
CHAPTER_WEIGHT = 0.8  # 2.0 on pastoral intent lowered the training-side pastoral dev set (0.425 vs 0.481)
PERICOPE_WEIGHT = 0.8  # like a chapter: a container list beside the verse list of the same variant
FULLTEXT_WEIGHT = 0.5
PRIOR_LIST_WEIGHT = 2.0
CROSSREF_WEIGHT = 0.3
CONTEXT = 2


@dataclass
class Ranked:
    """What ranking produced, before display (the evaluation stops here)."""

    analysis: Analysis
    query_vector: np.ndarray | None
    rewrites: list[Rewrite]
    candidates: list[Candidate]
    abstained: bool = False
    reason: str | None = None
    signals: dict[str, float] = field(default_factory=dict)
    terms: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=dict)


class Engine:
    def __init__(self, url: str | None = None, *, embedder: Embedder | None = None, reranker: Reranker | str | None = "env",
                 llm: LLMConfig | None | str = "env", pool_size: int = 8, pool_timeout: float = 3.0) -> None:
        """reranker: a Reranker, None (fused order), or a name for rerank.choice ("env": CITEBIBLE_RERANKER)."""
        started = time.perf_counter()
        self.url = url or database_url()
        self.embedder = embedder or Embedder()
        self._tables: dict[str, PoolTables] = {}
        self.llm = LLMConfig.from_env() if llm == "env" else llm
        self._encode_lock = threading.Lock()
        # a short wait for a connection: a caller (the API) answers 503 quickly while the database is down
        self.pool = get_pool(self.url, min_size=1, max_size=pool_size, timeout=pool_timeout)
        with self.pool.connection() as conn:
            active = active_space(conn)
            if active is None:
                raise EngineNotReady("no active embedding space: materialize passage_embeddings first")
            self.space_id, space = active
            check_space(space, self.embedder.space)
            self.dims = space.dims
            self.themes = self._load_themes(conn)
            self.genres = dict(conn.execute("SELECT id, genre FROM verse_genres WHERE translation = %s",
                                            (DEFAULT_TRANSLATION,)).fetchall())
            self.chapter_genres = dict(conn.execute(
                "SELECT id / 1000 * 1000 + verse_start, genre FROM passage_embeddings WHERE space_id = %s AND level = 'chapter'"
                " AND translation = %s",
                (self.space_id, DEFAULT_TRANSLATION)).fetchall())
            self.boosts = {g: float(w) for g, w in conn.execute("SELECT genre, weight FROM genre_boosts")}
            self.lexicon = lexicon(r[0] for r in conn.execute("SELECT text FROM verses WHERE translation = %s",
                                                                    (DEFAULT_TRANSLATION,)))
            self.floor = self._load_floor(conn)
            self.common = common_lexemes(conn, self.space_id)
            self.pericopes = self._load_pericopes(conn)
            self.translations = {r[0] for r in conn.execute(
                "SELECT DISTINCT translation FROM passage_embeddings WHERE space_id = %s AND level = 'verse'",
                (self.space_id,))}
            self._pericope_starts = sorted(self.pericopes)
            self.reranker = self._load_reranker(conn, reranker) if isinstance(reranker, str) else reranker
        self.load_seconds = time.perf_counter() - started
        log.info("engine ready in %.1fs: %d themes, floor %s, reranker %s", self.load_seconds, len(self.themes.keys),
                 "calibrated" if self.floor else "missing (never abstains)",
                 "none" if self.reranker is None else f"{self.reranker.kind} {self.reranker.model_id or ''}".strip())

    # -- loading -------------------------------------------------------------------------------------
    def _load_themes(self, conn) -> ThemeIndex:
        meta = conn.execute("SELECT id, kind, key, name, rewrite, split_key FROM query_themes ORDER BY id").fetchall()
        cues = conn.execute("SELECT theme_id, embedding FROM theme_cues WHERE space_id = %s ORDER BY theme_id, cue",
                            (self.space_id,)).fetchall()
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
            rewrite_vectors[pastoral] = self.embedder.encode_queries([meta[i][4] for i in pastoral])
        return ThemeIndex(
            keys=[m[2] for m in meta], kinds=kinds, names=[m[3] for m in meta], rewrites=[m[4] for m in meta],
            split_keys=[m[5] for m in meta], cue_vectors=vectors, cue_starts=starts, rewrite_vectors=rewrite_vectors,
            passages=[(np.array(a, np.int64), np.array(b, np.int64), np.array(c, np.float64)) for a, b, c in passages],
        )

    def _load_pericopes(self, conn) -> dict[int, tuple[int, str]]:
        """start id -> (end id, title) of each pericope-level row; empty (level off) before pericopes exist."""
        rows = conn.execute(
            "SELECT e.id, e.id / 1000 * 1000 + e.verse_end, p.title FROM passage_embeddings e JOIN pericopes p"
            " ON e.id BETWEEN p.start_id AND p.end_id WHERE e.space_id = %s AND e.level = 'pericope' AND e.translation = %s"
            " ORDER BY e.id",
            (self.space_id, DEFAULT_TRANSLATION)).fetchall() if conn.execute("SELECT to_regclass('pericopes')").fetchone()[0] else []
        return {r[0]: (r[1], r[2]) for r in rows}

    def pericope_of(self, vid: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self._pericope_starts, vid) - 1
        if i < 0:
            return None
        start = self._pericope_starts[i]
        end = self.pericopes[start][0]
        return (start, end) if vid <= end else None

    def _title(self, c: Candidate) -> str | None:
        """A pericope's heading, for a pericope result or any result that is exactly one (Psalm 23)."""
        p = self.pericopes.get(c.start)
        return p[1] if p is not None and (c.level == "pericope" or p[0] == c.end) else None

    def pool_tables(self, conn=None, translation: str = DEFAULT_TRANSLATION) -> PoolTables:
        """Verse/chapter vectors and cross-references for the feature reranker, loaded on first use (per
        translation: a second one costs its vectors only when it is first searched)."""
        if translation not in self._tables:
            if conn is None:
                with self.pool.connection() as c:
                    return self.pool_tables(c, translation)
            self._tables[translation] = load_tables(conn, self.space_id, self.boosts, translation)
        return self._tables[translation]

    def _load_reranker(self, conn, name: str) -> Reranker | None:
        """The stored model of the chosen kind; none stored yet serves the fused order (with a warning), a
        stored one that cannot serve (corrupt, other feature list) refuses to start the engine."""
        which = choice(None if name == "env" else name)
        if which == "none":
            return None
        if which not in KINDS:
            return CrossEncoderReranker(which)
        row = fetch_row(conn, kind=which)
        if row is None:
            log.warning("no active %s reranker: materialize %s (serving the fused order)", which,
                        "reranker_model" if which == "features" else "reranker_cross_encoder")
            return None
        return self._from_row(conn, row)

    def _from_row(self, conn, row: tuple) -> Reranker:
        """load_row with the pool tables a feature model needs (loaded once, only for one)."""
        return load_row(row, self.pool_tables(conn) if row[1] == "features" else None)

    def reload_reranker(self) -> bool:
        """Swap in the kind's active model; one that fails to load leaves the current one serving."""
        if self.reranker is None or self.reranker.kind not in KINDS:
            return False
        try:
            with self.pool.connection() as conn:
                row = fetch_row(conn, kind=self.reranker.kind)
                if row is None or row[0] == self.reranker.model_id:
                    return False
                fresh = self._from_row(conn, row)
        except RerankerError as exc:
            log.error("reranker reload failed, model %s keeps serving: %s", self.reranker.model_id, exc)
            return False
        self.reranker = fresh
        return True

    def _load_floor(self, conn) -> Floor | None:
        row = conn.execute("SELECT features, coef, intercept, threshold FROM abstention_floors"
                           " WHERE is_active AND space_id = %s", (self.space_id,)).fetchone()
        if row is None:
            log.warning("no calibrated abstention floor for this space: materialize abstention_floor")
            return None
        return Floor(tuple(row[0]), np.array(row[1], np.float64), float(row[2]), float(row[3]))

    def encode(self, texts: list[str]) -> np.ndarray:
        with self._encode_lock:  # one forward pass at a time; torch uses both cores for it
            return self.embedder.encode_queries(texts)

    # -- ranking -------------------------------------------------------------------------------------
    def rank(self, text: str, options: SearchOptions | None = None, *, exclude: frozenset[str] = frozenset(),
             query_vector: np.ndarray | None = None, reranker: Reranker | None | str = "engine") -> Ranked:
        """Every stage up to the final order; `exclude` leaves themes out by split key (calibration,
        training); `reranker` overrides the engine's (training records the pool through it)."""
        o = options or SearchOptions()
        if o.translation not in self.translations:
            raise QueryValidationError(f"translation {o.translation!r} is not in the index (built: "
                                       f"{', '.join(sorted(self.translations))}); materialize its passage_embeddings partition")
        reranker = self.reranker if reranker == "engine" else reranker
        t = {}
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            t[name] = round((now - clock) * 1000, 2)
            clock = now

        clean = validate(text)
        analysis = analyze(clean)
        lap("analyze")
        if analysis.query_type == "reference":
            return Ranked(analysis, None, [], [], abstained=analysis.reference_error is not None,
                          reason=analysis.reference_error, timings=t)
        parts = clauses(clean)
        if query_vector is None:
            vecs = self.encode([clean, *parts])
        else:
            vecs = np.vstack([query_vector, self.encode(parts)]) if parts else query_vector[None, :]
        q = vecs[0]
        lap("embed")
        routed = route(self.themes, vecs, analysis.pastoral, exclude=exclude)
        variants, note = rewrites(self.themes, routed, clean, o.max_rewrites if o.rewrite else 0, self.llm)
        llm_texts = [rw.text for rw, theme in variants[1:] if theme < 0]
        llm_vecs = iter(self.encode(llm_texts)) if llm_texts else iter(())
        vectors = [q] + [self.themes.rewrite_vectors[theme] if theme >= 0 else next(llm_vecs) for _, theme in variants[1:]]
        prior = prior_scores(self.themes, routed) if o.prior else {}
        lap("rewrite")

        levels = ["verse"] + (["chapter"] if o.chapters else []) + (["pericope"] if o.pericopes and self.pericopes else [])
        dense = [DenseQuery(i, lv, v) for i, v in enumerate(vectors) for lv in levels] if o.dense else []
        if o.floor and not o.chapters and o.dense:
            dense.append(DenseQuery(0, "chapter", q))  # the floor reads the original's chapter similarity
        with self.pool.connection() as conn:
            rows = retrieve(conn, self.space_id, self.dims, dense, o.dense_k, o.ef_search,
                            clean if o.hybrid or o.floor else None, translation=o.translation, common=self.common)
            lap("retrieve")
            # the floor needs only what retrieval saw: decide before fusing a pool nobody will read
            signals = self._signals(rows, routed, analysis)
            signals["lexicon"] = lexicon_coverage(clean, self.lexicon)
            if o.floor and o.dense and self.floor is not None and self.floor.abstains(signals):
                lap("floor")
                reason = ("nothing in the Bible index fits this question closely enough "
                          f"(relevance {self.floor.probability(signals):.2f} below the floor {self.floor.threshold:.2f})")
                return Ranked(analysis, q, [rw for rw, _ in variants], [], True, reason, signals, set(), t)
            lap("floor")
            lists = self._lists(rows, variants, o)
            if prior:
                ranked_prior = sorted(prior.items(), key=lambda kv: (-kv[1], kv[0]))[: o.pool]
                lists.append(RankedList("prior", "prior", "passage", PRIOR_LIST_WEIGHT,
                                        [(s, e, "range" if e > s else "verse", w) for (s, e), w in ranked_prior]))
            cands = self._tag(fuse(lists, prior=prior)[: o.pool])
            lap("fuse")
            if o.expand and cands:
                cands = self._expand(conn, cands, lists, prior, o)
            lap("expand")
        if o.merge:
            cands = merge(cands, lambda cid: by_order(cid // 1_000_000).verses_in(cid // 1000 % 1000), o.collapse_ratio,
                          self.pericope_of if o.pericopes and self.pericopes else None)
        lap("merge")
        learned = False
        if o.rerank and reranker is not None:
            rq = RerankQuery(clean, q, np.asarray(vectors[1:], np.float32).reshape(-1, len(q)), analysis.pastoral_score,
                             signals.get("theme", 0.0), analysis.pastoral, prior, o.translation)
            cands = reranker.rerank(self, rq, cands)
            learned = reranker.learned
        lap("rerank")
        cands = self.boost(cands, o, learned=learned, pastoral=analysis.pastoral, testament=analysis.testament)
        lap("boost")
        shown = [rw for rw, _ in variants]
        stems = disp.terms([clean] + [rw.text for rw in shown[1:] if rw.source != "llm"])
        return Ranked(analysis, q, shown, cands, False, note, signals, stems, t)

    def boost(self, cands: list[Candidate], o: SearchOptions, *, learned: bool, pastoral: bool,
              testament: str | None) -> list[Candidate]:
        """Stage 8 (also how training measures a reranker as served): the prior is added only where no
        learned reranker already weighed it; the genre boost only on pastoral intent."""
        return final_scores(cands, use_prior=o.prior and not learned, genre_boosts=self.boosts if (o.boost and pastoral) else None,
                            testament=testament if o.boost else None,
                            testament_of=lambda vid: by_order(vid // 1_000_000).testament)

    def _lists(self, rows, variants, o: SearchOptions) -> list[RankedList]:
        grouped: dict[tuple[int, str, str], list] = {}
        for v, retriever, level, s, e, sim in rows:
            grouped.setdefault((v, retriever, level), []).append((s, e, level, sim))
        out = []
        for (v, retriever, level), items in grouped.items():
            if retriever == "fulltext":
                if not o.hybrid:
                    continue
                weight = FULLTEXT_WEIGHT
            else:
                if (level == "chapter" and not o.chapters) or (level == "pericope" and not o.pericopes):
                    continue
                weight = variants[v][0].weight * {"chapter": CHAPTER_WEIGHT, "pericope": PERICOPE_WEIGHT}.get(level, 1.0)
            items.sort(key=lambda x: (-x[3], x[0]))
            out.append(RankedList(variants[v][0].source if v else "original", retriever, level, weight, items))
        return out

    def _expand(self, conn, cands, lists, prior, o: SearchOptions) -> list[Candidate]:
        top = [c for c in cands[:10] if c.level != "chapter"]
        refs = cross_references(conn, [(c.start, c.end) for c in top], per_span=3, min_votes=10)
        items = [(s, e, "range" if e > s else "verse", float(v)) for _, s, e, v in sorted(refs, key=lambda r: -r[3])]
        if not items:
            return cands
        lists = [*lists, RankedList("crossref", "crossref", "verse", CROSSREF_WEIGHT, items)]
        return self._tag(fuse(lists, prior=prior)[: o.pool])

    def _tag(self, cands: list[Candidate]) -> list[Candidate]:
        for c in cands:
            c.genre = self.chapter_genres.get(c.start) if c.level == "chapter" else self.genres.get(c.start)
        return cands

    @staticmethod
    def _signals(rows, routed, analysis: Analysis) -> dict[str, float]:
        verse = max((r[5] for r in rows if r[0] == 0 and r[1] == "dense" and r[2] == "verse"), default=0.0)
        chapter = max((r[5] for r in rows if r[0] == 0 and r[1] == "dense" and r[2] == "chapter"), default=0.0)
        fts = sum(1 for r in rows if r[1] == "fulltext")
        return {"dense_verse": float(verse), "dense_chapter": float(chapter),
                "theme": max((r.score for r in routed), default=0.0),
                "fulltext": math.log1p(fts) / math.log1p(30), "pastoral": analysis.pastoral_score}

    # -- the public call -----------------------------------------------------------------------------
    def search(self, text: str, k: int = 5, **options) -> SearchResponse:
        """Raises QueryValidationError for text that cannot be searched; everything else is an answer."""
        started = time.perf_counter()
        opts = SearchOptions(**options)
        k = max(1, min(int(k), 50))
        ranked = self.rank(text, opts)
        clock = time.perf_counter()
        if ranked.analysis.query_type == "reference":
            results = [] if ranked.abstained else self._lookup(ranked.analysis.references[0], opts)
        else:
            results = [] if ranked.abstained else self._display(ranked, ranked.candidates[:k], opts)
            if ranked.analysis.references and not ranked.abstained:
                direct = self._lookup(ranked.analysis.references[0], opts)
                results = (direct + [r for r in results if not _overlaps(r, direct[0])])[:k] if direct else results
        ranked.timings["display"] = round((time.perf_counter() - clock) * 1000, 2)
        ranked.timings["total"] = round((time.perf_counter() - started) * 1000, 2)
        return SearchResponse(query=text, abstained=ranked.abstained, reason=ranked.reason, analysis=ranked.analysis,
                              rewrites=ranked.rewrites, timings=ranked.timings, results=results)

    def _lookup(self, reference: str, o: SearchOptions) -> list[Result]:
        ref = parse_reference(reference)
        level = "chapter" if ref.is_chapter and ref.chapter == ref.end_chapter else "verse" if ref.start_id == ref.end_id else "range"
        c = Candidate(ref.start_id, ref.end_id, level, 1.0)
        c.genre = self.genres.get(c.start)
        c.hits.append(("reference", "reference", level, 1))
        ranked = Ranked(Analysis(query_type="reference", pastoral=False, pastoral_score=0.0), None, [], [c])
        return self._display(ranked, [c], o)

    def _display(self, ranked: Ranked, cands: list[Candidate], o: SearchOptions) -> list[Result]:
        if not cands:
            return []
        ids: set[int] = set()
        for c in cands:
            ids.update(range(max(c.start - CONTEXT, c.start // 1000 * 1000 + 1), c.end + CONTEXT + 1))
        with self.pool.connection() as conn:
            rows = verse_rows(conn, self.space_id, sorted(ids), o.translation)
            refs = cross_references(conn, [(c.start, c.end) for c in cands], per_span=3)
        related: dict[int, list[Related]] = {}
        for i, s, e, votes in refs:
            related.setdefault(i, []).append(Related(ref=format_range(s, e), start_id=s, end_id=e, votes=votes))
        out = []
        for i, c in enumerate(cands):
            body = [vid for vid in range(c.start, c.end + 1) if vid in rows]
            if not body:
                continue
            vecs = [rows[v][2] for v in body if rows[v][2] is not None]
            with_vec = [v for v in body if rows[v][2] is not None]
            pin_id = with_vec[disp.pinned_index(ranked.query_vector, vecs)] if ranked.query_vector is not None and vecs else body[0]
            if c.level == "chapter":
                around = range(pin_id - CONTEXT, pin_id + CONTEXT + 1)
            else:
                around = [*range(c.start - CONTEXT, c.start), *range(c.end + 1, c.end + CONTEXT + 1)]
            text = " ".join(rows[v][1] for v in body if rows[v][1])
            order, chapter, verse_start = split_id(c.start)
            out.append(Result(
                ref=format_range(c.start, c.end, whole_chapters=c.level == "chapter"), start_id=c.start, end_id=c.end,
                book=by_order(order).name, chapter=chapter, verse_start=verse_start, verse_end=c.end % 1000,
                level=c.level, title=self._title(c),
                text=text, score=round(c.score, 4), genre=c.genre,
                pinned=VerseText(ref=rows[pin_id][0], id=pin_id, text=rows[pin_id][1]),
                context=[VerseText(ref=rows[v][0], id=v, text=rows[v][1]) for v in around
                         if v in rows and v != pin_id and (c.level == "chapter" or not c.start <= v <= c.end)],
                highlights=disp.highlights(text, ranked.terms),
                provenance=[Hit(variant=h[0], retriever=h[1], level=h[2], rank=h[3]) for h in c.hits],
                related=related.get(i, []),
            ))
        return out


def _overlaps(r: Result, other: Result) -> bool:
    return r.start_id <= other.end_id and other.start_id <= r.end_id
