"""Embedding benchmarks, each printed as a ratio measured in one run (issue 5).

(a) the embedding stage's throughput over raw `model.encode` on the same 5,000 real verse texts (>= 0.9)
(b) HNSW recall@50 against exact search on 200 real queries (OpenBible topic names), with p50/p95 latency (>= 0.98)
(c) a no-change rebuild's time over a full build's, on a scratch database (<= 0.05)
(d) torch and ONNX Runtime side by side on the same 3,000 verses: throughput ratio (issue 20's target >= 1.8),
    largest vector difference, one-query latency, HNSW recall@50 with each backend's query vectors, and the
    start-up time and peak RSS of a process that loads each backend and embeds one query
(e) the ONNX CPU layout side by side on the same verses and real chapter windows: one two-threaded caller, batch 64
    (before the twenty-third step) against a single-threaded caller per core, <= 512 tokens a call (now); and the
    int8 graph (R28, a switch), text by text: throughput ratios, largest difference, least cosine to fp32

Needs the built database (`make run`) for (b) and as the source of rows for (c).
Usage: python benchmarks/bench_embeddings.py [--ef-search 200] [--skip-rebuild]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from citebible_pipeline.db import apply_migrations, connect, database_url
from citebible_pipeline.db.load import replace_rows
from citebible_pipeline.embeddings.build import build_passage_embeddings, embed_docs
from citebible_pipeline.embeddings.documents import PassageDoc
from citebible_pipeline.embeddings.embedder import Embedder, resolve_model_path
from citebible_pipeline.embeddings.store import active_space, dense_search
from citebible_pipeline.sources import open_text_member
from citebible_pipeline.sources.datasets import DATASETS, data_dir


def raw_encode(emb: Embedder, texts: list[str]):
    """The backend's own encoder, without the embedding stage around it."""
    if emb.backend == "onnx":
        return emb._onnx[0].encode(texts, emb.batch_size)
    return emb.model.encode(texts, batch_size=emb.batch_size, normalize_embeddings=True, show_progress_bar=False)


def bench_throughput(emb: Embedder, texts: list[str]) -> None:
    docs = [PassageDoc("verse", i, 1, "GEN", "Genesis", 1, 1, 1, "x", "OT", "narrative", t, (t,)) for i, t in enumerate(texts)]
    raw_encode(emb, texts[:256])  # warm up
    raw_t, stage_t = [], []
    for _ in range(2):
        t = time.perf_counter()
        raw_encode(emb, texts)
        raw_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        embed_docs(emb, docs)
        stage_t.append(time.perf_counter() - t)
    raw, stage = min(raw_t), min(stage_t)
    print(f"(a) [{emb.backend}] raw encode: {len(texts) / raw:,.1f} texts/s; embedding stage: {len(texts) / stage:,.1f} texts/s")
    print(f"    throughput ratio stage/raw = {raw / stage:.3f}  (target >= 0.9)")


def topic_queries(n: int) -> list[str]:
    path = data_dir() / DATASETS["openbible_topic_votes"].bundled
    with open_text_member(path) as f:
        next(f)
        names = sorted({line.split("\t", 1)[0].strip() for line in f if line.strip()})
    random.Random(7).shuffle(names)
    return names[:n]


def bench_recall(emb: Embedder, ef_search: int, n: int = 200, k: int = 50) -> None:
    queries = topic_queries(n)
    qv = emb.encode_queries(queries)
    with connect() as conn:
        active = active_space(conn)
        if active is None:
            raise SystemExit("no passage embeddings: run `make run` first")
        sid, space = active
        recalls, t_ann, t_exact = [], [], []
        for level in ("verse",):
            for q in qv:
                exact = dense_search(conn, sid, space.dims, level, q, k, exact=True)
                t_exact.append(dense_search.last_seconds)
                ann = dense_search(conn, sid, space.dims, level, q, k, ef_search=ef_search)
                t_ann.append(dense_search.last_seconds)
                recalls.append(len({h[0] for h in exact} & {h[0] for h in ann}) / len(exact))

    def pct(xs, p):
        return sorted(xs)[int(p * (len(xs) - 1))] * 1000

    print(f"(b) HNSW recall@{k} vs exact, {len(queries)} topic-name queries, verse level, ef_search={ef_search}: "
          f"{statistics.mean(recalls):.4f} (min {min(recalls):.2f})  (target >= 0.98)")
    print(f"    latency HNSW p50 {pct(t_ann, .5):.1f} ms, p95 {pct(t_ann, .95):.1f} ms; exact p50 {pct(t_exact, .5):.1f} ms, "
          f"p95 {pct(t_exact, .95):.1f} ms; speed-up at p50 {pct(t_exact, .5) / pct(t_ann, .5):.1f}x")


def bench_rebuild(emb: Embedder) -> None:
    admin = database_url()
    params = conninfo_to_dict(admin)
    params["dbname"] = "citebible_bench"
    scratch = make_conninfo(**params)
    with connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS citebible_bench")
        conn.execute("CREATE DATABASE citebible_bench")
    try:
        apply_migrations(scratch)
        with connect(admin) as src, connect(scratch) as dst:
            for table in ("verses", "chapters", "verse_genres"):
                cur = src.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(table)))
                cols = [d.name for d in cur.description]
                types = [src.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s::regclass"
                                     " AND attname = %s", (table, c)).fetchone()[0] for c in cols]
                replace_rows(dst, table, cols, types, cur.fetchall())
        with connect(scratch) as conn:
            full = build_passage_embeddings(conn, emb)
            again = build_passage_embeddings(conn, emb)
        print(f"(c) full build {full.total_seconds:.1f}s ({full.embedded_now:,} passages); no-change rebuild "
              f"{again.total_seconds:.2f}s ({again.embedded_now} embedded)")
        print(f"    ratio no-change/full = {again.total_seconds / full.total_seconds:.4f}  (target <= 0.05)")
    finally:
        with connect(admin, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS citebible_bench")


_PROBE = """
import re, sys, time
t = time.perf_counter()
from citebible_pipeline.embeddings.embedder import Embedder
e = Embedder(backend=sys.argv[1])
e.encode_queries(["I feel far from God"])
hwm = re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)  # peak RSS of this process image
print(time.perf_counter() - t, int(hwm) / 1024)
"""


def _startup(backend: str) -> tuple[float, float]:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _PROBE, backend], check=True, capture_output=True, text=True).stdout
    seconds, rss = out.split()[-2:]
    return float(seconds), float(rss)


def bench_backends(texts: list[str], ef_search: int) -> None:
    import numpy as np

    onnx, torch = Embedder(backend="onnx"), Embedder(backend="torch")
    for emb in (onnx, torch):
        raw_encode(emb, texts[:256])  # warm up (and export the ONNX graph once if the cache is empty)
    secs, vecs = {}, {}
    for name, emb in (("torch", torch), ("onnx", onnx), ("torch ", torch), ("onnx ", onnx)):  # interleaved, best of 2
        t = time.perf_counter()
        vecs[name.strip()] = raw_encode(emb, texts)
        secs[name.strip()] = min(secs.get(name.strip(), 1e9), time.perf_counter() - t)
    diff = float(np.abs(vecs["onnx"] - vecs["torch"]).max())
    cos = float((vecs["onnx"] * vecs["torch"]).sum(axis=1).min())
    print(f"(d) {len(texts):,} verses, batch {onnx.batch_size}: torch {len(texts) / secs['torch']:,.1f} texts/s, onnx "
          f"{len(texts) / secs['onnx']:,.1f} texts/s; ratio onnx/torch = {secs['torch'] / secs['onnx']:.2f}x (target >= 1.8)")
    print(f"    max |difference| {diff:.2e}, min cosine {cos:.7f}; same space: {onnx.space == torch.space}")
    queries = topic_queries(200)
    for name, emb in (("torch", torch), ("onnx", onnx)):
        lat = []
        for q in queries[:100]:
            t = time.perf_counter()
            emb.encode_queries([q])
            lat.append(time.perf_counter() - t)
        print(f"    one-query embed p50 [{name}] {statistics.median(lat) * 1000:.1f} ms")
    with connect() as conn:
        sid, space = active_space(conn)
        qt, qo = torch.encode_queries(queries), onnx.encode_queries(queries)
        overlap, recall_t, recall_o = [], [], []
        for a, b in zip(qt, qo):
            exact = {h[0] for h in dense_search(conn, sid, space.dims, "verse", a, 50, exact=True)}
            ann_t = {h[0] for h in dense_search(conn, sid, space.dims, "verse", a, 50, ef_search=ef_search)}
            ann_o = {h[0] for h in dense_search(conn, sid, space.dims, "verse", b, 50, ef_search=ef_search)}
            recall_t.append(len(exact & ann_t) / 50)
            recall_o.append(len(exact & ann_o) / 50)
            overlap.append(len(ann_t & ann_o) / 50)
    print(f"    HNSW recall@50 vs exact (torch query vectors) {statistics.mean(recall_t):.4f}, (onnx) "
          f"{statistics.mean(recall_o):.4f}; top-50 overlap onnx vs torch {statistics.mean(overlap):.4f}")
    for name in ("torch", "onnx"):
        seconds, rss = _startup(name)
        print(f"    start-up [{name}]: load + one query {seconds:.1f} s, peak RSS {rss:,.0f} MiB")


def chapter_windows(n: int) -> list[str]:
    """The windows the build encodes for `n` chapters (seeded), from the built database."""
    from citebible_pipeline.embeddings.build import load_inputs
    from citebible_pipeline.embeddings.documents import build_documents

    emb = Embedder()
    with connect() as conn:
        verses, chapters = load_inputs(conn)
    docs = build_documents(verses, emb.token_counts([v.text for v in verses]), emb.window_budget(), chapters, "encode")
    picked = random.Random(7).sample([d for d in docs if d.level == "chapter"], n)
    return [w for d in picked for w in d.windows]


def bench_layout(texts: list[str], windows: list[str]) -> None:
    import numpy as np

    from citebible_pipeline.embeddings.onnx_backend import OnnxEncoder

    fp32 = Embedder(precision="fp32")
    enc, info = fp32._onnx
    before = OnnxEncoder(Path(info["path"]), Path(resolve_model_path(fp32.model_id)), fp32.space.max_seq_length, callers=1)
    int8 = Embedder(precision="int8")._onnx[0]
    for name, xs in (("verses", texts), ("chapter windows", windows)):
        secs, vecs = {}, {}
        for label, e in (("before", before), ("now", enc), ("int8", int8)) * 2:  # interleaved, best of 2
            t = time.perf_counter()
            vecs[label] = e.encode(xs, 64)
            secs[label] = min(secs.get(label, 1e9), time.perf_counter() - t)
        rate = {k: len(xs) / v for k, v in secs.items()}
        print(f"(e) {len(xs):,} {name}: before {rate['before']:,.1f}/s, now {rate['now']:,.1f}/s "
              f"(ratio {secs['before'] / secs['now']:.2f}x, max |difference| "
              f"{float(np.abs(vecs['now'] - vecs['before']).max()):.1e}); int8 {rate['int8']:,.1f}/s "
              f"({secs['now'] / secs['int8']:.2f}x now, least cosine to fp32 "
              f"{float((vecs['int8'] * vecs['now']).sum(axis=1).min()):.4f})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ef-search", type=int, default=200)
    ap.add_argument("--skip-rebuild", action="store_true")
    ap.add_argument("--backends-only", action="store_true", help="just (d), torch beside ONNX")
    ap.add_argument("--layout-only", action="store_true", help="just (e), the CPU layouts and int8")
    args = ap.parse_args()
    emb = Embedder()
    with connect() as conn:
        texts = [r[0] for r in conn.execute("SELECT text FROM verses WHERE NOT is_empty ORDER BY id")]
    random.Random(5).shuffle(texts)
    bench_layout(texts[:3000], chapter_windows(60))
    if args.layout_only:
        return
    bench_backends(texts[:3000], args.ef_search)
    if args.backends_only:
        return
    bench_throughput(emb, texts[:5000])
    bench_recall(emb, args.ef_search)
    if not args.skip_rebuild:
        bench_rebuild(emb)


if __name__ == "__main__":
    main()
