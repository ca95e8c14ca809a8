"""Training pools for the learned reranker. Each training-side query (themes.devset: topic names and
pastoral cues; its own theme and near duplicates left out of routing, as a held-out query would find them) runs
through the query module exactly as served, up to the rerank stage; the pool it reaches is recorded with its features
(query.features) and graded labels from the query's voted passages. The pipeline's own mistakes become the hard
negatives."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from citebible_pipeline.gold.metrics import Passage
from citebible_pipeline.gold.split import split_key
from citebible_pipeline.retrieval.batch import map_queries
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.features import RerankQuery, compute
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.query.variant import Variant
from citebible_pipeline.query.rerank import RerankInputs, Reranker
from citebible_pipeline.query.retrieve import prefill_exact
from citebible_pipeline.themes.devset import DevQuery, dev_queries

log = logging.getLogger(__name__)
NEAR_DUPLICATE = 0.95  # cosine of two names above which they are one topic in other words
POOL_VARIANT = Variant(floor=False)  # the served pipeline; the floor would hide the pools it rejects


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


def training_queries(engine: Engine, heldout: Sequence[str], topics: int, seed: int
                     ) -> tuple[list[DevQuery], LeakageReport]:
    """The training-side topic names and pastoral cues (themes.devset), through the leakage guard."""
    return leakage_guard(dev_queries(engine.themes, topics=topics, seed=seed), heldout, engine.encode)


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


def prefill(engine: Engine, memo: dict, vectors: np.ndarray, variant: Variant) -> None:
    """Every sentence's exact dense answers into `memo` at once, and every theme's step-back rewrite's (the same vector
    in each query routed to it), for `Engine.rank`'s `exact_rows`: a sentence's own product read the whole verse matrix
    for its few vectors. The same answers to the bit (retrieve.prefill_exact); pools 1.41x faster on 1,500 training
    queries with `route.SplitKeys` (README "Twenty-fourth step")."""
    if variant.dense and len(vectors):
        prefill_exact(memo, engine.pool_tables().exact_levels,
                      np.vstack([np.asarray(vectors, np.float32), engine.serving.data.themes.rewrite_vectors]), TUNING.dense_k)


def collect(engine: Engine, queries: Sequence[DevQuery], variant: Variant = POOL_VARIANT,
            progress: Callable[[str], None] = log.info, workers: int | None = None) -> list[Pool]:
    """Each query's pool, in the order of `queries` (query.batch: on several threads, a recorder each)."""
    vectors = engine.encode([q.text for q in queries]) if queries else []
    memo: dict = {}
    prefill(engine, memo, vectors, variant)

    def one(item: tuple[DevQuery, np.ndarray]) -> Pool | None:
        q, vec = item
        recorder = Recorder(engine)
        engine.rank(q.text, None, variant, exclude=frozenset({q.exclude}), query_vector=vec, reranker=recorder, memo=memo)
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
