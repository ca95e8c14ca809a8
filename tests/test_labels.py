"""Document expansion (issue 22): the label index on toy tables (pure, no database), and the build rule."""

import numpy as np
import pytest

from citebible_pipeline.gold.access import TrainingNavePassage, TrainingPassage
from citebible_pipeline.gold.split import split_key
from citebible_pipeline.naves.queries import readable
from citebible_pipeline.query.fuse import RankedList, admit, fuse
from citebible_pipeline.query.features import COL, RerankQuery, compute
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.labels import EMPTY, build_index, label_scores, near_labels, nearest, search
from citebible_pipeline.themes.labels import build_labels

HUB, LAMENT, BURIAL = 43003016, 19088001, 40027059


def _rows(labels: dict[str, dict[int, float]]):
    """(label id, text, split key, start, end, weight) rows as passage_labels holds them."""
    return [(i, text, split_key(text), v, v, w) for i, (text, ps) in enumerate(labels.items(), start=1)
            for v, w in ps.items()]


def test_a_sentence_meets_a_passage_through_the_words_of_its_labels():
    idx = build_index(_rows({"afflictions and adversities: prayer in": {LAMENT: 0.5},
                             "burial": {BURIAL: 1.0}, "love of god": {HUB: 1.0}}))
    got = search(idx, "Why does no one answer my prayer in these afflictions?")
    assert [s for s, _, _ in got] == [LAMENT]  # no label of the burial or the hub shares a word
    assert search(idx, "pizza toppings") == [] and search(EMPTY, "prayer") == []


def test_a_hub_listed_under_every_label_loses_to_the_passage_specific_to_the_need():
    """Both are listed under the one label the sentence matches, the hub at a higher weight; the hub is also listed
    under forty other labels, so its specificity (smoothed inverse label frequency) puts it below."""
    labels = {"grief and mourning": {HUB: 1.0, LAMENT: 0.8}}
    labels.update({f"topic number {i}": {HUB: 1.0} for i in range(40)})
    got = search(build_index(_rows(labels)), "so much grief since the funeral")
    assert [s for s, _, _ in got] == [LAMENT, HUB]


def test_bm25_prefers_the_rarer_word_and_training_leaves_a_label_out_by_its_key():
    idx = build_index(_rows({"lament": {LAMENT: 1.0}, "god's love": {HUB: 1.0}, "god's wrath": {BURIAL: 1.0}}))
    scores = label_scores(idx, "a lament to god")
    assert scores[0] > scores[1] > 0  # 'lament' is in one label, 'god' in two
    assert [s for s, _, _ in search(idx, "a lament to god")][0] == LAMENT
    left_out = search(idx, "a lament to god", exclude=frozenset({split_key("lament")}))
    assert {s for s, _, _ in left_out} == {HUB, BURIAL}  # the query's own label is gone, the others stay


def test_the_label_lists_top_reaches_the_pool_like_a_retrievers():
    prior = RankedList("prior", "prior", "passage", 2.0, [(i, i, "verse", 1.0) for i in range(100, 160)])
    labelled = RankedList("labels", "labels", "passage", 1.0, [(i, i, "verse", 1.0) for i in range(1, 31)])
    pool = admit(fuse([prior, labelled]), 50, 10)
    assert [c.start for c in pool[50:]] == list(range(1, 11))


def test_labels_are_training_side_only_and_carry_the_key_training_leaves_out():
    def nave(eid, subject, path, s):
        return TrainingNavePassage(eid, readable(subject, path), subject, path, s, s)

    topics = [TrainingPassage("grief", LAMENT, LAMENT, 50, None), TrainingPassage("grief", HUB, HUB, 100, None),
              TrainingPassage("pizza", BURIAL, BURIAL, 3, None)]
    rows = [nave(1, "AFFLICTIONS AND ADVERSITIES", ("Prayer in",), LAMENT),
            nave(1, "AFFLICTIONS AND ADVERSITIES", ("Prayer in",), LAMENT + 1),
            nave(2, "HOSPITALITY", ("Instances of",), BURIAL)]
    labels = build_labels(topics, rows, heldout_keys=frozenset({split_key("hospitality")}))
    by = {lab.text: lab for lab in labels}
    assert set(by) == {"grief", "pizza", "afflictions and adversities: prayer in"}  # the held-out subject's entry is out
    assert by["grief"].passages == {(LAMENT, LAMENT): 0.5, (HUB, HUB): 1.0}  # shares of the topic's best votes
    lab = by["afflictions and adversities: prayer in"]
    assert lab.source == "naves" and lab.split_key == split_key("afflictions and adversities")
    assert set(lab.passages.values()) == {0.5} and len(lab.passages) == 2


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, np.float32)
    return v / np.linalg.norm(v)


def test_the_nearest_labels_by_meaning_come_nearest_first_and_training_leaves_its_own_out():
    """Label vectors (issue 22, item 5): a sentence meets the passages of the labels nearest it in meaning, whatever
    their words; each span carries its label's cosine and block, nearest first; `exclude` drops a label by its key."""
    labels = {"lament": {LAMENT: 1.0, LAMENT + 1: 1.0}, "burial": {BURIAL: 1.0}, "love of god": {HUB: 1.0}}
    vectors = np.stack([_unit(1, 0.2, 0), _unit(0, 1, 0), _unit(0.3, 0, 1)])
    idx = build_index(_rows(labels), vectors=vectors)
    s, e, sims, block, _ = nearest(idx, _unit(1, 0, 0.1), top=2)
    assert s.tolist() == [LAMENT, LAMENT + 1, HUB] and block.tolist() == [0, 0, 1]
    assert sims[0] == sims[1] > sims[2]
    s, *_ = nearest(idx, _unit(1, 0, 0.1), top=2, exclude=frozenset({split_key("lament")}))
    assert s.tolist() == [HUB, BURIAL]
    assert nearest(build_index(_rows(labels)), _unit(1, 0, 0)) is None  # no vectors built: no label features
    with pytest.raises(ValueError, match="3 labels but 2 label vectors"):
        build_index(_rows(labels), vectors=vectors[:2])


def test_label_features_read_the_nearest_labels_and_discount_a_hub_by_its_fame():
    """The reranker's label features: the nearest covering label's cosine, the mean of the nearest three, how many,
    and that count over every label listing the passage's most listed verse. The hub meets as many near labels as
    the lament but is listed under forty more, so its share is lower; a passage no near label lists gets zeros."""
    labels = {"lament": {LAMENT: 1.0, HUB: 1.0}, "honest complaint": {LAMENT: 1.0, HUB: 1.0}}
    labels.update({f"topic number {i}": {HUB: 1.0} for i in range(40)})
    vectors = np.stack([_unit(1, 0.1, 0), _unit(1, 0.3, 0)] + [_unit(0, 0.2, 1)] * 40)
    idx = build_index(_rows(labels), vectors=vectors)
    q = _unit(1, 0, 0)
    cands = [Candidate(LAMENT, LAMENT + 5, "range"), Candidate(HUB, HUB, "verse"), Candidate(BURIAL, BURIAL, "verse")]
    X = compute(_tables(), RerankQuery("why", q, np.zeros((0, 3), np.float32), label_spans=nearest(idx, q, top=2)), cands)
    cos = [float(v @ q) for v in vectors[:2]]
    assert X[0, COL["label_cos_max"]] == pytest.approx(cos[0]) == X[1, COL["label_cos_max"]]
    assert X[0, COL["label_cos_top3"]] == pytest.approx(np.mean(cos))
    assert X[0, COL["label_count"]] == X[1, COL["label_count"]] == pytest.approx(np.log1p(2))
    assert X[0, COL["label_share"]] == pytest.approx(1.0) and X[1, COL["label_share"]] == pytest.approx(2 / 42)
    assert not X[2, [COL[f] for f in ("label_cos_max", "label_cos_top3", "label_count", "label_share")]].any()


def test_the_rewrites_nearest_labels_feed_their_own_features():
    """A step-back rewrite names a need the sentence's words may not: the labels nearest any rewrite (each label at its
    nearest rewrite's cosine) give rw_label_*, beside the sentence's own label features; no rewrite, none."""
    labels = {"lament": {LAMENT: 1.0}, "prayer": {HUB: 1.0}, "burial": {BURIAL: 1.0}}
    vectors = np.stack([_unit(1, 0, 0), _unit(0, 1, 0), _unit(0, 0, 1)])
    idx = build_index(_rows(labels), vectors=vectors)
    q, rewrites = _unit(0.2, 1, 0), np.stack([_unit(1, 0, 0.1), _unit(0, 0.1, 1)])
    sentence, rw = near_labels(idx, q, rewrites)
    assert near_labels(idx, q, np.zeros((0, 3), np.float32))[1] is None
    cands = [Candidate(LAMENT, LAMENT, "verse"), Candidate(HUB, HUB, "verse"), Candidate(BURIAL, BURIAL, "verse")]
    X = compute(_tables(), RerankQuery("I pray and pray", q, rewrites, label_spans=sentence, rewrite_label_spans=rw), cands)
    assert X[0, COL["rw_label_cos_max"]] == pytest.approx(float(vectors[0] @ rewrites[0]))
    assert X[2, COL["rw_label_cos_max"]] == pytest.approx(float(vectors[2] @ rewrites[1]))
    assert X[1, COL["label_cos_max"]] > X[0, COL["label_cos_max"]]  # the sentence's own nearest label is the prayer one
    assert X[:, COL["rw_label_count"]].tolist() == pytest.approx([np.log1p(1)] * 3)


def _tables():
    from citebible_pipeline.query.features import PoolTables

    empty = np.zeros(0, np.int64)
    return PoolTables(empty, np.zeros((0, 3), np.float32), {}, np.zeros((0, 3), np.float32), empty, empty,
                      np.zeros(0), np.zeros(0), {})
