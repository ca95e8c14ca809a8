"""Translations as partitions (issue 13): versification, isolation, concurrent and serialized writers,
level vectors encoded or derived, and a BSB search (real embedded Postgres, real data, real MiniLM)."""

import threading
import time
import zipfile

import numpy as np
import pytest

from citebible_pipeline.bible.corpus import parse_book
from citebible_pipeline.bible.translations import TRANSLATIONS
from citebible_pipeline.bible.usfm import UsfmError
from citebible_pipeline.db import connect
from citebible_pipeline.db.locks import PartitionBusy, exclusive
from citebible_pipeline.embeddings.documents import DERIVED, level_windows
from citebible_pipeline.sources.datasets import DATASETS

pytestmark = pytest.mark.slow
BSB_BOOKS = ["RUT", "JHN"]  # the BSB's vectors in tests: two books, not 66
ROWS = {"verses": "verses", "chapters": "chapters", "genres": "verse_genres", "vectors": "passage_embeddings"}


def _translation_assets():
    from citebible_pipeline.bible.assets import (
        bible_chapters,
        bible_chapters_complete,
        bible_verses,
        bible_verses_complete,
    )
    from citebible_pipeline.genre.assets import verse_genres, verse_genres_complete

    return [bible_verses, bible_chapters, verse_genres, bible_verses_complete, bible_chapters_complete,
            verse_genres_complete]


def _materialize(resources: dict, key: str, books: list[str] | None = None, embed: bool = False, **kwargs):
    from dagster import materialize

    from citebible_pipeline.embeddings.assets import passage_embeddings

    assets = _translation_assets() + ([passage_embeddings] if embed else [])
    config = {"ops": {"passage_embeddings": {"config": {"books": books}}}} if embed and books else None
    return materialize(assets, resources=resources, partition_key=key, run_config=config, **kwargs)


def _fingerprint(url: str, translation: str) -> dict:
    """Per table: row count and a hash of every row's xmin, so a rewritten row shows even with equal content."""
    with connect(url) as conn:
        return {name: conn.execute(
            f"SELECT count(*), md5(string_agg(xmin::text || ':' || id::text, ',' ORDER BY id, xmin::text)) FROM {table}"
            " WHERE translation = %s", (translation,)).fetchone() for name, table in ROWS.items()}


@pytest.fixture(scope="module")
def two_partitions(pg_server, corpus_db):
    """A fresh database where both translations' corpus, genres and vectors (Ruth) were materialized at
    the same moment, from two threads."""
    from citebible_pipeline.db import apply_migrations
    from citebible_pipeline.embeddings.assets import EmbedderResource
    from citebible_pipeline.resources import PostgresResource, SourcesResource
    from tests.conftest import _create_db

    url = _create_db(pg_server["url"], "partitions_module")
    apply_migrations(url)
    resources = {"postgres": PostgresResource(url=url), "sources": SourcesResource(cache_dir=str(corpus_db["cache"])),
                 "embedder": EmbedderResource()}
    results: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def run(key: str) -> None:
        barrier.wait()
        results[key] = _materialize(resources, key, ["RUT"], embed=True, raise_on_error=False)

    threads = [threading.Thread(target=run, args=(k,)) for k in ("web", "bsb")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return {"url": url, "resources": resources, "results": results}


def test_two_partitions_materialize_at_once_without_conflict(two_partitions):
    results = two_partitions["results"]
    assert all(results[k].success for k in ("web", "bsb")), {k: r.success for k, r in results.items()}
    for r in results.values():
        assert all(c.passed for c in r.get_asset_check_evaluations())
    with connect(two_partitions["url"]) as conn:
        counts = dict(conn.execute("SELECT translation, count(*) FROM verses GROUP BY 1").fetchall())
        assert counts == {"web": 31103, "bsb": 31084}
        assert conn.execute("SELECT count(*) FROM books").fetchone()[0] == 81  # the canon table, deuterocanon included
        vectors = dict(conn.execute("SELECT translation, count(*) FROM passage_embeddings WHERE level = 'verse'"
                                    " GROUP BY 1").fetchall())
        assert vectors == {"web": 85, "bsb": 85}  # Ruth: 85 verses in both
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%hnsw%'")}
        assert {i.split("_")[-2] for i in indexes} == {"web", "bsb"} and len(indexes) == 6


def test_two_partitions_written_before_either_indexes_do_not_deadlock(pg_server, corpus_db, monkeypatch):
    """The interleaving CI once hit, forced: both partitions have written their rows when both start
    their index DDL. A transaction holding its rows' lock into CREATE INDEX deadlocked here."""
    from dagster import materialize

    from citebible_pipeline.db import apply_migrations
    from citebible_pipeline.embeddings import build
    from citebible_pipeline.embeddings.embedder import Embedder
    from citebible_pipeline.resources import PostgresResource, SourcesResource
    from tests.conftest import _create_db

    url = _create_db(pg_server["url"], "partitions_interleaved")
    apply_migrations(url)
    resources = {"postgres": PostgresResource(url=url), "sources": SourcesResource(cache_dir=str(corpus_db["cache"]))}
    for key in ("web", "bsb"):
        assert materialize(_translation_assets(), resources=resources, partition_key=key).success
    barrier, real = threading.Barrier(2, timeout=300), build.ensure_indexes

    def after_both_wrote(*args, **kwargs):
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "ensure_indexes", after_both_wrote)
    embedder, errors, reports = Embedder(), {}, {}

    def run(key: str) -> None:
        try:
            with connect(url) as conn:
                reports[key] = build.build_passage_embeddings(conn, embedder, translation=key, books=["RUT"],
                                                              activate_space=key == "web")
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors[key] = exc

    threads = [threading.Thread(target=run, args=(k,)) for k in ("web", "bsb")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert {k: len(r.indexes_created) for k, r in reports.items()} == {"web": 3, "bsb": 3}
    with connect(url) as conn:
        vectors = dict(conn.execute("SELECT translation, count(*) FROM passage_embeddings WHERE level = 'verse'"
                                    " GROUP BY 1").fetchall())
    assert vectors == {"web": 85, "bsb": 85}


def test_versification_differences_never_get_a_wrong_id(two_partitions):
    with connect(two_partitions["url"]) as conn:
        def ids(t):
            return {r[0] for r in conn.execute("SELECT id FROM verses WHERE translation = %s", (t,))}
        web, bsb = ids("web"), ids("bsb")
        text = dict(conn.execute("SELECT translation, text FROM verses WHERE id = 43003016").fetchall())
    assert 40017021 in web and 40017021 not in bsb  # Matthew 17:21: the BSB omits it
    assert {45016026, 45016027} <= bsb and not {45016026, 45016027} & web  # the BSB's doxology
    assert len(web - bsb) == len(TRANSLATIONS["bsb"].missing) == 21 and bsb - web == {45016026, 45016027}
    assert text["web"] != text["bsb"] and "only" in text["bsb"]  # John 3:16, two wordings, one id


def test_a_verse_past_the_canon_that_the_config_does_not_list_is_an_error():
    with zipfile.ZipFile(DATASETS["bsb_usfm"].bundled_path) as zf:
        name = next(n for n in zf.namelist() if n.endswith("RUTBSB.usfm"))
        data = zf.read(name)
    from citebible_pipeline.bible.canon import by_usfm

    assert len(parse_book(name, by_usfm("RUT"), data, "bsb")) == 85
    bad = data + b"\n\\v 23 A verse Ruth 4 does not have.\n"
    with pytest.raises(UsfmError, match="outside the canon"):
        parse_book(name, by_usfm("RUT"), bad, "bsb")


def test_rematerializing_bsb_never_touches_web_rows(two_partitions):
    web_before, bsb_before = _fingerprint(two_partitions["url"], "web"), _fingerprint(two_partitions["url"], "bsb")
    result = _materialize(two_partitions["resources"], "bsb", ["RUT"], embed=True)
    assert result.success
    assert _fingerprint(two_partitions["url"], "web") == web_before
    after = _fingerprint(two_partitions["url"], "bsb")
    assert after["verses"][0] == bsb_before["verses"][0] and after["verses"][1] != bsb_before["verses"][1]  # rewritten


def test_a_second_run_of_the_same_partition_fails_clearly_and_writes_nothing(two_partitions):
    from citebible_pipeline.resources import PostgresResource

    resources = {**two_partitions["resources"], "postgres": PostgresResource(url=two_partitions["url"], lock_wait_seconds=1)}
    before = _fingerprint(two_partitions["url"], "bsb")
    with connect(two_partitions["url"]) as holder, exclusive(holder, "citebible:bible_verses:bsb"):
        result = _materialize(resources, "bsb", raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    message = failure.step_failure_data.error.to_string()
    assert "bible_verses:bsb is being written by backend pid" in message and "Nothing was written" in message
    assert _fingerprint(two_partitions["url"], "bsb") == before


def test_a_second_run_of_the_same_partition_waits_for_the_first(two_partitions):
    events: list[tuple[float, bool]] = []

    def second() -> None:
        ok = _materialize(two_partitions["resources"], "web").success
        events.append((time.monotonic(), ok))

    with connect(two_partitions["url"]) as holder:
        with exclusive(holder, "citebible:bible_verses:web"):
            t = threading.Thread(target=second)
            t.start()
            time.sleep(3)
            assert not events  # still waiting for the lock
            released = time.monotonic()
        t.join(timeout=300)
    assert events and events[0][1] and events[0][0] > released


def test_level_vectors_encoded_or_derived():
    texts, counts = ["In the beginning.", "God said.", "It was good."], [4, 3, 4]
    assert level_windows("encode", texts, counts, budget=8) == ("In the beginning. God said.", "It was good.")
    assert level_windows("derive", texts, counts, budget=8, title="Creation")[:2] == (DERIVED, "Creation")
    with pytest.raises(ValueError, match="encode"):
        level_windows("average", texts, counts, budget=8)


def test_derived_chapters_are_the_mean_of_their_verses(two_partitions):
    from citebible_pipeline.embeddings.build import build_passage_embeddings
    from citebible_pipeline.embeddings.embedder import Embedder

    with connect(two_partitions["url"]) as conn:
        report = build_passage_embeddings(conn, Embedder(), translation="bsb", books=["RUT"], chapter_vectors="derive",
                                          activate_space=False)
        assert report.embedded_now == 4 and report.texts_encoded == 0  # Ruth's 4 chapters, nothing encoded
        assert report.indexes_created == [f"passage_embeddings_hnsw_s{report.space_id}_bsb_chapter (rebuilt)"]
        sid = report.space_id
        rows = conn.execute("SELECT id, windows, embedding FROM passage_embeddings WHERE space_id = %s AND"
                            " translation = 'bsb' AND level = 'chapter'", (sid,)).fetchall()
        assert len(rows) == 4 and all(w == 0 for _, w, _ in rows)
        cid, _, vec = rows[0]
        verses = np.stack([r[0].to_numpy() for r in conn.execute(
            "SELECT embedding FROM passage_embeddings WHERE space_id = %s AND translation = 'bsb' AND level = 'verse'"
            " AND id / 1000 = %s", (sid, cid // 1000))])
        mean = verses.mean(axis=0)
        np.testing.assert_allclose(vec.to_numpy(), mean / np.linalg.norm(mean), atol=1e-5)


@pytest.fixture(scope="module")
def bsb_engine(full_db):
    """full_db plus the BSB partition (every verse, vectors for two books) and an Engine over both."""
    from citebible_pipeline.query import Engine

    result = _materialize(full_db["resources"], "bsb", BSB_BOOKS, embed=True)
    assert result.success
    return Engine(full_db["url"], reranker="features")


def test_bsb_search_answers_in_bsb_text_with_the_same_references(bsb_engine, full_db):
    with connect(full_db["url"]) as conn:
        def text(t, a, b):
            return " ".join(r[0] for r in conn.execute(
                "SELECT text FROM verses WHERE translation = %s AND id BETWEEN %s AND %s AND text <> '' ORDER BY id", (t, a, b)))
        web = bsb_engine.search("Jesus wept at the tomb of Lazarus", k=5)
        bsb = bsb_engine.search("Jesus wept at the tomb of Lazarus", k=5, translation="bsb")
        assert bsb.results and not bsb.abstained
        for r in bsb.results:
            assert r.text == text("bsb", r.start_id, r.end_id) and r.pinned.text == text("bsb", r.pinned.id, r.pinned.id)
        assert any(r.text != text("web", r.start_id, r.end_id) for r in bsb.results)
        assert any(r.start_id // 1_000_000 == 43 for r in bsb.results)  # John, from the BSB's own vectors
        for r in web.results:
            assert r.text == text("web", r.start_id, r.end_id)
        lookup = bsb_engine.search("John 3:16", translation="bsb").results[0]
        assert (lookup.ref, lookup.start_id) == ("John 3:16", 43003016) and lookup.text == text("bsb", 43003016, 43003016)
    from citebible_pipeline.query import QueryValidationError

    with pytest.raises(QueryValidationError, match="not in the index"):
        bsb_engine.search("Jesus wept", translation="kjv")
