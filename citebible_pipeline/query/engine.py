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
from dataclasses import dataclass, field

import numpy as np

from citebible_pipeline.bible.canon import verses_in_chapter_of
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db.connection import database_url, get_pool, statement_timeout_ms
from citebible_pipeline.embeddings.embedder import Embedder
from citebible_pipeline.query import batch, boost as boost_stage, care, crisis, display as disp, diversify, evidence, labels as expansion, lists, persons, perspective
from citebible_pipeline.query.analyze import analyze, one_more_distress, validate, with_need
from citebible_pipeline.query.features import PoolTables, RerankQuery, load_tables, row_cosines, verse_cosines
from citebible_pipeline.query.floor import lexicon_coverage
from citebible_pipeline.query.fuse import Candidate, admit, fuse
from citebible_pipeline.query.merge import merge
from citebible_pipeline.query.models import Analysis, QueryValidationError, Rewrite, SearchOptions, SearchResponse
from citebible_pipeline.query.present import answer
from citebible_pipeline.query.rerank import Reranker, RerankInputs, apply as rerank_stage
from citebible_pipeline.query.retrieve import DenseQuery, cross_references, exact_rows, retrieve_once, verse_rows
from citebible_pipeline.query.rewrite import LLMConfig, rewrites
from citebible_pipeline.query.route import clause_needs, clauses, nearest_is_need, prior_scores, route
from citebible_pipeline.query.slots import fill
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.query.serving import Follower, Serving, describe, load_serving, read_versions
from citebible_pipeline.query.startup import EngineData

log = logging.getLogger(__name__)


@dataclass
class Ranked:
    """What ranking produced, before display (the evaluation stops here)."""
    analysis: Analysis
    query_vector: np.ndarray | None
    rewrites: list[Rewrite]
    candidates: list[Candidate]
    abstained: bool = False
    reason: str | None = None  # why it abstained
    signals: dict[str, float] = field(default_factory=dict)
    terms: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=dict)
    notice: str | None = None  # a degraded optional stage
    data: EngineData | None = None  # the snapshot it was ranked on (display reads the same one)


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

    # -- ranking -------------------------------------------------------------------------------------
    def rank(self, text: str, options: SearchOptions | None = None, *, exclude: frozenset[str] = frozenset(),
             query_vector: np.ndarray | None = None, reranker: Reranker | None | str = "engine", memo: dict | None = None) -> Ranked:
        """Every stage up to the final order; `exclude` leaves themes out by split key (calibration,
        training); `reranker` overrides the engine's (training records the pool through it); `memo`: `retrieve_once`, `exact_rows`."""
        o = options or SearchOptions()
        self.check_translation(o.translation)
        data = (snap := self.serving).data  # this search's snapshot, whatever swaps meanwhile
        reranker = snap.reranker if reranker == "engine" else reranker
        t, clock = {}, time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            t[name] = round((now - clock) * 1000, 2)
            clock = now

        analysis = analyze(clean := validate(text))
        lap("analyze")
        if analysis.query_type != "search":  # a reference to look up, or a statement refused
            return Ranked(analysis, None, [], [], abstained=(why := analysis.reference_error or analysis.refused) is not None,
                          reason=why, timings=t, data=data)
        parts = clauses(clean)
        if query_vector is None:
            vecs = self.encode([clean, *parts])
        else:
            vecs = np.vstack([query_vector, self.encode(parts)]) if parts else query_vector[None, :]
        q = vecs[0]
        lap("embed")
        themes = data.themes
        if o.need_intent:
            analysis = with_need(analysis, lambda: nearest_is_need(themes, q, exclude))
        vecs = crisis.with_need(themes, vecs, exclude) if o.crisis_need and analysis.crisis else vecs  # at risk: despair
        floor_routed = routed = route(themes, vecs, analysis.pastoral, exclude=exclude)  # the floor was calibrated on it
        told = perspective.stance(analysis, o.confession, o.complaint, themes, exclude)  # did the wrong, or angry at God: one more distress word
        analysis, (vecs, rx) = (one_more_distress(analysis), perspective.as_told(themes, told, vecs, exclude)) if told else (analysis, (vecs, exclude))
        ev = evidence.scorer(themes, self.pool_tables(translation=o.translation, serving=snap), TUNING.list_depth) if o.route_evidence else None
        routed = route(themes, vecs, analysis.pastoral, exclude=rx, evidence=ev) if ev or told else routed
        names = persons.masked([clean, *parts]) if analysis.first_person and (o.person_context or o.person_labels) else None
        masked = self.encode(names if o.person_context else names[:1]) if names else None
        if o.person_context and names:
            vecs = np.vstack([masked, vecs[len(names):]])  # each person named as "someone" (query/persons.py): routing reads the need
            routed = route(themes, vecs, analysis.pastoral, exclude=rx, evidence=ev)
        label_text, label_q = (names[0], masked[0]) if o.person_labels and names else (clean, q)  # document expansion too
        variants, note = rewrites(themes, routed, clean, o.max_rewrites if o.rewrite else 0, self.llm, o.llm_rewrites)
        llm_texts = [rw.text for rw, theme in variants[1:] if theme < 0]
        llm_vecs = self.encode(llm_texts) if llm_texts else np.zeros((0, len(q)), np.float32)
        it = iter(llm_vecs)
        vectors = [q] + [themes.rewrite_vectors[theme] if theme >= 0 else next(it) for _, theme in variants[1:]]
        # the needs an LLM names route too, so their themes' human judgments join the prior and the need slots
        # (the floor keeps the sentence's own routing: it was calibrated on that)
        route_rows = np.vstack([vecs, llm_vecs])  # the routing rows (Routed.row indexes them): sentence, clauses, LLM phrases
        needs_routed = (route(themes, route_rows, analysis.pastoral, exclude=rx, need_row=o.need_row, evidence=ev)
                        if llm_texts or (o.need_row and analysis.pastoral) else routed)
        prior = prior_scores(themes, needs_routed, o.specific, o.specific_scope) if o.prior else {}
        lap("rewrite")

        levels = ["verse"] + (["chapter"] if o.chapters else []) + (["pericope"] if o.pericopes and data.pericopes.spans else [])
        dense = [DenseQuery(i, lv, v) for i, v in enumerate(vectors) for lv in levels] if o.dense else []
        if o.floor and not o.chapters and o.dense:
            dense.append(DenseQuery(0, "chapter", q))  # the floor reads the original's chapter similarity
        exact = self.pool_tables(translation=o.translation, serving=snap).exact_levels if o.exact and dense else {}
        in_sql, fulltext = [d for d in dense if d.level not in exact], clean if o.hybrid or o.floor else None
        with self.pool.connection() as conn:  # the database is asked only what memory cannot answer
            rows = exact_rows([d for d in dense if d.level in exact], exact, o.dense_k, memo) + (retrieve_once(
                memo, conn, data.space_id, data.dims, in_sql, o.dense_k, o.ef_search, fulltext, translation=o.translation,
                common=data.common) if in_sql or fulltext else [])
            lap("retrieve")
            # the floor needs only what retrieval saw: decide before fusing a pool nobody will read
            signals = lists.floor_signals(rows, floor_routed, analysis)
            signals["lexicon"] = lexicon_coverage(clean, data.lexicon)
            if o.floor and o.dense and data.floor is not None and not (o.crisis and analysis.crisis) and data.floor.abstains(signals):
                lap("floor")
                reason = ("nothing in the Bible index fits this question closely enough "
                          f"(relevance {data.floor.probability(signals):.2f} below the floor {data.floor.threshold:.2f})")
                return Ranked(analysis, q, [rw for rw, _ in variants], [], True, reason, signals, set(), t, notice=note, data=data)
            lap("floor")
            # the sentence tells apart passages a need weighs alike (the prior's ties, a need's own candidates)
            cosines = verse_cosines(self.pool_tables(translation=o.translation, serving=snap), q) if prior else None
            ties = cosines if o.prior_ties == "cosine" or (o.prior_ties == "pastoral" and analysis.pastoral) else None
            fused = (lists.retrieval_lists(rows, variants, o) + ([lists.prior_list(prior, o.pool, ties)] if prior else [])
                     + lists.label_lists(data.labels, label_text, o, exclude))
            cands = lists.tag(admit(fuse(fused, prior=prior), o.pool, o.list_depth), data)
            lap("fuse")
            if o.expand and cands:
                top = [c for c in cands[:10] if c.level != "chapter"]
                extra = lists.crossref_list(cross_references(conn, [(c.start, c.end) for c in top], per_span=3, min_votes=10))
                if extra is not None:
                    cands = lists.tag(admit(fuse([*fused, extra], prior=prior), o.pool, o.list_depth), data)
            if o.need_depth and prior:  # recall for every routed need, chosen with the sentence (o.need_order, o.need_cosine)
                by_row = (row_cosines(self.pool_tables(translation=o.translation, serving=snap), route_rows, cosines)
                          if o.need_cosine == "row" else None)  # each need chooses with the words that stated it
                cands += lists.tag(lists.need_candidates(themes, needs_routed, prior, cosines, o.need_depth, {c.key for c in cands},
                                                         o.need_order, by_row), data)
            lap("expand")
        if o.merge:
            cands = merge(cands, verses_in_chapter_of, o.collapse_ratio,
                          data.pericopes.of if o.pericopes and data.pericopes.spans else None)
        lap("merge")
        learned = False
        if o.rerank and reranker is not None:
            rq = RerankQuery(clean, q, (rw := np.asarray(vectors[1:], np.float32).reshape(-1, len(q))), analysis.pastoral_score,
                             signals.get("theme", 0.0), analysis.pastoral, prior, o.translation, *expansion.near_labels(data.labels, label_q, rw, exclude))
            cands, learned = rerank_stage(reranker, rq, cands, self.inputs(snap), o.blend, TUNING.blend_k)
        lap("rerank")
        cands = boost_stage.served(cands, o, data, learned=learned, testament=analysis.testament,
                                   pastoral=analysis.pastoral or (o.genre_scope == "first_person" and analysis.first_person))
        cands = care.hold_back(cands) if o.abuse_care and analysis.abuse else cands  # not "submit" or "stay" first
        cands = diversify.stage(cands, o, analysis.pastoral, lambda: self.pool_tables(translation=o.translation, serving=snap),
                                lambda: [(r.weight, themes.passages[r.theme][:2]) for r in needs_routed])  # both off by default
        lap("boost")
        if o.slots and (len(route_rows) > 2 or told):
            needs = perspective.slot_needs(themes, clause_needs(themes, route_rows, analysis.pastoral, rx), routed, told)
            cands = fill(cands, [themes.passages[n][:2] for n in needs], TUNING.slot_k, TUNING.slot_depth, o.slot_serve)
        lap("needs")
        shown = [rw for rw, _ in variants]
        stems = disp.terms([clean] + [rw.theme or rw.text for rw in shown[1:] if rw.source != "llm"])
        return Ranked(analysis, q, shown, cands, False, None, signals, stems, t, notice=note, data=data)

    # -- the public call -----------------------------------------------------------------------------
    def search(self, text: str, k: int = 5, **options) -> SearchResponse:
        """Raises QueryValidationError for text that cannot be searched; everything else is an answer."""
        started = time.perf_counter()
        opts, k = SearchOptions(**options), max(1, min(int(k), 50))
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
                              crisis_help=care.help_now(ranked.analysis, opts),
                              analysis=ranked.analysis, rewrites=ranked.rewrites, timings=ranked.timings, results=results)
