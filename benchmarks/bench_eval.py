"""The evaluation's cost (retrieval_eval, most of `make run` after the embeddings): the same variants on the same
queries one at a time with no shared retrieval (how it ran before), with each query's retrieval shared by its
variants (`RetrievalContext.memo`), side by side in one run. (Two or three queries at once in threads measured no
faster than one on 2 cores, 47.4 / 53.8 s against 47.9 s: the rest of a ranking is Python holding the GIL.)
Every configuration must give the same table (seconds aside); it exits 1 if one does not.
Needs the built database (`make run`). Usage: python -m benchmarks.bench_eval [--limit 120]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from citebible_pipeline.db.connection import connect
from citebible_pipeline.gold.evaluate import evaluate
from citebible_pipeline.query import Engine
from citebible_pipeline.retrieval.baselines import VARIANTS, RetrievalContext
from citebible_pipeline.retrieval.pipeline import full_variant

SETS = ("heldout_topics", "nave_heldout", "dev_sentences")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=120, help="queries per set")
    args = ap.parse_args()
    engine = Engine(llm=None)
    variants = {**VARIANTS, **full_variant(engine)}
    tables, seconds = {}, {}
    with connect() as conn:
        for name, memo in (("no memo (before)", None), ("memo", {})):
            ctx = RetrievalContext(conn, engine.embedder, memo=memo)
            evaluate(ctx, variants, SETS, limit=10)  # warm: caches, the reranker's tables, the HNSW pages
            started = time.perf_counter()
            rows = evaluate(ctx, variants, SETS, limit=args.limit)
            seconds[name] = time.perf_counter() - started
            tables[name] = [dataclasses.replace(r, seconds=0.0) for r in rows]
    base = next(iter(seconds))
    n = sum(r.queries for r in tables[base])
    print(f"{n} rankings ({len(variants)} variants, {args.limit} queries a set of {', '.join(SETS)})")
    for name, s in seconds.items():
        same = "same table" if tables[name] == tables[base] else "TABLE DIFFERS"
        print(f"  {name:<24} {s:7.1f} s  {seconds[base] / s:4.2f}x  {same}")
    if any(t != tables[base] for t in tables.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
