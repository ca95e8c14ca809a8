"""Database access: the one connection helper, the embedded server, migrations, COPY helpers."""

from citebible_pipeline.db.connection import connect, database_url, get_pool
from citebible_pipeline.db.migrate import MigrationError, apply_migrations

__all__ = ["connect", "database_url", "get_pool", "apply_migrations", "MigrationError"]
