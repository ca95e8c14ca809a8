"""The one way to get a database connection.

`DATABASE_URL` (or `CITEBIBLE_DATABASE_URL`) selects any Postgres >= 15 with pgvector >= 0.8; unset,
the embedded server is started or attached. pgvector's types are registered on every connection.
"""

from __future__ import annotations

import os
from functools import lru_cache

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import PoolTimeout

URL_ENV_VARS = ("CITEBIBLE_DATABASE_URL", "DATABASE_URL")
# Per statement on the query side's pool (never the asset writers'): bench_query's retrieval p50 is 11.5 ms,
# so 5 s is headroom for a cold cache, and a runaway statement cannot hold a connection for longer.
DEFAULT_STATEMENT_TIMEOUT_MS = 5000


def statement_timeout_ms() -> int:
    """CITEBIBLE_STATEMENT_TIMEOUT_MS (0: none), else DEFAULT_STATEMENT_TIMEOUT_MS."""
    return int(os.environ.get("CITEBIBLE_STATEMENT_TIMEOUT_MS", DEFAULT_STATEMENT_TIMEOUT_MS))
# What a caller sees while the database is down or restarting: the CLI says so in one line, the API 503s.
UNREACHABLE = (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)


def database_url() -> str:
    for var in URL_ENV_VARS:
        if os.environ.get(var):
            return os.environ[var]
    from citebible_pipeline.db.embedded import ensure_server

    return ensure_server()


def register_types(conn: psycopg.Connection) -> None:
    """Register pgvector types if the extension exists (before migration 001 it does not)."""
    try:
        register_vector(conn)
    except psycopg.ProgrammingError:
        pass
    if not conn.autocommit and conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS:
        conn.commit()  # don't leave the type lookup's transaction open


def connect(url: str | None = None, *, autocommit: bool = False, **kwargs) -> psycopg.Connection:
    conn = psycopg.connect(url or database_url(), autocommit=autocommit, **kwargs)
    register_types(conn)
    return conn


def describe_url(url: str, public: bool = False) -> str:
    """Where a URL points, for error messages: host (or socket folder), port and database; never the password.
    `public` (what an HTTP caller sees): a socket is "a local socket", never its folder's path."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        p = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "an unparsable database URL"
    host = p.get("host") or "localhost"
    socket = str(host).startswith("/")
    where = ("a local socket" if public else f"socket {host}") if socket else f"host {host}:{p.get('port') or 5432}"
    return f"database {p.get('dbname') or p.get('user') or 'postgres'!r} on {where}"


@lru_cache(maxsize=4)
def get_pool(url: str | None = None, min_size: int = 1, max_size: int = 4, timeout: float = 10.0,
             statement_timeout: int | None = None):
    """A process-wide pool for long-lived callers (the query module, the API). Connections are checked
    when handed out, so after a database restart the pool reconnects by itself instead of failing. Every
    statement on it is cut at `statement_timeout` ms (None: statement_timeout_ms())."""
    from psycopg_pool import ConnectionPool

    ms = statement_timeout_ms() if statement_timeout is None else statement_timeout
    return ConnectionPool(url or database_url(), min_size=min_size, max_size=max_size, configure=register_types,
                          check=ConnectionPool.check_connection, timeout=timeout, open=True,
                          kwargs={"options": f"-c statement_timeout={int(ms)}"})


def pool_saturated(pool) -> bool:
    """True when every connection the pool may open is open and handed out: a wait that timed out then means
    overload (too many requests at once), not an outage (the database cannot be reached)."""
    stats = pool.get_stats()
    return stats.get("pool_size", 0) >= stats.get("pool_max", 1) and stats.get("pool_available", 0) == 0
