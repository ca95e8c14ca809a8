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


def describe_url(url: str) -> str:
    """Where a URL points, for error messages: host (or socket folder), port and database; never the password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        p = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "an unparsable database URL"
    host = p.get("host") or "localhost"
    where = f"socket {host}" if str(host).startswith("/") else f"host {host}:{p.get('port') or 5432}"
    return f"database {p.get('dbname') or p.get('user') or 'postgres'!r} on {where}"


@lru_cache(maxsize=4)
def get_pool(url: str | None = None, min_size: int = 1, max_size: int = 4, timeout: float = 10.0):
    """A process-wide pool for long-lived callers (the query module, the API). Connections are checked
    when handed out, so after a database restart the pool reconnects by itself instead of failing."""
    from psycopg_pool import ConnectionPool

    return ConnectionPool(url or database_url(), min_size=min_size, max_size=max_size, configure=register_types,
                          check=ConnectionPool.check_connection, timeout=timeout, open=True)
