"""The reranker's training pools (`reranker_model`, most of its step in `make run`): the same training queries collected
as before (each ranking's own exact dense product, every split key read to leave a query's own out) and as now
(`rerank.pools.prefill`: every sentence's and every theme rewrite's exact answers in a few products; `route.SplitKeys`),
side by side in one run, both on two threads (`query.batch`). Every pool must be the same to the bit (candidates,
scores, features, labels); it exits 1 if one is not. Needs the built database (`make run`).
Usage: python -m benchmarks.bench_pools [--queries 1500]
"""

from __future__ import annotations

import argparse
import random
import time
from contextlib import contextmanager

import numpy as np

from citebible_pipeline.db.connection import connect
from citebible_pipeline.gold.access import heldout_texts
from citebible_pipeline.query import Engine
from citebible_pipeline.query import engine as engine_module, labels, retrieve, route
from citebible_pipeline.rerank import pools


@contextmanager
def as_before():
    """The code paths this step replaced: no kept answers, every key read."""
    saved = pools.prefill, engine_module.exact_rows, route.excluded, labels.excluded
    scan = lambda keys, exclude: np.fromiter((k in exclude for k in keys), bool, len(keys))  # noqa: E731
    pools.prefill = lambda *args: None
    engine_module.exact_rows = lambda dense, levels, k, memo=None: retrieve.exact_rows(dense, levels, k)
    route.excluded = labels.excluded = scan
    try:
        yield
    finally:
        pools.prefill, engine_module.exact_rows, route.excluded, labels.excluded = saved


def same(a: pools.Pool, b: pools.Pool) -> bool:
    return (a.query.text == b.query.text and [(c.key, c.score) for c in a.cands] == [(c.key, c.score) for c in b.cands]
            and np.array_equal(a.X, b.X, equal_nan=True) and np.array_equal(a.labels, b.labels))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1500, help="training queries, a fixed sample of the asset's")
    args = ap.parse_args()
    engine = Engine(llm=None, reranker=None)
    with connect() as conn:
        heldout = heldout_texts(conn)
    queries, _ = pools.training_queries(engine, heldout, 1_000_000, 7, [], 0)
    random.Random(5).shuffle(queries)
    queries = queries[:args.queries]
    quiet = lambda message: None  # noqa: E731
    pools.collect(engine, queries[:20], progress=quiet)  # warm: the pool tables, the label vectors
    started = time.perf_counter()
    now = pools.collect(engine, queries, progress=quiet)
    now_s = time.perf_counter() - started
    with as_before():
        started = time.perf_counter()
        before = pools.collect(engine, queries, progress=quiet)
        before_s = time.perf_counter() - started
    differ = sum(not same(a, b) for a, b in zip(now, before)) + abs(len(now) - len(before))
    print(f"{len(queries)} training queries, {len(now)} pools")
    print(f"  before (own products, every key)   {before_s:7.1f} s  1.00x")
    print(f"  now (prefill, SplitKeys)           {now_s:7.1f} s  {before_s / now_s:4.2f}x  "
          f"{'same pools' if not differ else f'{differ} POOLS DIFFER'}")
    if differ:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
