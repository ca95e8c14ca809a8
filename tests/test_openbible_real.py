"""The real OpenBible exports loaded through the assets, with their checks."""

import pytest

from citebible_pipeline.db import connect

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def openbible_db(corpus_db):
    from dagster import materialize

    from citebible_pipeline.openbible.assets import openbible_assets, openbible_checks
    from citebible_pipeline.sources.assets import (
        openbible_cross_refs_archive,
        openbible_topic_scores_archive,
        openbible_topic_votes_archive,
    )

    result = materialize([openbible_cross_refs_archive, openbible_topic_votes_archive, openbible_topic_scores_archive,
                          *openbible_assets, *openbible_checks], resources=corpus_db["resources"])
    assert result.success
    return {**corpus_db, "ob_result": result}


def test_real_counts_and_checks(openbible_db):
    result = openbible_db["ob_result"]
    assert all(e.passed for e in result.get_asset_check_evaluations())
    xr = result.asset_materializations_for_node("cross_references")[0].metadata
    assert xr["rows"].value == 344_799 and xr["cross_references_rejects"].value == 0
    assert xr["negative_vote_rows"].value == 1_229 and xr["cross_book_ranges"].value == 18
    # rows with an endpoint in Rom 16:25-27 (the doxology, WEB Rom 14:24-26) or 3 John 1:15 (WEB 1:14)
    assert xr["cross_references_remapped_to_web"].value == 202
    tv = result.asset_materializations_for_node("topic_verses")[0].metadata
    assert tv["topic_votes_lines"].value == 87_056 and tv["topic_votes_rejects"].value == 0
    assert tv["topic_scores_lines"].value == 70_987 and tv["topic_scores_rejects"].value == 0
    assert tv["with_votes"].value == 87_056 and tv["with_score"].value == 70_987
    with connect(openbible_db["url"]) as conn:
        assert conn.execute("SELECT count(*) FROM cross_references").fetchone()[0] == 344_799
        voted_topics = conn.execute(
            "SELECT count(DISTINCT topic_id) FROM topic_verses WHERE votes IS NOT NULL").fetchone()[0]
        scored_topics = conn.execute(
            "SELECT count(DISTINCT topic_id) FROM topic_verses WHERE score IS NOT NULL").fetchone()[0]
        assert (voted_topics, scored_topics) == (5_559, 6_700)
        def top(column):
            return [r[0] for r in conn.execute(
                f"SELECT v.ref FROM topic_verses tv JOIN topics t ON t.id = tv.topic_id JOIN verses v ON v.id = tv.start_id"
                f" WHERE t.normalized_name = 'grief' AND tv.{column} IS NOT NULL ORDER BY tv.{column} DESC, v.id LIMIT 5")]

        assert top("votes")[:3] == ["Matthew 5:4", "Revelation 21:4", "Psalm 147:3"]  # the 2016 raw votes
        assert "Psalm 34:18" in top("score")  # the 2026 quality scores
