"""Dagster resources: the database and the source cache. Heavy state lives outside the frozen models."""


from contextlib import contextmanager
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from citebible_pipeline.db import apply_migrations, connect, database_url
from citebible_pipeline.db.embedded import dagster_home
from citebible_pipeline.db.locks import exclusive
from citebible_pipeline.sources import DATASETS, FetchResult, fetch, resolve_url

_migrated: set[str] = set()


class PostgresResource(ConfigurableResource):
    """Postgres + pgvector. Empty url: DATABASE_URL / CITEBIBLE_DATABASE_URL, else the embedded server."""

    url: str = Field(default="", description="postgresql:// URL; empty means the environment or embedded default")
    lock_wait_seconds: float = Field(default=60.0, description="how long a second run of the same asset partition "
                                     "waits for the first before it fails")

    def resolved_url(self) -> str:
        url = self.url or database_url()
        if url not in _migrated:  # once per process: every run may be the first after a deploy
            apply_migrations(url)
            _migrated.add(url)
        return url

    @contextmanager
    def connect(self, autocommit: bool = False):
        """Commits on success, rolls back on error (psycopg's connection context), always closes."""
        with connect(self.resolved_url(), autocommit=autocommit) as conn:
            yield conn

    @contextmanager
    def partition_writer(self, asset: str, partition: str):
        """A connection that alone writes this asset's partition until the block ends (db/locks.py)."""
        with self.connect() as conn, exclusive(conn, f"citebible:{asset}:{partition}", self.lock_wait_seconds):
            yield conn


class SourcesResource(ConfigurableResource):
    """Where source archives come from (bundled snapshot or live URLs) and where they are cached."""

    use_live: bool = Field(default=False, description="fetch from the live URLs instead of the bundled data/ snapshot")
    cache_dir: str = Field(default="", description="cache folder; empty: $DAGSTER_HOME/cache/sources")

    def cache_path(self, name: str) -> Path:
        base = Path(self.cache_dir) if self.cache_dir else dagster_home() / "cache" / "sources"
        if name not in DATASETS:
            raise KeyError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}")
        return base / name  # format is sniffed on read (zip, gzip or plain text)

    def fetch(self, name: str) -> FetchResult:
        # None lets resolve_url apply CITEBIBLE_SOURCES, the one place that reads it
        url, sha = resolve_url(name, use_live=True if self.use_live else None)
        return fetch(url, self.cache_path(name), sha)

    def cached(self, name: str) -> Path:
        """The cached archive a downstream asset reads; a clear error if its asset never ran."""
        path = self.cache_path(name)
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: materialize the {name}_archive asset first")
        return path
