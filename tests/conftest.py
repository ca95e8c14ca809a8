"""Shared fixtures: one real embedded Postgres (pgvector) per test session, a fresh database per test,
and the real corpus loaded once for the end-to-end tests."""

from __future__ import annotations

import itertools
import os
import warnings
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from citebible_pipeline.db import apply_migrations
from citebible_pipeline.db.embedded import ensure_server
from citebible_pipeline.sources.datasets import DATASETS

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory) -> dict:
    """{'url': admin URL, 'pgdata': Path} of the session's server (CITEBIBLE_TEST_DATABASE_URL overrides)."""
    if os.environ.get("CITEBIBLE_TEST_DATABASE_URL"):
        return {"url": os.environ["CITEBIBLE_TEST_DATABASE_URL"], "pgdata": None}
    pgdata = tmp_path_factory.mktemp("pg") / "data"
    url = ensure_server(pgdata, cleanup_mode="delete")
    return {"url": url, "pgdata": pgdata}


def _create_db(admin_url: str, name: str) -> str:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {}").format(psycopg.sql.Identifier(name)))
        conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
    params = conninfo_to_dict(admin_url)
    params["dbname"] = name
    return make_conninfo(**params)


@pytest.fixture
def empty_db(pg_server) -> str:
    """A new, empty database (no migrations)."""
    return _create_db(pg_server["url"], f"t_{os.getpid()}_{next(_counter)}")


@pytest.fixture
def db_url(empty_db) -> str:
    """A new database with every migration applied."""
    apply_migrations(empty_db)
    return empty_db


@pytest.fixture(scope="session")
def corpus_db(pg_server, tmp_path_factory) -> dict:
    """The real WEB corpus (verses, chapters) and the BSB pericopes, materialized once through the Dagster assets."""
    from dagster import materialize

    from citebible_pipeline.bible.assets import bible_assets, bible_checks
    from citebible_pipeline.resources import PostgresResource, SourcesResource
    from citebible_pipeline.sources.assets import bsb_usfm_archive, web_usfm_archive

    url = _create_db(pg_server["url"], f"corpus_{os.getpid()}")
    cache = tmp_path_factory.mktemp("cache")
    resources = {"postgres": PostgresResource(url=url), "sources": SourcesResource(cache_dir=str(cache))}
    result = materialize([web_usfm_archive, bsb_usfm_archive, *bible_assets, *bible_checks], resources=resources,
                         partition_key="web")
    assert result.success
    return {"url": url, "cache": cache, "resources": resources, "result": result}


@pytest.fixture(scope="session")
def bundled_web_zip() -> Path:
    return DATASETS["web_usfm"].bundled_path


@pytest.fixture(scope="session")
def embedded_db(corpus_db) -> dict:
    """corpus_db plus genres and the real MiniLM passage embeddings (about 6 minutes on 2 cores)."""
    from dagster import materialize

    from citebible_pipeline.embeddings.assets import (
        EmbedderResource,
        embedding_assets,
        embedding_checks,
    )
    from citebible_pipeline.genre.assets import genre_assets, genre_checks

    resources = {**corpus_db["resources"], "embedder": EmbedderResource()}
    result = materialize([*genre_assets, *genre_checks, *embedding_assets, *embedding_checks], resources=resources,
                         partition_key="web")
    assert result.success
    return {**corpus_db, "resources": resources, "embed_result": result}


@pytest.fixture(scope="session")
def full_db(embedded_db) -> dict:
    """embedded_db plus the OpenBible and Nave's imports, the gold set, the query themes and floor, the feature
    reranker (trained on a sample of topics), the verse voices (trained on a sample of the labels) and one evaluation
    run (on a sample of the held-out topics, to keep the suite fast): every asset of `make run`."""
    from dagster import materialize

    from citebible_pipeline.gold.assets import gold_assets, gold_checks
    from citebible_pipeline.naves.assets import naves_assets, naves_checks
    from citebible_pipeline.themes.assets import theme_assets, theme_checks
    from citebible_pipeline.openbible.assets import openbible_assets, openbible_checks
    from citebible_pipeline.rerank.assets import reranker_model, reranker_model_sound
    from citebible_pipeline.voice.assets import voice_assets, voice_checks
    from citebible_pipeline.sources.assets import (
        openbible_cross_refs_archive,
        openbible_topic_scores_archive,
        naves_archive,
        openbible_topic_votes_archive,
    )

    result = materialize([openbible_cross_refs_archive, openbible_topic_votes_archive, openbible_topic_scores_archive,
                          naves_archive, *naves_assets, *naves_checks,
                          *openbible_assets, *openbible_checks, *gold_assets, *gold_checks, *theme_assets, *theme_checks,
                          reranker_model, reranker_model_sound, *voice_assets, *voice_checks],
                         resources=embedded_db["resources"],
                         run_config={"ops": {"retrieval_eval": {"config": {"limit_per_set": 200, "ablation_sample": 100}},
                                             "reranker_model": {"config": {"topics": 400}},
                                             "passage_voice": {"config": {"training_sample": 1500}}}})
    assert result.success
    return {**embedded_db, "full_result": result}
