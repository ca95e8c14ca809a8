"""Numbered SQL migrations (`sql/NNN_name.sql`), each applied exactly once, in order.

Each file runs in its own transaction together with its row in `schema_migrations`, so a failing
file leaves nothing behind and the error names it. A transaction-scoped advisory lock makes
concurrent callers (two Dagster runs starting at once) apply each file once.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import psycopg

from citebible_pipeline.db.connection import connect, register_types

_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")
_LOCK_KEY = 4_242_001


class MigrationError(RuntimeError):
    pass


def sql_dir() -> Path:
    override = os.environ.get("CITEBIBLE_SQL_DIR")
    path = Path(override) if override else Path(__file__).resolve().parents[2] / "sql"
    if not path.is_dir():
        raise MigrationError(f"migrations folder not found: {path} (set CITEBIBLE_SQL_DIR or install the repo with pip -e)")
    return path


def migration_files(folder: Path | None = None) -> list[Path]:
    folder = folder or sql_dir()
    files = sorted(p for p in folder.iterdir() if p.suffix == ".sql")
    for p in files:
        if not _NAME.match(p.name):
            raise MigrationError(f"{p}: migration names must look like 001_name.sql")
    numbers = [p.name[:3] for p in files]
    if len(set(numbers)) != len(numbers):
        raise MigrationError(f"{folder}: two migrations share a number: {numbers}")
    return files


def apply_migrations(url: str | None = None, folder: Path | None = None) -> list[str]:
    """Apply pending migrations; return the names applied now (empty when up to date)."""
    applied_now: list[str] = []
    with connect(url) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " filename text PRIMARY KEY, sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.commit()
        for path in migration_files(folder):
            body = path.read_text(encoding="utf-8")
            digest = hashlib.sha256(body.encode()).hexdigest()
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                    row = conn.execute("SELECT sha256 FROM schema_migrations WHERE filename = %s", (path.name,)).fetchone()
                    if row is not None:
                        continue
                    conn.execute(body)
                    conn.execute("INSERT INTO schema_migrations (filename, sha256) VALUES (%s, %s)", (path.name, digest))
            except psycopg.Error as exc:
                raise MigrationError(f"migration {path.name} failed and was rolled back: {exc}") from exc
            applied_now.append(path.name)
        register_types(conn)
    return applied_now
