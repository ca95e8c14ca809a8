"""Query latency (issue 10): p50/p95 of Engine.search over 50 mixed queries, measured in the same run
as the floor it is compared to (one query embedding + one ANN query at the engine's ef_search), with
the per-stage split. Targets: search p50 <= 4x the floor and <= 60 ms on this CPU (offline default).

Needs the built database (`make run`). Usage: python benchmarks/bench_query.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from citebible_pipeline.embeddings.store import dense_search
from citebible_pipeline.query import Engine
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.query.variant import Variant

# Written for the benchmark (a mix a study and pastoral API would see), not taken from the gold set.
QUERIES = [
    "my husband left me and I feel worthless", "I keep having panic attacks at work", "our baby was stillborn",
    "I'm scared of losing my house", "my son is using drugs and I don't know what to do", "I feel empty inside",
    "I cheated on my wife and feel awful", "why does God allow suffering", "I'm so stressed about exams",
    "my dad has cancer", "I have no motivation to pray", "I'm lonely after moving to a new city",
    "I hate my boss", "my friend committed suicide", "I can't sleep because of worry",
    "the kingdom of God", "the sermon on the mount", "Paul's letters about grace", "the exodus from Egypt",
    "the promise to Abraham", "the good shepherd", "the Holy Spirit as helper", "the day of the Lord",
    "baptism of Jesus", "the ten commandments", "wisdom in Proverbs", "the prodigal son", "faith and works",
    "the tower of Babel", "the last supper", "humility", "patience", "generosity", "hospitality", "courage",
    "John 3:16", "Ps 23", "Rom 8:28-30", "1 Cor 13", "Gen 1:1-3",
    "how to fix a bicycle chain", "best price for a used car", "what is quantum computing",
    "how do I make lasagna", "football scores tonight",
    "Jesus wept", "love your neighbor", "do not be afraid", "the Lord is my shepherd", "forgive us our debts",
]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    engine = Engine(llm=None)
    ef = TUNING.ef_search
    for q in QUERIES[:5]:  # warm up the model, the pool and the plan cache
        engine.search(q)
    floor_ms, search_ms, stages = [], [], {}
    with engine.pool.connection() as conn:
        for _ in range(args.rounds):
            for q in QUERIES:
                t = time.perf_counter()
                v = engine.encode([q])[0]
                dense_search(conn, engine.space_id, engine.dims, "verse", v, k=30, ef_search=ef)
                floor_ms.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                resp = engine.search(q)
                search_ms.append((time.perf_counter() - t) * 1000)
                for name, ms in resp.timings.items():
                    stages.setdefault(name, []).append(ms)
    f50, s50, s95 = statistics.median(floor_ms), statistics.median(search_ms), pct(search_ms, 0.95)
    print(f"queries {len(QUERIES)} x {args.rounds} rounds, ef_search {ef}")
    print(f"floor (1 embedding + 1 ANN): p50 {f50:.1f} ms  p95 {pct(floor_ms, 0.95):.1f} ms")
    print(f"search():                    p50 {s50:.1f} ms  p95 {s95:.1f} ms")
    print(f"search p50 / floor p50 = {s50 / f50:.2f}x (target <= 4x), p50 <= 60 ms: {'yes' if s50 <= 60 else 'NO'}")
    print("per stage p50 (ms): " + "  ".join(f"{k} {statistics.median(v):.1f}" for k, v in stages.items()))
    # what document expansion costs, side by side in this run (interleaved per query, so load hits both alike)
    cfgs = {"full": Variant(), "labels off": Variant(labels=False)}
    side: dict[str, list[float]] = {k: [] for k in cfgs}
    for _ in range(args.rounds):
        for q in QUERIES:
            for name, v in cfgs.items():
                t = time.perf_counter()
                engine.rank(q, None, v)
                side[name].append((time.perf_counter() - t) * 1000)
    base = statistics.median(side["labels off"])
    for name, xs in side.items():
        print(f"rank(), {name:<12} p50 {statistics.median(xs):6.1f} ms  {statistics.median(xs) / base:.2f}x")


if __name__ == "__main__":
    main()
