"""Dagster's own state: the repo's dagster.yaml on Postgres when a URL is set, on SQLite when none is."""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest
from dagster import DagsterInstance, materialize

from citebible_pipeline.db.connection import URL_ENV_VARS
from citebible_pipeline.db.instance_storage import DAGSTER_URL_ENV, dagster_postgres_url
from citebible_pipeline.resources import SourcesResource
from citebible_pipeline.sources.assets import openbible_topic_scores_archive

REPO_YAML = Path(__file__).resolve().parents[1] / "dagster_home" / "dagster.yaml"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A DAGSTER_HOME holding the repo's own dagster.yaml, no database variable set."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO_YAML, home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    for var in (DAGSTER_URL_ENV, *URL_ENV_VARS):
        monkeypatch.delenv(var, raising=False)
    return home


def _materialize(instance: DagsterInstance, cache: Path):
    result = materialize([openbible_topic_scores_archive], instance=instance,
                         resources={"sources": SourcesResource(cache_dir=str(cache))})
    assert result.success
    return result


def test_instance_on_postgres_when_a_url_is_set(home, empty_db, tmp_path, monkeypatch):
    monkeypatch.setenv(DAGSTER_URL_ENV, empty_db)
    with DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        result = _materialize(instance, tmp_path / "cache")
        # the instance reads its own history back
        assert instance.get_latest_materialization_event(openbible_topic_scores_archive.key) is not None

    with psycopg.connect(empty_db) as conn:
        runs = conn.execute("SELECT run_id, status FROM dagster.runs").fetchall()
        assert (result.run_id, "SUCCESS") in runs
        events = conn.execute(
            "SELECT asset_key FROM dagster.event_logs WHERE run_id = %s AND dagster_event_type = 'ASSET_MATERIALIZATION'",
            (result.run_id,)).fetchall()
        assert events == [('["openbible_topic_scores_archive"]',)]
        # Dagster's tables are all in their own schema: the pipeline's schema holds only the migration ledger
        public = {r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").fetchall()}
        assert public == {"schema_migrations"}
    assert not (home / "history").exists()  # nothing went to SQLite


def test_instance_on_sqlite_without_a_url(home, tmp_path):
    with DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        result = _materialize(instance, tmp_path / "cache")
        assert instance.get_run_by_id(result.run_id) is not None
    assert (home / "history" / "runs.db").exists()


def test_urls_for_dagster_postgres():
    socket = dagster_postgres_url("postgresql://root@/postgres?host=/tmp/pg&options=-cwork_mem%3D64MB")
    assert socket == "postgresql+psycopg2://root@/postgres?options=-cwork_mem%3D64MB+-csearch_path%3Ddagster&host=%2Ftmp%2Fpg"
    assert dagster_postgres_url("user=u password=p@ss host=db port=6543 dbname=app") == \
        "postgresql+psycopg2://u:p%40ss@db:6543/app?options=-csearch_path%3Ddagster"
