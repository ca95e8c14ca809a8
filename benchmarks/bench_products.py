"""The query's two large products (twenty-ninth step): the verse matrix for exact retrieval (retrieve.Level) and the
label vectors (labels.LabelIndex.columns), each with a few query vectors, both ways side by side in one run (interleaved,
best of --rounds medians): the (rows, dims) matrix times the vectors, as the code did before, against the vectors times
the stored (dims, rows) columns, as it does now. It also checks that exact retrieval gives the same answer both ways.

Needs the built database (`make run`). Usage: python benchmarks/bench_products.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from citebible_pipeline.query import Engine
from citebible_pipeline.query.retrieve import DenseQuery, _top, exact_rows

WIDTHS = (1, 2, 4, 8, 12, 256)  # one sentence alone; with its rewrites (the bench_query mix used 1-12); a pools chunk


def _median_ms(fn, n: int) -> float:
    fn()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    engine = Engine(llm=None)
    engine.search("warm up")
    verse = engine.pool_tables().exact_levels["verse"]
    labels = engine.serving.data.labels
    rng = np.random.default_rng(0)
    matrices = {"verse": (verse.vectors, verse.columns)}
    if labels.vectors is not None:
        matrices["labels"] = (labels.vectors, labels.columns)
    for name, (rows, cols) in matrices.items():
        print(f"{name}: {rows.shape[0]} x {rows.shape[1]} float32")
        for w in WIDTHS:
            v = rng.standard_normal((w, rows.shape[1])).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            n = 3 if w >= 64 else 15
            old, new = [], []
            for _ in range(args.rounds):
                old.append(_median_ms(lambda: rows @ v.T, n))
                new.append(_median_ms(lambda: v @ cols, n))
            print(f"  width {w:>3}: rows x vectors {min(old):7.2f} ms   vectors x columns {min(new):7.2f} ms"
                  f"   {min(old) / min(new):.2f}x")
    qs = engine.encode(["I feel so alone since my wife left", "the promise to Abraham", "Jesus wept"])
    mine = exact_rows([DenseQuery(i, "verse", q) for i, q in enumerate(qs)], {"verse": verse}, 30)
    sims = verse.vectors @ qs.T  # the way before: rows times the vectors, then the same rescoring near the 30th
    before = [int(verse.starts[r]) for j in range(len(qs)) for r in _top(sims[:, j], verse.starts, 30, verse.vectors, qs[j])[0]]
    assert [r[3] for r in mine] == before, "exact retrieval answered differently through the columns"
    print(f"exact retrieval: the same {len(before)} rows both ways")


if __name__ == "__main__":
    main()
