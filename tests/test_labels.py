"""Document expansion (issue 22): the label index on toy tables (pure, no database), and the build rule."""

from citebible_pipeline.gold.access import TrainingNavePassage, TrainingPassage
from citebible_pipeline.gold.split import split_key
from citebible_pipeline.naves.queries import readable
from citebible_pipeline.query.fuse import RankedList, admit, fuse
from citebible_pipeline.query.labels import EMPTY, build_index, label_scores, search
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
