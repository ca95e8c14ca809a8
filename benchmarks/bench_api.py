"""A bounded load run against the API on 127.0.0.1 (issues 12 and 23): at each concurrency level (1, 8, 32, 64 by
default) N searches over a mixed query list, stopping by itself (count and time bounded per level). Prints
throughput, p50/p99, errors by kind, and the ratio to Engine.search's p50 called in-process in the same run.

Needs the built database (`make run`). Usage (from the repo root):
python -m benchmarks.bench_api [--requests 400] [--levels 1,8,32,64] [--max-seconds 120]
"""

from __future__ import annotations

import argparse
import collections
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


def run_level(base: str, requests: int, concurrency: int, max_seconds: float) -> tuple[list[float], collections.Counter, float]:
    """`requests` searches at `concurrency`, stopping after `max_seconds`: latencies, errors by kind, wall time."""
    deadline = time.monotonic() + max_seconds
    lat: list[float] = []
    errors: collections.Counter = collections.Counter()
    lock = threading.Lock()

    def one(i: int, client: httpx.Client) -> None:
        if time.monotonic() > deadline:
            return
        t = time.perf_counter()
        try:
            r = client.get(base + "/api/search", params={"q": QUERIES[i % len(QUERIES)]})
            err = None if r.status_code == 200 else f"{r.status_code} {r.json().get('detail', '')[:40]}"
        except httpx.HTTPError as exc:
            err = type(exc).__name__
        with lock:
            lat.append((time.perf_counter() - t) * 1000)
            if err:
                errors[err] += 1

    started = time.perf_counter()
    with httpx.Client(timeout=30, limits=httpx.Limits(max_connections=concurrency)) as client, \
            ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda i: one(i, client), range(requests)))
    return lat, errors, time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=400, help="per concurrency level")
    ap.add_argument("--levels", default="1,8,32,64", help="concurrency levels, comma-separated")
    ap.add_argument("--max-seconds", type=float, default=120.0, help="per level: stop sending after this long")
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
    ip50 = statistics.median(inproc)
    print(f"in-process Engine.search p50 {ip50:.1f} ms ({len(QUERIES)} queries x 2); 127.0.0.1 only, "
          f"{args.requests} requests per level, at most {args.max_seconds:g} s each")
    print(f"{'concurrency':>11} {'requests':>9} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'p50/in-proc':>12}  errors")
    for c in (int(x) for x in args.levels.split(",")):
        lat, errors, wall = run_level(base, args.requests, c, args.max_seconds)
        kinds = ", ".join(f"{n} x {k}" for k, n in errors.most_common()) or "0"
        print(f"{c:>11} {len(lat):>9} {len(lat) / wall:>7.1f} {statistics.median(lat):>8.1f} {pct(lat, 0.99):>8.1f} "
              f"{statistics.median(lat) / ip50:>11.2f}x  {kinds}", flush=True)
    server.should_exit = True


if __name__ == "__main__":
    main()
