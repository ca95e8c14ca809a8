"""Dagster's own state (runs, event log, schedules): Postgres when a database URL is set, SQLite otherwise.

`dagster_home/dagster.yaml` names this class as its `storage: custom:`, so one file serves both set-ups:
a laptop on the embedded server keeps SQLite under `$DAGSTER_HOME` as before, while a team that sets
`CITEBIBLE_DAGSTER_DATABASE_URL` (or `DATABASE_URL`) shares run history between a webserver, a daemon and
run workers on other hosts. Dagster's tables live in their own schema (`dagster`, created by
`sql/dagster/`), never beside the pipeline's. Run workers rebuild the storage from the same config in
their own environment, so every process of a deployment must see the same variables.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from urllib.parse import quote, urlencode

from psycopg.conninfo import conninfo_to_dict

from dagster import StringSource
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClass, ConfigurableClassData

from citebible_pipeline.db.connection import URL_ENV_VARS

log = logging.getLogger(__name__)

DAGSTER_URL_ENV = "CITEBIBLE_DAGSTER_DATABASE_URL"
SCHEMA = "dagster"


def dagster_database_url() -> str | None:
    """The URL Dagster's state goes to, or None for SQLite: the dedicated variable first, then the pipeline's."""
    for var in (DAGSTER_URL_ENV, *URL_ENV_VARS):
        if os.environ.get(var):
            return os.environ[var]
    return None


def dagster_postgres_url(url: str, schema: str = SCHEMA) -> str:
    """The SQLAlchemy URL dagster-postgres needs (the psycopg2 driver named: SQLAlchemy 2.1 defaults to psycopg 3,
    whose parameter style breaks its NOTIFY), from any libpq URL or key=value conninfo (the
    embedded server's socket URL included), with `-csearch_path=<schema>` added to any options already there,
    so every table Dagster creates lands in that schema."""
    params = {k: str(v) for k, v in conninfo_to_dict(url).items()}
    setting = f"-csearch_path={schema}"
    params["options"] = f"{params['options']} {setting}" if params.get("options") else setting
    user, password = params.pop("user", ""), params.pop("password", "")
    host, port, dbname = params.pop("host", ""), params.pop("port", ""), params.pop("dbname", "")
    if host.startswith("/"):
        params["host"], host = host, ""  # a socket folder travels as a query parameter
    auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "") + ("@" if user else "")
    netloc = auth + host + (":" + port if port and host else "")
    if port and not host:
        params["port"] = port
    return f"postgresql+psycopg2://{netloc}/{quote(dbname, safe='')}?{urlencode(params)}"


def ensure_schema(url: str) -> None:
    """Apply `sql/dagster/` on the instance database (the schema must exist before Dagster creates tables)."""
    from citebible_pipeline.db.migrate import apply_migrations, sql_dir

    apply_migrations(url, folder=sql_dir() / "dagster")


class CitebibleStorage(DagsterStorage, ConfigurableClass):
    """Chooses the backend once per process and delegates to it."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._inst_data = inst_data
        url = dagster_database_url()
        if url is None:
            self.backend = "sqlite"
            self._inner: DagsterStorage = DagsterSqliteStorage.from_local(base_dir)
            self.where = str(Path(base_dir).resolve())
        else:
            from dagster_postgres import DagsterPostgresStorage

            from citebible_pipeline.db.connection import describe_url

            ensure_schema(url)
            self.backend = "postgres"
            self._inner = DagsterPostgresStorage(dagster_postgres_url(url))
            self.where = f"schema {SCHEMA!r} of {describe_url(url)}"
        log.debug("dagster instance storage: %s at %s", self.backend, self.where)
        super().__init__()

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls):
        return {"base_dir": StringSource}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value) -> CitebibleStorage:  # ty: ignore[invalid-method-override]
        return cls(base_dir=config_value["base_dir"], inst_data=inst_data)

    @property
    def event_log_storage(self):
        return self._inner.event_log_storage

    @property
    def run_storage(self):
        return self._inner.run_storage

    @property
    def schedule_storage(self):
        return self._inner.schedule_storage

    def __str__(self) -> str:
        return f"CitebibleStorage({self.backend}: {self.where})"
