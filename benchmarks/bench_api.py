"""A bounded load run against the API on 127.0.0.1 (issue 12): N searches at concurrency C over a mixed
query list, stopping by itself (count and time bounded). Prints throughput, p50/p95/p99, errors (must be
0), and the p50 of Engine.search called in-process in the same run, as a ratio.

Needs the built database (`make run`). Usage (from the repo root): python -m benchmarks.bench_api [--requests 2000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import uvicorn

from benchmarks.bench_query import QUERIES, pct
from citebible_pipeline.api.app import create_app
from citebible_pipeline.query import Engine


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-seconds", type=float, default=600.0, help="stop sending after this long")
    args = ap.parse_args()
    engine = Engine(llm=None)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(lambda: engine), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"

    inproc = []
    for q in QUERIES * 2:
        t = time.perf_counter()
        engine.search(q)
        inproc.append((time.perf_counter() - t) * 1000)

    deadline = time.monotonic() + args.max_seconds
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one(i: int, client: httpx.Client) -> None:
        if time.monotonic() > deadline:
            return
        t = time.perf_counter()
        try:
            r = client.get(base + "/api/search", params={"q": QUERIES[i % len(QUERIES)]})
            ok = r.status_code == 200
            err = None if ok else f"{r.status_code} {r.text[:80]}"
        except httpx.HTTPError as exc:
            err = f"{type(exc).__name__}: {exc}"
        with lock:
            lat.append((time.perf_counter() - t) * 1000)
            if err:
                errors.append(err)

    started = time.perf_counter()
    with httpx.Client(timeout=30, limits=httpx.Limits(max_connections=args.concurrency)) as client, \
            ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(lambda i: one(i, client), range(args.requests)))
    wall = time.perf_counter() - started
    server.should_exit = True
    p50, ip50 = statistics.median(lat), statistics.median(inproc)
    print(f"{len(lat)} requests at concurrency {args.concurrency} in {wall:.1f}s: {len(lat) / wall:.1f} req/s, errors {len(errors)}")
    print(f"HTTP latency p50 {p50:.1f} ms  p95 {pct(lat, 0.95):.1f} ms  p99 {pct(lat, 0.99):.1f} ms")
    print(f"in-process Engine.search p50 {ip50:.1f} ms; HTTP p50 / in-process p50 = {p50 / ip50:.2f}x "
          f"(under concurrency {args.concurrency} on {len(QUERIES)} queries)")
    for e in errors[:5]:
        print("  error:", e)


if __name__ == "__main__":
    main()
