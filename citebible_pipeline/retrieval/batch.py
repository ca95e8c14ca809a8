"""Many queries through the engine at once (the evaluation, the reranker's training pools, the floor's calibration): a
rank is about half Python and half waiting on Postgres, so two threads keep both cores busy. numpy's BLAS is held to
one thread while they run: its idle threads spin, and on 400 held-out topics one caller burned 17.7 s of CPU for
11.4 s of wall with two BLAS threads and 7.1 s with one (same wall), the CPU a second caller and Postgres need.
Measured there (2 cores): one caller 12.8 s, two callers 7.4 s, results unchanged."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from citebible_pipeline.query.batch import hold_blas

T = TypeVar("T")
R = TypeVar("R")
MAX_WORKERS = 4  # the engine's connection pool holds 8; beyond the cores more callers only queue


def default_workers() -> int:
    """CITEBIBLE_QUERY_WORKERS when set (1: one at a time), else one per core up to MAX_WORKERS."""
    value = os.environ.get("CITEBIBLE_QUERY_WORKERS")
    if value is not None:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"CITEBIBLE_QUERY_WORKERS={value!r}: expected a whole number of 1 or more")
        return int(value)
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))


def map_queries(fn: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> Iterator[R]:
    """`fn` over `items` on `workers` threads, results in the order of `items` (so what is built from them does
    not depend on the threads). `fn` must be safe to call from several threads (Engine.rank is)."""
    workers = workers or default_workers()
    with hold_blas(1):  # restored when the last result is read
        if workers == 1:
            yield from map(fn, items)
            return
        with ThreadPoolExecutor(workers, thread_name_prefix="query") as pool:
            yield from pool.map(fn, items)
