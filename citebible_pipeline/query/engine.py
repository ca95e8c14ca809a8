"""The Engine: the public door. It loads the models, the start-up data (`startup.load`: all of its start-up
SQL) and a connection pool once, then runs the pipeline of pure stages (analyze -> route/rewrite -> retrieve ->
floor -> lists/fuse -> expand, every need's best -> merge -> rerank -> boost -> needs) and hands the result to
presentation (`present.answer`). Weights live in `tuning.TUNING`. Safe to share across threads: the pool hands each
search its own connection, and each search keeps the snapshot it started on while `follower` swaps in newly
materialized artefacts (serving.py)."""

from __future__ import annotations

import logging
import threading
import time

import numpy as np

from citebible_pipeline.bible.canon import verses_in_chapter_of
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db.connection import database_url, get_pool, statement_timeout_ms
from citebible_pipeline.embeddings.embedder import Embedder
from citebible_pipeline.query import batch, boost as boost_stage, care, display as disp, harm, labels as expansion, lists, perspective
from citebible_pipeline.query.analyze import analyze, one_more_distress, validate
from citebible_pipeline.query.features import PoolTables, RerankQuery, candidate_vectors, load_tables, verse_cosines
from citebible_pipeline.query.floor import lexicon_coverage
from citebible_pipeline.query.fuse import Candidate, admit, fuse
from citebible_pipeline.query.merge import merge
from citebible_pipeline.query.models import MAX_K, Analysis, QueryValidationError, SearchOptions, SearchResponse
from citebible_pipeline.query.present import answer
from citebible_pipeline.query.rerank import Reranker, RerankInputs, apply as rerank_stage
from citebible_pipeline.query.retrieve import DenseQuery, exact_rows, retrieve_once, verse_rows
from citebible_pipeline.query.rewrite import LLMConfig, rewrites
from citebible_pipeline.query.route import ThemeIndex, clause_needs, clauses, nearest_needs, prior_scores, route
from citebible_pipeline.query.slots import fill
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.query.serving import Follower, Serving, describe, load_serving, read_versions
from citebible_pipeline.query.reading import Clock, Ranked, Reading
from citebible_pipeline.query.startup import EngineData
from citebible_pipeline.query.variant import FULL, Variant

log = logging.getLogger(__name__)


class Engine:
    def __init__(self, url: str | None = None, *, embedder: Embedder | None = None, reranker: Reranker | str | None = "env",
                 llm: LLMConfig | None | str = "env", pool_size: int = 8, pool_timeout: float = 3.0, blas_threads: int | None = 1) -> None:
        """reranker: a Reranker, None (fused order), or a name for rerank.choice ("env": CITEBIBLE_RERANKER); blas_threads: numpy's BLAS threads for the whole process (batch.hold_blas: one serves faster; None leaves them)."""
        started = time.perf_counter()
        self.url = url or database_url()
        self.embedder = embedder or Embedder()
        self.llm = LLMConfig.from_env() if llm == "env" else llm
        self._reranker_choice = reranker
        self._encode_lock = threading.Lock()
        # a short wait for a connection: a caller (the API) answers 503 quickly while the database is down
        self.pool = get_pool(self.url, min_size=1, max_size=pool_size, timeout=pool_timeout,
                             statement_timeout=statement_timeout_ms())
        with self.pool.connection() as conn:
            self.serving = self._load(conn, read_versions(conn), None)
        # a swap is one reference assignment: atomic for every reader
        self.follower = Follower(lambda: self.serving, lambda: self._in_pool(read_versions),
                                 lambda versions, old: self._in_pool(self._load, versions, old),
                                 lambda fresh: setattr(self, "serving", fresh))
        self.load_seconds, self.blas = time.perf_counter() - started, batch.hold_blas(blas_threads)  # every library loaded by now
        log.info("engine ready in %.1fs: %d themes, floor %s, reranker %s", self.load_seconds, len(self.themes.keys),
                 "calibrated" if self.floor else "missing (never abstains)",
                 "none" if self.reranker is None else f"{self.reranker.kind} {self.reranker.model_id or ''}".strip())

    # what serves now, by the names callers (API health, training, benchmarks) use; a search reads
    # `self.serving` once and keeps that snapshot (serving.py)
    data, reranker = property(lambda self: self.serving.data), property(lambda self: self.serving.reranker)
    space_id, dims = property(lambda self: self.data.space_id), property(lambda self: self.data.dims)
    themes, floor = property(lambda self: self.data.themes), property(lambda self: self.data.floor)
    translations, rerank_inputs = property(lambda self: self.data.translations), property(lambda self: self.inputs(self.serving))

    def _load(self, conn, versions: dict[str, int], old: Serving | None) -> Serving:
        return load_serving(conn, self.embedder.space, self.encode, self._reranker_choice, versions, old,
                            lambda c, fresh: self.pool_tables(c, serving=fresh))

    def _in_pool(self, fn, *args):
        with self.pool.connection() as conn:
            return fn(conn, *args)

    def refresh(self) -> bool:
        """Swap to artefacts committed since the last check (True if so); a failed load keeps the old (`follower.error`)."""
        return self.follower.check()

    def pool_tables(self, conn=None, translation: str = DEFAULT_TRANSLATION, serving: Serving | None = None) -> PoolTables:
        """Verse/chapter vectors and cross-references for the feature reranker, loaded on first use (per
        translation: a second one costs its vectors only when it is first searched)."""
        s = serving or self.serving
        if translation not in s.tables:
            if conn is None:
                with self.pool.connection() as c:
                    return self.pool_tables(c, translation, s)
            conn.execute("SET LOCAL statement_timeout = 0")  # whole tables, once: not a search's statement
            s.tables[translation] = load_tables(conn, s.data.space_id, s.data.boosts, translation)
        return s.tables[translation]

    def inputs(self, s: Serving) -> RerankInputs:
        """What a reranker may read, bound to one snapshot."""
        def rows(ids, translation: str):
            with self.pool.connection() as conn:
                return verse_rows(conn, s.data.space_id, ids, translation)

        return RerankInputs(tables=lambda translation: self.pool_tables(translation=translation, serving=s), verse_rows=rows)

    def check_translation(self, translation: str) -> None:
        """A translation that is not built is the caller's error (the API's 422), named with what to do."""
        if translation not in self.data.translations:
            raise QueryValidationError(f"translation {translation!r} is not in the index (built: "
                                       f"{', '.join(sorted(self.data.translations))}); materialize its passage_embeddings partition")

    def describe(self) -> dict:
        """What is actually serving (API health): the embedder's backend and file, the reranker, the floor."""
        return describe(self.serving, self.embedder, self.follower, self.load_seconds)

    def encode(self, texts: list[str]) -> np.ndarray:
        with self._encode_lock:  # one forward pass at a time; it uses both cores
            return self.embedder.encode_queries(texts)

    # -- ranking: the stages in the order they run ------------------------------------------------------
    def rank(self, text: str, options: SearchOptions | None = None, variant: Variant = FULL, *,
             exclude: frozenset[str] = frozenset(), query_vector: np.ndarray | None = None,
             reranker: Reranker | None | str = "engine", memo: dict | None = None) -> Ranked:
        """Every stage up to the final order. `variant`: the stages an evaluation row turns off; `exclude` leaves themes
        out by split key (calibration, training); `reranker` overrides the engine's (training records the pool through
        it); `memo`: `retrieve_once`, `exact_rows`."""
        o, v = options or SearchOptions(), variant
        self.check_translation(o.translation)
        snap = self.serving  # this search's snapshot, whatever swaps meanwhile
        data, reranker = snap.data, snap.reranker if reranker == "engine" else reranker
        clock = Clock()
        analysis = analyze(clean := validate(text))
        clock.lap("analyze")
        if analysis.query_type != "search":  # a reference to look up, or a statement refused
            why = analysis.reference_error or analysis.refused
            return Ranked(analysis, None, [], [], abstained=why is not None, reason=why, timings=clock.t, data=data)
        r = self._read(clean, analysis, data.themes, exclude, query_vector, clock)
        self._rewrite(r, data.themes, o, v)
        clock.lap("rewrite")
        tables = self.pool_tables(translation=o.translation, serving=snap)
        with self.pool.connection() as conn:  # the database is asked only what memory cannot answer
            rows = self._retrieve(conn, r, data, tables, o, v, memo)
            clock.lap("retrieve")
            signals = lists.floor_signals(rows, r.floor_routed, r.analysis) | {"lexicon": lexicon_coverage(clean, data.lexicon)}
            # the floor turns away questions, never a crisis nor a person who states a need (pastoral, not a seeker)
            may_abstain = not (r.analysis.crisis or (r.analysis.pastoral and r.analysis.stance != "seeker"))
            if v.floor and v.dense and data.floor is not None and may_abstain and data.floor.abstains(signals):
                clock.lap("floor")  # decided before fusing a pool nobody will read
                reason = ("nothing in the Bible index fits this question closely enough "
                          f"(relevance {data.floor.probability(signals):.2f} below the floor {data.floor.threshold:.2f})")
                return Ranked(r.analysis, r.q, r.shown, [], True, reason, signals, set(), clock.t, r.note, data)
            clock.lap("floor")
        cands = self._fuse(r, rows, data, tables, o, v, exclude)
        clock.lap("fuse")
        cands = merge(cands, verses_in_chapter_of, TUNING.collapse_ratio,
                      data.pericopes.of if o.pericopes and data.pericopes.spans else None) if v.merge else cands
        clock.lap("merge")
        cands, learned = self._rerank(r, cands, data, snap, reranker, o, v, signals, exclude)
        clock.lap("rerank")
        cands = boost_stage.served(cands, v, data.boosts, learned=learned, pastoral=r.analysis.pastoral,
                                   testament=r.analysis.testament)
        clock.lap("boost")
        if v.slots and (len(r.route_rows) > 2 or r.stance):  # every stated need holds a top slot
            needs = perspective.slot_needs(data.themes, clause_needs(data.themes, r.route_rows, r.analysis.pastoral, r.left_out),
                                           r.routed, r.stance)
            cands = fill(cands, [data.themes.passages[n][:2] for n in needs], TUNING.slot_k, TUNING.slot_depth)
        clock.lap("needs")
        cands = self._do_no_harm(r, cands, data, tables) if v.harm else cands
        clock.lap("harm")
        stems = disp.terms([clean] + [rw.theme or rw.text for rw in r.shown[1:] if rw.source != "llm"])
        return Ranked(r.analysis, r.q, r.shown, cands, False, None, signals, stems, clock.t, r.note, data)

    def _read(self, clean: str, analysis: Analysis, themes: ThemeIndex, exclude: frozenset[str],
              query_vector: np.ndarray | None, clock: Clock) -> Reading:
        """Embed the sentence and its clauses, route them, and read the stance that reroutes them (perspective.py)."""
        parts = clauses(clean)
        if query_vector is None:
            vecs = self.encode([clean, *parts])
        else:
            vecs = np.vstack([query_vector, self.encode(parts)]) if parts else query_vector[None, :]
        clock.lap("embed")
        routed = route(themes, vecs, analysis.pastoral, exclude=exclude)  # the floor was calibrated on this routing
        stance = perspective.stance(analysis, themes, exclude)
        if stance is None:
            return Reading(analysis, vecs[0], vecs, routed, routed, stance, exclude, text=clean)
        told = one_more_distress(analysis)  # the stance states a need: one more distress word
        rows, left_out = perspective.as_told(themes, stance, vecs, exclude)
        return Reading(told, vecs[0], rows, routed, route(themes, rows, told.pastoral, exclude=left_out), stance, left_out,
                       text=clean)

    def _rewrite(self, r: Reading, themes: ThemeIndex, o: SearchOptions, v: Variant) -> None:
        """Step back: the routed themes' rewrites (and an LLM gateway's need phrases, which route too, so their themes'
        human judgments join the prior and the need slots), then the human-vote prior of everything routed."""
        r.variants, r.note = rewrites(themes, r.routed, r.text, TUNING.max_rewrites, self.llm if o.llm_rewrites else None)
        llm_texts = [rw.text for rw, theme in r.variants[1:] if theme < 0]
        llm_vecs = self.encode(llm_texts) if llm_texts else np.zeros((0, len(r.q)), np.float32)
        it = iter(llm_vecs)
        r.vectors = [r.q] + [themes.rewrite_vectors[theme] if theme >= 0 else next(it) for _, theme in r.variants[1:]]
        r.route_rows = np.vstack([r.rows, llm_vecs])  # the sentence, its clauses, a stance's cue, LLM phrases
        r.needs_routed = route(themes, r.route_rows, r.analysis.pastoral, exclude=r.left_out) if llm_texts else r.routed
        r.prior = prior_scores(themes, r.needs_routed, v.specific) if v.prior else {}

    def _retrieve(self, conn, r: Reading, data: EngineData, tables: PoolTables, o: SearchOptions, v: Variant,
                  memo: dict | None) -> list:
        """Dense search per query variant and level (exact, from the vectors in memory; the pericope level through
        its HNSW graph) and one full-text search of the sentence."""
        levels = ["verse"] + (["chapter"] if v.chapters else []) + (["pericope"] if o.pericopes and data.pericopes.spans else [])
        dense = [DenseQuery(i, lv, vec) for i, vec in enumerate(r.vectors) for lv in levels] if v.dense else []
        if v.floor and not v.chapters and v.dense:
            dense.append(DenseQuery(0, "chapter", r.q))  # the floor reads the original's chapter similarity
        exact = tables.exact_levels if dense else {}
        in_sql, fulltext = [d for d in dense if d.level not in exact], r.text if v.hybrid or v.floor else None
        return exact_rows([d for d in dense if d.level in exact], exact, TUNING.dense_k, memo) + (retrieve_once(
            memo, conn, data.space_id, data.dims, in_sql, TUNING.dense_k, TUNING.ef_search, fulltext,
            translation=o.translation, common=data.common) if in_sql or fulltext else [])

    def _fuse(self, r: Reading, rows: list, data: EngineData, tables: PoolTables, o: SearchOptions, v: Variant,
              exclude: frozenset[str]) -> list[Candidate]:
        """Weighted RRF of every retrieval list, the prior and the labels; each list's top joins the pool whatever the
        fusion says, and each routed need's best passages after it (recall first)."""
        fused = (lists.retrieval_lists(rows, r.variants, v, o.pericopes)
                 + ([lists.prior_list(r.prior, TUNING.pool)] if r.prior else [])
                 + (lists.label_lists(data.labels, r.text, exclude) if v.labels else []))
        cands = lists.tag(admit(fuse(fused, prior=r.prior), TUNING.pool, TUNING.list_depth), data)
        if r.prior:  # chosen with the sentence: it tells apart passages a need weighs alike
            cands += lists.tag(lists.need_candidates(data.themes, r.needs_routed, r.prior, verse_cosines(tables, r.q),
                                                     TUNING.list_depth, {c.key for c in cands}), data)
        return cands

    def _rerank(self, r: Reading, cands: list[Candidate], data: EngineData, snap: Serving, reranker: Reranker | None,
                o: SearchOptions, v: Variant, signals: dict[str, float], exclude: frozenset[str]) -> tuple[list[Candidate], bool]:
        if not (v.rerank and reranker is not None):
            return cands, False
        rw = np.asarray(r.vectors[1:], np.float32).reshape(-1, len(r.q))
        rq = RerankQuery(r.text, r.q, rw, r.analysis.pastoral_score, signals.get("theme", 0.0), r.analysis.pastoral, r.prior,
                         o.translation, *expansion.near_labels(data.labels, r.q, rw, exclude))
        return rerank_stage(reranker, rq, cands, self.inputs(snap), v.blend, TUNING.blend_k)

    def _do_no_harm(self, r: Reading, cands: list[Candidate], data: EngineData, tables: PoolTables) -> list[Candidate]:
        """Hold back what would wound this reader (harm.py; Analysis.harm_stance): never switched off; a seeker sees all."""
        if (stance := r.analysis.harm_stance) == "seeker" or not cands:
            return cands
        themes = data.themes
        needs = ({x.theme for x in r.needs_routed} | set(nearest_needs(themes, r.route_rows, TUNING.avoid_near, r.left_out))
                 | ({themes.position[r.stance]} if r.stance in themes.position else set()))
        near = harm.near_situations(themes.situation_vectors, r.q, TUNING.situation_near, TUNING.situation_fit)
        lost = data.voices.broken_promises(stance, r.analysis.losses) + data.voices.condemning(stance)
        avoid = [themes.avoid[t] for t in needs if t in themes.avoid] + [themes.situation_avoid[i] for i in near] + lost
        off = harm.held_off(cands, lambda: candidate_vectors(tables, cands), harm.surface(disp.terms([r.text]), r.variants[1:], r.vectors[1:]),
                            TUNING.need_fit, harm.pastoral_votes(themes, r.needs_routed, stance))
        show = data.voices.pin_for(stance, TUNING.pin_margin)  # judged by the nearest verse, shown the kindest near it
        pins, shown = zip(*(tables.pins(r.q, c.start, c.end, show) for c in cands))
        return harm.stage(cands, stance, data.voices, avoid, pins, off, TUNING.directive_cap, shown, r.analysis.crisis)

    # -- the public call -----------------------------------------------------------------------------
    def search(self, text: str, k: int = 5, **options) -> SearchResponse:
        """Raises QueryValidationError for text that cannot be searched; everything else is an answer."""
        started = time.perf_counter()
        opts, k = SearchOptions(**options), max(1, min(int(k), MAX_K))
        snap, ranked = self.serving, self.rank(text, opts)
        data = ranked.data  # the pinned verse reads the reranker's verse vectors when ranking saw this snapshot
        tables = snap.tables.get(opts.translation) if data is snap.data else None
        vectors = (tables.verse_ids, tables.verse_vectors) if tables is not None else None
        clock = time.perf_counter()
        with self.pool.connection() as conn:
            results = answer(conn, data, ranked, opts.translation, k, vectors)
        ranked.timings["display"] = round((time.perf_counter() - clock) * 1000, 2)
        ranked.timings["total"] = round((time.perf_counter() - started) * 1000, 2)
        return SearchResponse(query=text, abstained=ranked.abstained, reason=ranked.reason, notice=ranked.notice,
                              crisis_help=care.help_now(ranked.analysis), analysis=ranked.analysis,
                              rewrites=ranked.rewrites, timings=ranked.timings, results=results)
