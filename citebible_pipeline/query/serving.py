"""What the engine serves, as one immutable snapshot it can swap atomically.

A search reads `engine.serving` once and uses that snapshot to the end, so a swap never mixes old themes
with a new floor inside one request, and requests in flight finish on the old one. The database versions
the artefacts itself (`serving_versions`, migration 012: a trigger bumps a counter in the writer's own
transaction), so noticing a new reranker, theme vocabulary, floor, genre boosts or embedding space costs one
small SELECT. A new snapshot is loaded beside the serving one and replaces it only when all of it loaded:
an artefact that fails to load is refused (logged, reported in `/api/health`) and never serves.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field, replace
from typing import Callable

from citebible_pipeline.db.connection import UNREACHABLE
from citebible_pipeline.query.features import PoolTables
from citebible_pipeline.query import startup
from citebible_pipeline.query.rerank import Reranker, load_chosen
from citebible_pipeline.query.startup import EngineData

log = logging.getLogger(__name__)

# Rule stated before measuring: a reader may see the previous artefact for at most this long after a
# materialization commits; the check is one primary-key scan of a 5-row table.
DEFAULT_RELOAD_INTERVAL_S = 5.0


def reload_interval_s() -> float:
    """CITEBIBLE_RELOAD_INTERVAL_S (0: never reload), else DEFAULT_RELOAD_INTERVAL_S."""
    return float(os.environ.get("CITEBIBLE_RELOAD_INTERVAL_S", DEFAULT_RELOAD_INTERVAL_S))


@dataclass(frozen=True)
class Serving:
    data: EngineData
    reranker: Reranker | None
    versions: dict[str, int]
    # a translation's reranker feature tables, loaded on first use; they depend on the space and genre boosts
    # only, so a snapshot that keeps both keeps them
    tables: dict[str, PoolTables] = field(default_factory=dict)

    def reuses_tables_of(self, old: Serving) -> bool:
        return self.data.space_id == old.data.space_id and self.data.boosts == old.data.boosts


def load_serving(conn, space, encode: Callable, choice: Reranker | str | None, versions: dict[str, int],
                 old: Serving | None, tables_for: Callable[..., PoolTables]) -> Serving:
    """A full snapshot: the start-up data, then the chosen reranker over it (a name is loaded from the table, an
    object or None kept); the feature tables are kept from `old` when the space and genre boosts are the same."""
    fresh = Serving(startup.load(conn, space, encode), None, versions)
    if old is not None and fresh.reuses_tables_of(old):
        fresh = replace(fresh, tables=old.tables)
    if not isinstance(choice, str):
        return replace(fresh, reranker=choice)
    return replace(fresh, reranker=load_chosen(conn, None if choice == "env" else choice, lambda: tables_for(conn, fresh)))


def describe(s: Serving, embedder, follower: Follower, load_seconds: float) -> dict:
    r = s.reranker
    return {"embedder": {"model": embedder.model_id, **embedder.describe()},
            "reranker": {"kind": "none (fused order)" if r is None else r.kind, "model_id": None if r is None else r.model_id},
            "floor_calibrated": s.data.floor is not None, "load_seconds": round(load_seconds, 2),
            "versions": s.versions, "swaps": follower.swaps, "refused": follower.error}


def read_versions(conn) -> dict[str, int]:
    """{artefact: version}; empty on a database migrated before 012 (nothing to follow there)."""
    if conn.execute("SELECT to_regclass('serving_versions')").fetchone()[0] is None:
        return {}
    return {a: int(v) for a, v in conn.execute("SELECT artefact, version FROM serving_versions")}


class Follower:
    """Swaps an engine to newly committed artefacts: `check()` once, or `start()` a daemon thread that checks
    every `interval_s`. A load failure is remembered per version set, so a broken artefact is refused once
    (not reloaded on every tick) and the next materialization is tried again."""

    def __init__(self, current: Callable[[], Serving], versions: Callable[[], dict[str, int]],
                 load: Callable[[dict[str, int], Serving], Serving], install: Callable[[Serving], None]) -> None:
        self._current, self._versions, self._load, self._install = current, versions, load, install
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.refused: dict[str, int] | None = None
        self.error: str | None = None  # why the newest version is not serving (None: it is)
        self.swaps = 0

    def check(self) -> bool:
        """True when a new snapshot now serves. Database outages propagate (nothing is refused for them)."""
        with self._lock:
            versions = self._versions()
            old = self._current()
            if versions == old.versions or versions == self.refused:
                return False
            try:
                fresh = self._load(versions, old)
            except UNREACHABLE:
                raise
            except Exception as exc:  # anything that fails to load must not replace what serves
                self.refused, self.error = versions, f"{type(exc).__name__}: {exc}"
                log.error("refused a new artefact (versions %s); the previous one keeps serving: %s", versions, self.error)
                return False
            self._install(fresh)
            self.refused, self.error = None, None
            self.swaps += 1
            log.info("now serving versions %s", versions)
            return True

    def start(self, interval_s: float) -> None:
        if interval_s <= 0 or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(interval_s,), name="citebible-follower", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _loop(self, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            try:
                self.check()
            except UNREACHABLE as exc:  # the database is away: the requests say so; try again next tick
                log.debug("artefact check skipped, database unreachable: %s", exc)
            except Exception:
                log.exception("artefact check failed")
