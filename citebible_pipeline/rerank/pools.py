"""Training pools for the learned reranker. Each training-side query (themes.devset: topic names and
pastoral cues; Nave's entries, nave_queries; its own theme and near duplicates left out of routing, as a held-out
query would find them) runs through the query module exactly as served, up to the rerank stage; the pool it reaches is
recorded with its features (query.features) and graded labels from the query's voted passages. The
pipeline's own mistakes become the hard negatives."""

from __future__ import annotations

import logging
import math
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from citebible_pipeline.gold.access import TrainingNavePassage
from citebible_pipeline.gold.metrics import Passage
from citebible_pipeline.gold.split import split_key
from citebible_pipeline.query.batch import map_queries
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.features import RerankQuery, compute
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.models import SearchOptions
from citebible_pipeline.query.route import ThemeIndex
from citebible_pipeline.query.spans import runs_of, runs_touching
from citebible_pipeline.query.rerank import RerankInputs, Reranker
from citebible_pipeline.query.retrieve import prefill_exact
from citebible_pipeline.naves.queries import is_query, readable
from citebible_pipeline.themes.devset import DevQuery, dev_queries
from citebible_pipeline.themes.vocabulary import NAVE_WEIGHT

log = logging.getLogger(__name__)
NEAR_DUPLICATE = 0.95  # cosine of two names above which they are one topic in other words
POOL_OPTIONS = SearchOptions(floor=False)  # the served pipeline; the floor would hide the pools it rejects


@dataclass
class Pool:
    query: DevQuery
    rq: RerankQuery
    cands: list[Candidate]  # copies, in the fused order the reranker receives
    X: np.ndarray
    labels: np.ndarray  # best grade (0-3) of a voted passage each candidate covers


@dataclass
class LeakageReport:
    checked: int
    same_key: list[str]
    near_duplicates: list[tuple[str, str, float]]

    @property
    def dropped(self) -> int:
        return len(self.same_key) + len(self.near_duplicates)


def leakage_guard(queries: Sequence[DevQuery], heldout: Sequence[str], encode: Callable[[list[str]], np.ndarray],
                  threshold: float = NEAR_DUPLICATE) -> tuple[list[DevQuery], LeakageReport]:
    """Drop every training query whose split key is a held-out topic's, or whose embedding is a near
    duplicate of a held-out topic name; the report lists each one dropped."""
    keys = {split_key(h) for h in heldout}
    same = [q for q in queries if split_key(q.text) in keys or q.exclude in keys]
    rest = [q for q in queries if all(q is not x for x in same)]
    near: list[tuple[str, str, float]] = []
    if rest and heldout:
        sims = encode([q.text for q in rest]) @ encode(list(heldout)).T
        best = sims.argmax(axis=1)
        for i, q in enumerate(rest):
            if sims[i, best[i]] >= threshold:
                near.append((q.text, heldout[best[i]], round(float(sims[i, best[i]]), 3)))
    drop = {t for t, _, _ in near}
    kept = [q for q in rest if q.text not in drop]
    return kept, LeakageReport(len(queries), [q.text for q in same], near)


def training_queries(engine: Engine, heldout: Sequence[str], topics: int, seed: int,
                     nave: Sequence[DevQuery] = (), composites: int = 0) -> tuple[list[DevQuery], LeakageReport]:
    kept, report = leakage_guard([*dev_queries(engine.themes, topics=topics, seed=seed), *nave], heldout, engine.encode)
    if not composites:
        return kept, report
    # from the cues the guard kept only (a dropped cue's sentences would carry it), then guarded themselves
    extra, more = leakage_guard(composite_queries(engine.themes, kept, composites, seed), heldout, engine.encode)
    return [*kept, *extra], LeakageReport(report.checked + more.checked, report.same_key + more.same_key,
                                          report.near_duplicates + more.near_duplicates)


def composite_queries(index: ThemeIndex, queries: Sequence[DevQuery], per_cue: int, seed: int) -> list[DevQuery]:
    """Reader-like sentences with a distracting noun (issue 22): each pastoral cue joined to `per_cue` topic names drawn
    from the topic queries' population (5+ voted passages) sharing no verse with the cue's need, graded as the cue, its
    need left out of routing as the cue's is, so the topic's passages are what a noun-level match would wrongly bring."""
    rows = [i for i, k in enumerate(index.kinds) if k == "topic" and len(index.passages[i][0]) >= 5]
    rng = random.Random(seed)
    out: list[DevQuery] = []
    for q in (q for q in queries if q.kind == "pastoral"):
        need = runs_of(np.array([p.start for p in q.passages], np.int64), np.array([p.end for p in q.passages], np.int64),
                       np.zeros(len(q.passages), np.int64))
        picked: list[int] = []
        for i in rng.sample(rows, len(rows)):
            starts, ends, _ = index.passages[i]
            if not runs_touching(need, starts, ends).any():
                picked.append(i)
                if len(picked) == per_cue:
                    break
        out += [DevQuery(f"{q.text}, because of {index.names[i].lower()}", q.exclude, "composite", q.passages)
                for i in picked]
    return out


def nave_queries(rows: Sequence[TrainingNavePassage], names: frozenset[str]) -> list[DevQuery]:
    """The reranker's second source (issue 22): every training-side Nave's entry the evaluation's own rule makes a
    query (naves.queries.is_query; entries of one readable text are one query), graded as a theme grades a Nave's
    listing (NAVE_WEIGHT of a top-voted passage), its subject's theme left out of routing as a topic name's is."""
    listed: dict[str, dict[tuple[int, int], None]] = defaultdict(dict)
    where: dict[str, tuple[str, tuple[str, ...]]] = {}
    for r in rows:
        listed[r.text][(r.start_id, r.end_id)] = None
        where.setdefault(r.text, (r.subject, r.path))
    grade = min(3, math.ceil(3 * NAVE_WEIGHT))
    out = []
    for text in sorted(listed):
        subject, path = where[text]
        if is_query(subject, path, len(listed[text]), names):
            out.append(DevQuery(text, split_key(readable(subject, ())), "nave",
                                tuple(Passage(s, e, grade) for s, e in listed[text])))
    return out


def labels(cands: Sequence[Candidate], gold: Sequence[Passage]) -> np.ndarray:
    out = np.zeros(len(cands), np.int32)
    for i, c in enumerate(cands):
        out[i] = max((p.grade for p in gold if c.start <= p.end and p.start <= c.end), default=0)
    return out


class Recorder(Reranker):
    """Stands where the reranker stands and keeps what it was given (training pools, the benchmark)."""

    def __init__(self, engine: Engine) -> None:
        self.tables = engine.pool_tables()
        self.seen: tuple[RerankQuery, list[Candidate], np.ndarray] | None = None

    def rerank(self, query: RerankQuery, cands: list[Candidate], inputs: RerankInputs) -> list[Candidate]:
        self.seen = (query, [c.copy() for c in cands], compute(self.tables, query, cands))
        return cands


def prefill(engine: Engine, memo: dict, vectors: np.ndarray, options: SearchOptions) -> None:
    """Every sentence's exact dense answers into `memo` at once, and every theme's step-back rewrite's (the same vector
    in each query routed to it), for `Engine.rank`'s `exact_rows`: a sentence's own product read the whole verse matrix
    for its few vectors. The same answers to the bit (retrieve.prefill_exact); pools 1.41x faster on 1,500 training
    queries with `route.SplitKeys` (README "Twenty-fourth step")."""
    if options.exact and options.dense and len(vectors):
        rewrites = engine.serving.data.themes.rewrite_vectors if options.rewrite else np.zeros((0, len(vectors[0])), np.float32)
        prefill_exact(memo, engine.pool_tables(translation=options.translation).exact_levels,
                      np.vstack([np.asarray(vectors, np.float32), rewrites]), options.dense_k)


def collect(engine: Engine, queries: Sequence[DevQuery], options: SearchOptions = POOL_OPTIONS,
            progress: Callable[[str], None] = log.info, workers: int | None = None) -> list[Pool]:
    """Each query's pool, in the order of `queries` (query.batch: on several threads, a recorder each)."""
    vectors = engine.encode([q.text for q in queries]) if queries else []
    memo: dict = {}
    prefill(engine, memo, vectors, options)

    def one(item: tuple[DevQuery, np.ndarray]) -> Pool | None:
        q, vec = item
        recorder = Recorder(engine)
        engine.rank(q.text, options, exclude=frozenset({q.exclude}), query_vector=vec, reranker=recorder, memo=memo)
        if recorder.seen is None or not recorder.seen[1]:
            return None
        rq, cands, X = recorder.seen
        return Pool(q, rq, cands, X, labels(cands, q.passages))

    pools: list[Pool] = []
    started = time.perf_counter()
    for n, pool in enumerate(map_queries(one, zip(queries, vectors), workers), start=1):
        if pool is not None:
            pools.append(pool)
        if n % 250 == 0 or n == len(queries):
            progress(f"pools: {n}/{len(queries)} queries in {time.perf_counter() - started:.0f}s")
    return pools
