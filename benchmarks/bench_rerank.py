"""Rerank latency (issue 11): p50/p95 of reranking one 50-candidate pool, feature model (features +
LightGBM) and cross-encoder side by side in one run, on the same recorded pools; and search() p50
with and without the feature model. Target: feature model p50 <= 15 ms on this CPU.

The cross-encoder is the active fine-tuned one (`make cross-encoder`), else the MiniLM weights with a
fresh one-logit head (the same network, so the same cost). Needs the built database (`make run`).
Usage: python benchmarks/bench_rerank.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.bench_query import QUERIES, pct
from citebible_pipeline.embeddings.embedder import DEFAULT_MODEL, resolve_model_path
from citebible_pipeline.query import Engine
from citebible_pipeline.query.variant import Variant
from citebible_pipeline.query.rerank import CrossEncoderReranker, Reranker
from citebible_pipeline.rerank.pools import Recorder

POOL = 50


def _time(engine: Engine, reranker: Reranker, pools, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        for q, cands in pools:
            copies = [c.copy() for c in cands]
            t = time.perf_counter()
            reranker.rerank(q, copies, engine.rerank_inputs)
            out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    engine = Engine(llm=None)
    if engine.reranker is None or engine.reranker.kind != "features":
        raise SystemExit("no active feature model: run `make run` (it materializes reranker_model)")
    keep, pools = Recorder(engine), []
    for q in QUERIES:
        keep.seen = None
        engine.rank(q, None, Variant(floor=False), reranker=keep)
        if keep.seen and len(keep.seen[1]) >= POOL:
            pools.append((keep.seen[0], keep.seen[1][:POOL]))
    try:
        ce = Engine(llm=None, reranker="cross_encoder").reranker
    except Exception:  # noqa: BLE001 - a broken stored model must not stop the timing
        ce = None
    ce_note = f"fine-tuned model {ce.model_id}" if ce is not None else "MiniLM + fresh head (no fine-tuned model stored)"
    ce = ce or CrossEncoderReranker(resolve_model_path(DEFAULT_MODEL))
    _time(engine, engine.reranker, pools[:3], 1), _time(engine, ce, pools[:2], 1)  # warm up
    feat = _time(engine, engine.reranker, pools, args.rounds)
    cross = _time(engine, ce, pools, 1)
    on, off = [], []
    for _ in range(args.rounds):
        for q in QUERIES:
            t = time.perf_counter()
            engine.search(q)
            on.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            engine.rank(q, None, Variant(rerank=False))
            off.append((time.perf_counter() - t) * 1000)
    f50, c50 = statistics.median(feat), statistics.median(cross)
    print(f"pools {len(pools)} of {POOL} candidates each, rounds {args.rounds}")
    print(f"feature model rerank: p50 {f50:.2f} ms  p95 {pct(feat, 0.95):.2f} ms  (target <= 15 ms: {'yes' if f50 <= 15 else 'NO'})")
    print(f"cross-encoder rerank: p50 {c50:.1f} ms  p95 {pct(cross, 0.95):.1f} ms  ({ce_note})")
    print(f"cross-encoder / feature model = {c50 / f50:.0f}x")
    print(f"search() p50: {statistics.median(on):.1f} ms with the feature model, {statistics.median(off):.1f} ms without"
          f" (query module target <= 60 ms)")


if __name__ == "__main__":
    main()
