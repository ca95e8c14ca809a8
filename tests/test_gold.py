"""Metrics against hand-computed examples, the split, the curated set, and the leakage guard."""

import math
import re
from pathlib import Path

import pytest

from citebible_pipeline.db import connect
from citebible_pipeline.gold.access import eval_queries, training_topic_passages
from citebible_pipeline.gold.build import build_gold, grade, load_curated
from citebible_pipeline.gold.metrics import (
    Passage,
    Result,
    abstention_correct,
    hit_at,
    mrr_at,
    ndcg_at,
    recall_at,
)
from citebible_pipeline.gold.split import side, split_key
from citebible_pipeline.openbible.load import topic_id

GOLD = [Passage(10, 10, 3), Passage(20, 22, 2), Passage(30, 30, 1)]
RESULTS = [Result(5, 5), Result(21, 21), Result(1, 100), Result(10, 10)]  # miss, in a range, a "chapter", repeat


def test_recall_counts_passages_a_chapter_contains():
    assert recall_at(RESULTS, GOLD, 1) == 0.0
    assert recall_at(RESULTS, GOLD, 2) == pytest.approx(1 / 3)
    assert recall_at(RESULTS, GOLD, 3) == 1.0  # the chapter-like result covers the other two
    assert recall_at([], GOLD, 50) == 0.0


def test_ndcg_hand_computed():
    # credits per rank: 0, grade 2 (new), grade 3 (best newly covered by the chapter), 0 (already credited)
    dcg = (2**2 - 1) / math.log2(3) + (2**3 - 1) / math.log2(4)  # 1.8928 + 3.5 = 5.3928
    idcg = (2**3 - 1) / math.log2(2) + (2**2 - 1) / math.log2(3) + (2**1 - 1) / math.log2(4)  # 7 + 1.8928 + 0.5
    assert ndcg_at(RESULTS, GOLD, 10) == pytest.approx(dcg / idcg)
    assert ndcg_at(RESULTS, GOLD, 10) == pytest.approx(0.574141, abs=1e-6)
    assert ndcg_at([Result(10, 10), Result(20, 20), Result(30, 30)], GOLD, 10) == pytest.approx(1.0)
    assert ndcg_at([Result(1, 100)], GOLD, 10) <= 1.0


def test_mrr_hit_and_abstention():
    assert mrr_at(RESULTS, GOLD, 10) == 0.5
    assert mrr_at(RESULTS, GOLD, 1) == 0.0
    assert hit_at(RESULTS, GOLD, 1) == 0.0 and hit_at(RESULTS, GOLD, 5) == 1.0
    assert abstention_correct(True, True) == 1.0 and abstention_correct(False, True) == 0.0
    assert abstention_correct(False, False) == 1.0


def test_grades():
    assert grade(100, 100, None, 0) == 3 and grade(10, 100, None, 0) == 1 and grade(50, 100, None, 0) == 2
    assert grade(None, 0, 90, 100) == 3 and grade(10, 100, 70, 100) == 3 and grade(None, 100, None, 100) == 1


def test_near_duplicates_share_a_side():
    for group in (["prayer", "prayers", "Prayers "], ["pray", "praying"], ["answered prayer", "prayer answered", "Answered Prayers"],
                  ["love of god", "God's love"], ["abundant ", "abundant"]):
        assert len({split_key(n) for n in group}) == 1, group
        assert len({side(n) for n in group}) == 1
    names = [f"topic number {i}" for i in range(2000)]
    share = sum(side(n) == "heldout" for n in names) / len(names)
    assert 0.17 < share < 0.23


def test_curated_set_is_valid_and_large_enough():
    qs = load_curated()
    kinds = [q.kind for q in qs]
    assert len(qs) >= 40 and kinds.count("offtopic") >= 3 and kinds.count("pastoral") >= 20
    assert all(q.rationale for q in qs)
    grief = next(q for q in qs if q.id == "grief-anger-at-god")
    assert "Psalm 88" in grief.relevant and "Psalm 34:18" in grief.relevant
    with pytest.raises(ValueError, match="Psalms 23 has 6 verses|Psalm 23 has 6 verses"):
        load_curated("- {id: x, kind: study, query: q, rationale: r, relevant: {Psalm 23:7: 3}}")
    with pytest.raises(ValueError, match="off-topic queries have no passages"):
        load_curated("- {id: x, kind: offtopic, query: q, rationale: r, relevant: {Psalm 23:1: 3}}")


def _insert_topics(url, topics):
    with connect(url) as conn:
        for name, passages in topics.items():
            tid = topic_id(name)
            conn.execute("INSERT INTO topics VALUES (%s, %s, %s, %s, 0)", (tid, name, name, len(passages)))
            for s in passages:
                conn.execute("INSERT INTO topic_verses VALUES (%s, %s, %s, %s, NULL)", (tid, s, s, 10 + s % 7))


def test_training_accessor_never_leaks_heldout(db_url):
    words = ["grief", "hope", "comfort", "anger", "peace", "fear", "joy", "trust", "mercy", "patience", "rest", "healing"]
    heldout = next(w for w in words if side(w) == "heldout")
    training = next(w for w in words if side(w) == "training")
    # the same topic under near-duplicate spellings, and a small topic (< 5 passages, not a gold query)
    topics = {heldout: [40005004 + i for i in range(6)], heldout + "s": [19034018, 19147003],
              training: [45015013 + i for i in range(6)], "pizza": [1001001, 1001002]}
    _insert_topics(db_url, topics)
    with connect(db_url) as conn:
        with pytest.raises(RuntimeError, match="materialize gold_set"):
            training_topic_passages(conn)
        stats = build_gold(conn)
        assert stats.gold_topics == 2 and stats.curated == len(load_curated())
        seen = {p.topic for p in training_topic_passages(conn)}
        assert heldout not in seen and heldout + "s" not in seen  # the near-duplicate is held out too
        assert training in seen
        heldout_ids = {q.query_id for q in eval_queries(conn, "heldout_topics")}
        assert heldout_ids == {f"topic:{topic_id(heldout)}"}
        assert all(q.passages for q in eval_queries(conn, "curated_pastoral"))
        assert all(q.expect_abstain and not q.passages for q in eval_queries(conn, "curated_offtopic"))


ALLOWED_READERS = {
    "topic_verses": {"openbible/assets.py", "gold/build.py", "gold/access.py"},
    "gold_passages": {"gold/access.py", "gold/build.py", "gold/assets.py"},
}


def test_only_the_accessor_reads_topic_votes():
    pkg = Path(__file__).resolve().parents[1] / "citebible_pipeline"
    for table, allowed in ALLOWED_READERS.items():
        pattern = re.compile(rf"\b(from|join)\s+{table}\b", re.IGNORECASE)
        readers = {str(p.relative_to(pkg)) for p in pkg.rglob("*.py") if pattern.search(p.read_text())}
        assert readers <= allowed, f"{table} read outside the accessor: {sorted(readers - allowed)}"
