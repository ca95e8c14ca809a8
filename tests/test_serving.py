"""The service follows the data: a reranker materialized under a read loop is swapped in with no failed request,
and an artefact that fails to load is refused while the previous one keeps serving."""

from __future__ import annotations

import threading
import time

import pytest
from dagster import materialize
from fastapi.testclient import TestClient

from citebible_pipeline.api.app import create_app
from citebible_pipeline.db import connect
from citebible_pipeline.embeddings.assets import EmbedderResource
from citebible_pipeline.query import Engine
from citebible_pipeline.query.features import FEATURES
from citebible_pipeline.query.serving import Follower, Serving
from citebible_pipeline.rerank.assets import reranker_model
from citebible_pipeline.rerank.store import active_id, save_model
from citebible_pipeline.resources import PostgresResource
from tests.test_rerank import restored_active

QUERIES = ["I am afraid of the future", "forgiveness", "my father died last week", "John 3:16",
           "how do I pray when I am tired", "what does the Bible say about money"]


def _snapshot(versions: dict) -> Serving:
    return Serving(data=None, reranker=None, versions=versions)  # type: ignore[arg-type]


def test_follower_swaps_once_refuses_a_broken_version_once_and_lets_outages_through():
    import psycopg

    db = {"versions": {"reranker": 1}, "loads": 0, "fail": False, "down": False}
    serving = [_snapshot({"reranker": 1})]

    def versions():
        if db["down"]:
            raise psycopg.OperationalError("connection refused")
        return dict(db["versions"])

    def load(v, old):
        db["loads"] += 1
        if db["fail"]:
            raise ValueError("tree\\nnot a model")
        return _snapshot(v)

    f = Follower(lambda: serving[0], versions, load, lambda s: serving.__setitem__(0, s))
    assert f.check() is False and db["loads"] == 0  # same versions: one SELECT, no load
    db["versions"] = {"reranker": 2}
    assert f.check() is True and serving[0].versions == {"reranker": 2} and f.error is None
    db["versions"], db["fail"] = {"reranker": 3}, True
    assert f.check() is False and serving[0].versions == {"reranker": 2} and "not a model" in f.error
    assert f.check() is False and db["loads"] == 2  # refused once, not reloaded on every tick
    db["versions"], db["fail"] = {"reranker": 4}, False  # the next materialization is tried again
    assert f.check() is True and serving[0].versions == {"reranker": 4} and f.error is None
    db["down"] = True
    with pytest.raises(psycopg.OperationalError):
        f.check()


@pytest.mark.slow
def test_a_reranker_materialized_under_a_read_loop_swaps_in_without_a_failed_request(full_db, monkeypatch):
    monkeypatch.setenv("CITEBIBLE_RELOAD_INTERVAL_S", "0.2")
    url = full_db["url"]
    statuses: list[int] = []
    stop = threading.Event()

    with restored_active(url, "features") as before, TestClient(create_app(lambda: Engine(url, llm=None))) as client:
        def model_id() -> int:
            return client.get("/api/health").json()["serving"]["reranker"]["model_id"]

        def read_loop():
            i = 0
            while not stop.is_set():
                statuses.append(client.get("/api/search", params={"q": QUERIES[i % len(QUERIES)]}).status_code)
                i += 1

        assert model_id() == before
        reader = threading.Thread(target=read_loop)
        reader.start()
        try:
            result = materialize([reranker_model], resources={"postgres": PostgresResource(url=url),
                                                              "embedder": EmbedderResource()},
                                 run_config={"ops": {"reranker_model": {"config": {"topics": 40, "seed": 11}}}})
            assert result.success
            with connect(url) as conn:
                fresh = active_id(conn, "features")
            assert fresh != before
            served_before_swap = len(statuses)
            deadline = time.monotonic() + 20
            while model_id() != fresh and time.monotonic() < deadline:
                time.sleep(0.1)
            assert model_id() == fresh
            while len(statuses) < served_before_swap + 5:  # and the loop goes on answering on the new one
                time.sleep(0.05)

            # a broken artefact: activated in the database, refused by the service, the swapped-in one keeps serving
            with connect(url) as conn:
                bad = save_model(conn, "features", full_db_space(conn), b"tree\nnot a model", FEATURES, "z" * 64, 0, {})
                conn.execute("UPDATE reranker_models SET is_active = (id = %s) WHERE kind = 'features'", (bad,))
                conn.commit()
            deadline = time.monotonic() + 20
            while client.get("/api/health").json()["serving"]["refused"] is None and time.monotonic() < deadline:
                time.sleep(0.1)
            health = client.get("/api/health").json()["serving"]
            assert health["refused"] and health["reranker"]["model_id"] == fresh
            assert client.get("/api/search", params={"q": "comfort in grief"}).status_code == 200
        finally:
            stop.set()
            reader.join(timeout=30)
    assert len(statuses) > 20 and set(statuses) == {200}, f"{len(statuses)} requests: {sorted(set(statuses))}"


def full_db_space(conn) -> int:
    return conn.execute("SELECT id FROM embedding_spaces WHERE is_active").fetchone()[0]


def test_every_served_artefact_bumps_its_version_when_it_commits(db_url):
    """The triggers of migration 012, on a migrated empty database: each artefact's write moves its own version in
    the writer's transaction (a rolled-back write moves nothing)."""
    from citebible_pipeline.query.serving import read_versions

    with connect(db_url) as conn:
        assert read_versions(conn) == {}
        space = conn.execute(
            "INSERT INTO embedding_spaces (space_key, model_id, weights_sha256, dims, document_prefix, query_prefix,"
            " normalized, max_seq_length) VALUES ('k', 'm', 'w', 2, '', '', true, 128) RETURNING id").fetchone()[0]
        conn.commit()
        assert read_versions(conn) == {"space": 1}
        with conn.transaction():
            conn.execute("INSERT INTO query_themes VALUES (1, 'topic', 'topic:x', 'x', 'x', 'x')")
            conn.execute("INSERT INTO theme_passages VALUES (1, 1, 1, 1.0)")
        conn.execute("INSERT INTO abstention_floors (space_id, features, coef, intercept, threshold, metrics, is_active)"
                     " VALUES (%s, '{a}', '{1}', 0, 0.5, '{}', true)", (space,))
        conn.execute("INSERT INTO reranker_models (kind, space_id, model, features, training_hash, seed, metrics)"
                     " VALUES ('features', %s, 'x', '{a}', 'h', 1, '{}')", (space,))
        conn.execute("INSERT INTO genre_boosts VALUES ('psalm', 1.2)")
        conn.commit()
        assert read_versions(conn) == {"space": 1, "themes": 2, "floor": 1, "reranker": 1, "genre_boosts": 1}
        conn.execute("UPDATE reranker_models SET is_active = true")
        conn.rollback()
        assert read_versions(conn)["reranker"] == 1
        conn.execute("UPDATE reranker_models SET is_active = true")
        conn.commit()
        assert read_versions(conn)["reranker"] == 2
        # the passages' labels (document expansion, migration 013) are part of the theme vocabulary
        conn.execute("INSERT INTO passage_labels VALUES (1, 'openbible', 'x', 'x', 1, 1, 1.0)")
        conn.commit()
        assert read_versions(conn)["themes"] == 3
