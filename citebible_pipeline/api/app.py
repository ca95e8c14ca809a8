"""FastAPI app: one Engine shared by every request, JSON errors (never a stack trace), 503 while the
database is unreachable and recovery by itself when it returns, and the server-rendered reading page."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib import resources

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates

from citebible_pipeline.api.page import page_context
from citebible_pipeline.bible.references import ReferenceError, parse_reference
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db.connection import UNREACHABLE, describe_url
from citebible_pipeline.query import Engine, EngineNotReady, QueryValidationError, SearchResponse
from citebible_pipeline.query.models import MAX_QUERY_CHARS, TRANSLATION_KEY, VerseText
from citebible_pipeline.query.retrieve import passage_verses

MAX_VERSES = 250  # /api/verses returns at most this many (the longest chapter, Psalm 119, has 176), then says so

log = logging.getLogger(__name__)


class EngineHolder:
    """Creates the Engine on first use and again after a failed start, so an app started while the
    database is down begins answering once it is back."""

    def __init__(self, factory: Callable[[], Engine]) -> None:
        self.factory = factory
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def get(self) -> Engine:
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    self._engine = self.factory()
        return self._engine


def create_app(factory: Callable[[], Engine] | None = None, url: str | None = None) -> FastAPI:
    holder = EngineHolder(factory or (lambda: Engine(url, llm="env")))
    app = FastAPI(title="CiteBible", description="Bible passages that serve the reader's need (World English Bible, "
                  "OpenBible.info votes).", version="0.1.0")
    app.state.engine = holder
    templates = Jinja2Templates(directory=str(resources.files("citebible_pipeline.api").joinpath("templates")))

    def where() -> str:
        engine = holder._engine
        return describe_url(engine.url) if engine else describe_url(url) if url else "the configured database"

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

    for exc_type in UNREACHABLE:
        @app.exception_handler(exc_type)
        async def _db_down(request: Request, exc: Exception):
            log.warning("database unavailable: %s", exc)
            return JSONResponse({"detail": f"database unavailable ({where()}); retry shortly"}, status_code=503)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse({"detail": "internal error; it has been logged"}, status_code=500)

    @app.get("/api/search", response_model=SearchResponse)
    def search(q: str = Query(..., max_length=MAX_QUERY_CHARS, description=f"at most {MAX_QUERY_CHARS} characters"),
               k: int = Query(5, ge=1, le=50),
               translation: str = Query(DEFAULT_TRANSLATION, pattern=TRANSLATION_KEY, description="web or bsb (when built)")
               ) -> SearchResponse:
        return holder.get().search(q, k=k, translation=translation)

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
            return JSONResponse({"status": "unavailable", "database": f"unreachable ({where()})", "detail": str(exc)[:200]},
                                status_code=503)
        return JSONResponse({"status": "ok", "database": f"reachable ({where()})",
                             "embedding_space": {"id": engine.space_id, "model": engine.embedder.model_id, "dims": engine.dims},
                             "serving": engine.describe(), "floor_calibrated": engine.floor is not None, "rows": counts,
                             "translations": sorted(engine.translations)})

    @app.get("/", response_class=HTMLResponse)
    def page(request: Request, q: str = "", k: int = 5) -> HTMLResponse:
        ctx = page_context(holder, q, max(1, min(k, 10)), where)
        return templates.TemplateResponse(request, "index.html", ctx, status_code=ctx.pop("status", 200))

    return app
