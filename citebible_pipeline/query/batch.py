"""How the engine holds numpy's BLAS: one thread for its process (`hold_blas`; retrieval/batch.py holds it for many
queries at once)."""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def hold_blas(threads: int | None):
    """numpy's BLAS held to `threads` for the rest of the process (None: left as it is); the limiter, which can restore
    it. The engine's products are small (one sentence and its rewrites against ~21,000 label rows): a second BLAS
    thread costs more than it saves and spins when idle, taking CPU from the next search and from Postgres. Measured
    on 2 cores, one thread against two: bench_query's Engine.search p50 33.7 / 33.4 ms against 39.8 / 38.6 ms (two runs
    each), p95 51.8 / 48.2 against 72.5 / 62.6; bench_api at 8 concurrent requests 37.3 against 27.2 per second."""
    return None if threads is None else threadpool_limits(limits=threads, user_api="blas")
