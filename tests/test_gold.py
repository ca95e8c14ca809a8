"""Metrics against hand-computed examples, the split, the curated set, and the leakage guard."""

import math
import re
from pathlib import Path

import pytest

from citebible_pipeline.db import connect
from citebible_pipeline.gold.access import eval_queries, training_nave_passages, training_topic_passages
from citebible_pipeline.gold.build import build_gold, grade, load_curated
from citebible_pipeline.gold.metrics import (
    Passage,
    Result,
    abstention_correct,
    concentration,
    hit_at,
    mrr_at,
    ndcg_at,
    recall_at,
)
from citebible_pipeline.gold.split import side, split_key
from citebible_pipeline.naves.parse import entry_id
from citebible_pipeline.naves.queries import readable
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


def test_a_span_longer_than_any_chapter_is_a_slip_that_covers_and_counts_for_nothing():
    psalm119, matt6_25_34, slip = Result(19119001, 19119176), Passage(40006025, 40006034, 3), Result(40006001, 40019030)
    assert psalm119.covers(Passage(19119105, 19119105, 2))  # the longest chapter is a passage
    assert Result(40006025, 40007029).covers(matt6_25_34)  # across chapters, shorter than Psalm 119: a passage
    assert not slip.covers(matt6_25_34)  # Matthew 6-19 (510 verses) is not an answer to a reader
    assert hit_at([slip, Result(1, 1)], [matt6_25_34], 5) == 0.0 and ndcg_at([slip], [matt6_25_34], 10) == 0.0
    # a gold slip (Genesis 1:1-Revelation 22:21) is not a passage to find: every measure reads the others
    gold = [Passage(1001001, 66022021, 3), matt6_25_34]
    assert recall_at([Result(40006025, 40006034)], gold, 50) == 1.0
    assert ndcg_at([Result(40006025, 40006034)], gold, 10) == pytest.approx(1.0)
    assert hit_at([Result(43003016, 43003016)], gold, 5) == 0.0  # John 3:16 does not find "the whole Bible"


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


def _insert_naves(url, subject, labels):
    """A subject with one sub-entry per label, each listing its passages."""
    with connect(url) as conn:
        root = entry_id(subject, (), 0)
        conn.execute("INSERT INTO nave_topics VALUES (%s, %s, '', '{}', 0, NULL, 1)", (root, subject))
        for n, (label, passages) in enumerate(labels.items(), start=2):
            eid = entry_id(subject, (label,), 0)
            conn.execute("INSERT INTO nave_topics VALUES (%s, %s, %s, %s, 1, %s, %s)", (eid, subject, label, [label], root, n))
            for s in passages:
                conn.execute("INSERT INTO nave_passages VALUES (%s, %s, %s)", (eid, s, s))


def _side_label(subject, want, labels):
    return next(lab for lab in labels if side(readable(subject, (lab,))) == want)


def test_training_nave_accessor_never_leaks_heldout(db_url):
    _insert_topics(db_url, {"comfort": [19023001 + i for i in range(5)]})
    labels = ["In sorrow", "In prayer", "Of saints", "In old age", "In sickness", "Of the widow", "In exile", "Of God"]
    heldout = _side_label("AFFLICTIONS", "heldout", labels)
    training = _side_label("AFFLICTIONS", "training", labels)
    ps = [19088001 + i for i in range(4)]
    # the held-out label, its near duplicate (plural: the same split key), a training label, and one with 2 passages
    _insert_naves(db_url, "AFFLICTIONS", {heldout: ps, heldout + "s": ps[:3], training: ps, "Of David": ps[:2]})
    with connect(db_url) as conn:
        with pytest.raises(RuntimeError, match="materialize gold_set"):
            training_nave_passages(conn)
        stats = build_gold(conn)
        assert stats.nave_queries == 3 and stats.dev_sentences >= 80
        seen = {p.text for p in training_nave_passages(conn)}
        assert readable("AFFLICTIONS", (heldout,)) not in seen and readable("AFFLICTIONS", (heldout + "s",)) not in seen
        assert readable("AFFLICTIONS", (training,)) in seen
        held = {q.text: q for q in eval_queries(conn, "nave_heldout")}
        assert set(held) == {readable("AFFLICTIONS", (heldout,)), readable("AFFLICTIONS", (heldout + "s",))}
        assert all(p.grade == 1 for q in held.values() for p in q.passages)
        assert len(eval_queries(conn, "dev_sentences")) == stats.dev_sentences


def test_concentration_punishes_one_answer_for_everyone():
    famous = Result(23041010, 23041010)
    same = [[famous, Result(i, i), Result(i + 1, i + 1)] for i in range(0, 100, 10)]
    assert concentration(same) == (1.0, pytest.approx(100 * 21 / 30))
    # a range around the famous verse is still the famous passage; abstentions are left out
    varied = [[Result(23041009, 23041011)], [Result(1, 1)], [], [Result(2, 2), famous]]
    assert concentration(varied) == (pytest.approx(2 / 3), pytest.approx(100 * 4 / 4))
    assert concentration([[], []]) == (None, None)


def test_training_accessor_never_leaks_heldout(db_url):
    words = ["grief", "hope", "comfort", "anger", "peace", "fear", "joy", "trust", "mercy", "patience", "rest", "healing"]
    heldout = next(w for w in words if side(w) == "heldout")
    training = next(w for w in words if side(w) == "training")
    # the same topic under near-duplicate spellings, and a small topic (< 5 passages, not a gold query)
    topics = {heldout: [40005004 + i for i in range(6)], heldout + "s": [19034018, 19147003],
              training: [45015013 + i for i in range(6)], "pizza": [1001001, 1001002]}
    _insert_topics(db_url, topics)
    _insert_naves(db_url, "COMFORT", {"In sorrow": [19023001, 19023002, 19023003]})
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
    # Nave's listed passages: the loader's checks, the gold builder and the door (training side only)
    "nave_passages": {"naves/assets.py", "gold/nave_set.py", "gold/access.py"},
    "nave_splits": {"gold/access.py", "gold/assets.py"},
}


def test_only_the_accessor_reads_topic_votes_and_nave_passages():
    pkg = Path(__file__).resolve().parents[1] / "citebible_pipeline"
    for table, allowed in ALLOWED_READERS.items():
        pattern = re.compile(rf"\b(from|join)\s+{table}\b", re.IGNORECASE)
        readers = {str(p.relative_to(pkg)) for p in pkg.rglob("*.py") if pattern.search(p.read_text())}
        assert readers <= allowed, f"{table} read outside the accessor: {sorted(readers - allowed)}"


def test_the_heldout_split_of_the_real_topics_does_not_move():
    """The split keeps its own frozen key function: changing a query-side stemmer or stop list must never move
    which of the bundled snapshot's topics are held out (1,091 of 5,559 names, pinned by their hash)."""
    import hashlib

    from citebible_pipeline.openbible.parse import normalize_topic
    from citebible_pipeline.sources import open_text_member
    from citebible_pipeline.sources.datasets import DATASETS

    with open_text_member(DATASETS["openbible_topic_votes"].bundled_path) as f:
        next(f)
        names = sorted({normalize_topic(line.split("\t", 1)[0]) for line in f if line.strip()})
    held = [n for n in names if side(n) == "heldout"]
    assert (len(names), len(held)) == (5559, 1091)
    assert hashlib.sha256("\n".join(held).encode()).hexdigest() == \
        "31a21d02c21627349988cc9b0e29bfd6dca07e880a37a175c2e6250891047078"
