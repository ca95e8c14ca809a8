"""FastAPI app: one Engine shared by every request, JSON errors (never a stack trace), 503 while the
database is unreachable and recovery by itself when it returns, and the server-rendered reading page.

Limits, each saying what it is: a search gets CITEBIBLE_REQUEST_BUDGET_S (default 10 s) before it is answered
with a 503 and Retry-After; a statement on the engine's pool is cut at CITEBIBLE_STATEMENT_TIMEOUT_MS (default
5,000, db/connection.py); every connection busy is overload (503, Retry-After, "busy"), not an outage; CORS is
closed unless CITEBIBLE_CORS_ORIGINS lists origins (comma-separated)."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Callable
from contextlib import asynccontextmanager
from importlib import resources

import psycopg
from fastapi import FastAPI, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.middleware.cors import CORSMiddleware
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates

from citebible_pipeline.api.page import page_context
from citebible_pipeline.bible.references import ReferenceError, parse_reference
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db.connection import UNREACHABLE, describe_url, pool_saturated, statement_timeout_ms
from citebible_pipeline.query import Engine, EngineNotReady, QueryValidationError, SearchResponse
from citebible_pipeline.query.models import MAX_QUERY_CHARS, TRANSLATION_KEY, VerseText
from citebible_pipeline.query.retrieve import passage_verses
from citebible_pipeline.query.serving import reload_interval_s

MAX_VERSES = 250  # /api/verses returns at most this many (the longest chapter, Psalm 119, has 176), then says so
DEFAULT_REQUEST_BUDGET_S = 10.0  # rule: a reader waits at most this; search p50 is 30 ms in-process (bench_query)
RETRY_AFTER_S = 1


def request_budget_s() -> float:
    return float(os.environ.get("CITEBIBLE_REQUEST_BUDGET_S", DEFAULT_REQUEST_BUDGET_S))


_PATH = re.compile(r"(?<![\w.:/])/[^\s\"']+")


def no_paths(text: str) -> str:
    """A driver's message as a caller may see it: every absolute path (a socket's folder) named only as <path>."""
    return _PATH.sub("<path>", text)


def cors_origins() -> list[str]:
    return [o.strip() for o in os.environ.get("CITEBIBLE_CORS_ORIGINS", "").split(",") if o.strip()]

log = logging.getLogger(__name__)


class EngineHolder:
    """Creates the Engine on first use and again after a failed start, so an app started while the
    database is down begins answering once it is back; then follows the data (every
    CITEBIBLE_RELOAD_INTERVAL_S, default 5 s: a newly materialized reranker, theme vocabulary, floor, genre
    boosts or space is swapped in without a restart, query/serving.py)."""

    def __init__(self, factory: Callable[[], Engine]) -> None:
        self.factory = factory
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def get(self) -> Engine:
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    engine = self.factory()
                    engine.follower.start(reload_interval_s())
                    self._engine = engine
        return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.follower.stop()


def create_app(factory: Callable[[], Engine] | None = None, url: str | None = None) -> FastAPI:
    holder = EngineHolder(factory or (lambda: Engine(url, llm="env")))
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        holder.close()

    app = FastAPI(lifespan=lifespan, title="CiteBible", description="Bible passages that serve the reader's need (World English Bible, "
                  "OpenBible.info votes).", version="0.1.0")
    app.state.engine = holder
    if cors_origins():  # closed by default: no CORS headers at all
        app.add_middleware(CORSMiddleware, allow_origins=cors_origins(), allow_methods=["GET"], allow_headers=["*"])
    templates = Jinja2Templates(directory=str(resources.files("citebible_pipeline.api").joinpath("templates")))

    def where(public: bool = True) -> str:
        """Where the database is, as a caller may see it (no filesystem path); the log gets the full form."""
        engine = holder._engine
        target = engine.url if engine else url
        return describe_url(target, public) if target else "the configured database"

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        msgs = "; ".join(f"{'.'.join(str(x) for x in e['loc'][1:])}: {e['msg']}" for e in exc.errors())
        return JSONResponse({"detail": msgs}, status_code=422)

    @app.exception_handler(QueryValidationError)
    async def _bad_query(request: Request, exc: QueryValidationError):
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(EngineNotReady)
    async def _not_ready(request: Request, exc: EngineNotReady):
        return JSONResponse({"detail": f"the index is not built: {exc}"}, status_code=503)

    def busy(detail: str) -> JSONResponse:
        return JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})

    for exc_type in UNREACHABLE:
        @app.exception_handler(exc_type)
        async def _db_down(request: Request, exc: Exception):
            engine = holder._engine
            if engine is not None and pool_saturated(engine.pool):
                log.warning("overload: every database connection busy (%s)", exc)
                return busy(f"server busy: all {engine.pool.max_size} database connections are in use; retry shortly")
            log.warning("database unavailable (%s): %s", where(public=False), exc)
            return JSONResponse({"detail": f"database unavailable ({where()}); retry shortly"}, status_code=503)

    @app.exception_handler(psycopg.errors.QueryCanceled)
    async def _statement_timeout(request: Request, exc: Exception):
        log.warning("statement cut at its time limit: %s", exc)
        return busy(f"a database statement ran past its {statement_timeout_ms():,} ms limit; retry shortly")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse({"detail": "internal error; it has been logged"}, status_code=500)

    @app.get("/api/search", response_model=SearchResponse)
    async def search(q: str = Query(..., max_length=MAX_QUERY_CHARS, description=f"at most {MAX_QUERY_CHARS} characters"),
               k: int = Query(5, ge=1, le=50),
               translation: str = Query(DEFAULT_TRANSLATION, pattern=TRANSLATION_KEY, description="web or bsb (when built)")
               ):
        budget = request_budget_s()
        try:  # the search goes on in its thread; the reader is answered when the budget is spent
            return await asyncio.wait_for(run_in_threadpool(lambda: holder.get().search(q, k=k, translation=translation)),
                                          budget)
        except asyncio.TimeoutError:
            log.warning("search over its %.1f s budget: %r", budget, q[:80])
            return busy(f"the search took longer than its {budget:g} s budget; retry shortly")

    @app.get("/api/verses/{reference}")
    def verses(reference: str, translation: str = Query(DEFAULT_TRANSLATION, pattern=TRANSLATION_KEY)) -> dict:
        try:
            ref = parse_reference(reference)
        except ReferenceError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=404)
        engine = holder.get()
        engine.check_translation(translation)  # a translation not built: 422, like /api/search
        with engine.pool.connection() as conn:
            rows = passage_verses(conn, ref.start_id, ref.end_id, translation, limit=MAX_VERSES + 1)
        truncated = len(rows) > MAX_VERSES
        return {"reference": ref.format(), "translation": translation, "truncated": truncated,
                "limit": MAX_VERSES if truncated else None,
                "verses": [VerseText(id=i, ref=r, text=t).model_dump() for i, r, t in rows[:MAX_VERSES]]}

    @app.get("/api/health")
    def health() -> JSONResponse:
        try:
            engine = holder.get()
            with engine.pool.connection() as conn:
                counts = dict(conn.execute(
                    "SELECT 'verses', count(*) FROM verses WHERE translation = %s UNION ALL SELECT 'passage_embeddings',"
                    " count(*) FROM passage_embeddings UNION ALL SELECT 'query_themes', count(*) FROM query_themes",
                    (DEFAULT_TRANSLATION,)).fetchall())
        except UNREACHABLE as exc:
            log.warning("health: database unreachable (%s): %s", where(public=False), exc)
            return JSONResponse({"status": "unavailable", "database": f"unreachable ({where()})",
                                 "detail": no_paths(" ".join(str(exc).split()))[:200]}, status_code=503)
        return JSONResponse({"status": "ok", "database": f"reachable ({where()})",
                             "embedding_space": {"id": engine.space_id, "model": engine.embedder.model_id, "dims": engine.dims},
                             "serving": engine.describe(), "floor_calibrated": engine.floor is not None, "rows": counts,
                             "translations": sorted(engine.translations)})

    @app.get("/", response_class=HTMLResponse)
    def page(request: Request, q: str = "", k: int = 5) -> HTMLResponse:
        ctx = page_context(holder, q, max(1, min(k, 10)), where)
        return templates.TemplateResponse(request, "index.html", ctx, status_code=ctx.pop("status", 200))

    return app
