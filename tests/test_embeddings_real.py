"""Passage embeddings over the whole real corpus with the offline MiniLM model."""

import pytest

from citebible_pipeline.db import connect
from citebible_pipeline.embeddings.assets import EmbedderResource
from citebible_pipeline.embeddings.embedder import check_space
from citebible_pipeline.embeddings.store import active_space, dense_search

pytestmark = pytest.mark.slow


def test_checks_pass_and_counts_per_level(embedded_db):
    evals = {e.check_name: e for e in embedded_db["embed_result"].get_asset_check_evaluations()}
    check = evals["passage_embeddings_complete"]
    assert check.passed, check.metadata
    assert check.metadata["verse_rows"].value == 31098  # 31,103 less the five footnote-only verses
    assert check.metadata["chapter_rows"].value == 1189 and check.metadata["dims"].value == 384
    mat = embedded_db["embed_result"].asset_materializations_for_node("passage_embeddings")[0]
    assert mat.metadata["multi_window_chapters"].value > 100


def test_jesus_wept_by_dense_search_alone(embedded_db):
    emb = EmbedderResource().get()
    with connect(embedded_db["url"]) as conn:
        sid, space = active_space(conn)
        check_space(space, emb.space)
        hits = dense_search(conn, sid, space.dims, "verse", emb.encode_queries(["Jesus wept"])[0], k=3)
        assert "John 11:35" in [h[1] for h in hits]
        genre = conn.execute("SELECT genre FROM passage_embeddings WHERE space_id=%s AND level='verse' AND translation='web' AND ref='Psalm 23:1'",
                             (sid,)).fetchone()[0]
        assert genre == "psalm"


def test_unchanged_rebuild_embeds_nothing(embedded_db):
    from dagster import materialize

    from citebible_pipeline.embeddings.assets import embedding_assets

    result = materialize(embedding_assets, resources=embedded_db["resources"], partition_key="web")
    assert result.success
    meta = result.asset_materializations_for_node("passage_embeddings")[0].metadata
    assert meta["embedded_now"].value == 0 and meta["unchanged"].value == 31098 + 1189 + 3015  # verses, chapters, pericopes
