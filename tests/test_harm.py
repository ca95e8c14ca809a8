"""Do no harm (issue 63): the verse-function classifier on a toy labelled set, who is speaking, the rule on a synthetic
pool, the avoid lists, and harm@5. The built tables' side is at the end (slow)."""

import csv
from pathlib import Path

import numpy as np
import pytest

from citebible_pipeline.bible.references import parse_reference
from citebible_pipeline.gold.build import CuratedQuery
from citebible_pipeline.gold.metrics import LONG_PASSAGE, Result, harm_at, wounds
from citebible_pipeline.query.analyze import analyze, validate
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.harm import Voices, held_off, near_situations, off_need, stage
from citebible_pipeline.query.promises import contradicted, losses, promised
from citebible_pipeline.voice.features import VerseInput, context_means, matrix
from citebible_pipeline.voice.model import (CLASSES, DIRECTIVE, HARSH, HARSH_DRAWN, assign, load_labels, lower_bound,
                                            name, orders, per_class, sample, thresholds_for, train)


def _toy(n_per: int, seed: int) -> tuple[np.ndarray, list[str], list[str]]:
    """Eleven classes as eleven clusters in 16 dimensions; the last two harsh ones overlap (a hard pair)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(CLASSES), 16)) * 3
    centres[CLASSES.index("rebuke")] = centres[CLASSES.index("judgement")] + 0.4
    X = np.vstack([centres[k] + rng.normal(size=(n_per, 16)) for k in range(len(CLASSES))])
    y = [c for c in CLASSES for _ in range(n_per)]
    return X, y, [""] * len(y)


def test_the_classifier_learns_a_toy_labelled_set_and_assigns_a_harsh_class_only_where_it_is_sure():
    X, y, also = _toy(40, 1)
    model = train(X, y, also)
    Xt, yt, _ = _toy(20, 1)
    pred = model.assign(model.probabilities(Xt))
    table = per_class(np.array([CLASSES.index(c) for c in yt]), pred)
    assert table["law"]["precision"] >= 0.9 and table["narrative"]["recall"] >= 0.9  # separable classes are learned
    # the overlapping pair: whatever is assigned of it is assigned surely, or it is not assigned at all
    for c in ("judgement", "rebuke"):
        assert table[c]["precision"] is None or table[c]["precision"] >= 0.8 or model.thresholds[c] > 1
    assert set(model.thresholds) == set(HARSH) and model.c in (0.03, 0.1, 0.3, 1.0)
    again = train(X, y, also)  # deterministic: the same rows give the same model
    assert np.array_equal(again.probabilities(Xt), model.probabilities(Xt))


def test_a_harsh_class_below_its_threshold_takes_the_best_gentle_class():
    P = np.zeros((2, len(CLASSES)))
    P[0, CLASSES.index("judgement")], P[0, CLASSES.index("lament")] = 0.6, 0.4
    P[1, CLASSES.index("judgement")], P[1, CLASSES.index("lament")] = 0.9, 0.1
    got = assign(P, {"judgement": 0.8})
    assert [CLASSES[k] for k in got] == ["lament", "judgement"]
    j, r = CLASSES.index("judgement"), CLASSES.index("rebuke")
    y = np.array([j] * 40 + [r] * 4)
    Q = np.zeros((44, len(CLASSES)))
    Q[:, j] = [0.9] * 40 + [0.5] * 4
    assert thresholds_for(Q, y, np.full(44, -1))["judgement"] == 0.55  # above the four rebukes: 40 of 40 right
    also = np.array([-1] * 40 + [j] * 4)  # the rebukes' second label is judgement: right at any threshold
    assert thresholds_for(Q, y, also)["judgement"] == 0.3
    assert thresholds_for(Q[:3], y[:3], also[:3])["judgement"] == 1.01  # 3 of 3 right is no evidence: never assigned
    assert lower_bound(40, 40) > 0.9 > lower_bound(3, 3) and lower_bound(0, 0) == 0.0


def test_a_verse_reads_with_its_passage_and_its_chapter_never_across_a_chapter_break():
    vectors = {1001001 + i: np.array([float(i), 1.0], np.float32) for i in range(8)}  # chapter 1: 8 verses
    vectors[1002001] = np.array([100.0, 1.0], np.float32)  # chapter 2: one verse
    got = context_means(sorted(vectors), vectors, window=2)
    assert np.allclose(got[1001001], [1.0, 1.0, 3.5, 1.0])  # verses 1-3 (0, 1, 2) beside the chapter's mean (3.5)
    assert np.allclose(got[1001005], [4.0, 1.0, 3.5, 1.0])  # verses 3-7
    assert np.allclose(got[1002001], [100.0, 1.0, 100.0, 1.0])  # the next chapter's verse reads alone
    row = matrix([VerseInput(1001001, "Woe to you", "prophecy")], vectors, got, {}, 2)[0]
    assert np.allclose(row[-6:], [0.0, 1.0, 1.0, 1.0, 3.5, 1.0])  # own | passage | chapter, last in the row


def test_the_hand_labels_hold_a_stratified_sample_with_a_held_out_quarter():
    labels = load_labels()
    held = [lab for lab in labels if lab.split == "heldout"]
    assert len(labels) >= 1500 and 400 <= len(held) <= 500
    assert {lab.label for lab in held} >= set(HARSH)  # every harsh function has held-out examples
    with pytest.raises(ValueError, match="line 2"):
        load_labels("id,ref,label,also,split,note\n1001001,Genesis 1:1,gospel,,training,\n")


def test_the_harsh_drawn_labels_are_apart_from_the_stratified_sample():
    drawn = load_labels(name=HARSH_DRAWN)
    assert len(drawn) >= 800 and not {lab.id for lab in drawn} & {lab.id for lab in load_labels()}
    held = [lab for lab in drawn if lab.split == "heldout"]
    assert {"violence", "rebuke"} <= {lab.label for lab in held} and 150 <= len(held) <= 250
    with pytest.raises(ValueError, match="labels_harsh.csv line 2"):
        load_labels("id,ref,label,also,split,note\n1001001,Genesis 1:1,gospel,,training,\n", name=HARSH_DRAWN)


def test_the_harsh_model_names_a_harsh_function_and_the_function_model_keeps_the_gentle_one_and_the_orders():
    k = {c: CLASSES.index(c) for c in CLASSES}
    P, Q = np.zeros((3, len(CLASSES))), np.zeros((3, len(CLASSES)))
    P[0, k["command"]], P[0, k["comfort"]] = 0.7, 0.3  # the harsh model is sure of violence: it names it
    Q[0, k["violence"]], Q[0, k["command"]] = 0.8, 0.2
    P[1, k["judgement"]], P[1, k["lament"]] = 0.9, 0.1  # the function model's judgement, the harsh model unsure
    Q[1, k["judgement"]], Q[1, k["comfort"]] = 0.6, 0.4
    P[2, k["instruction"]], P[2, k["praise"]] = 0.6, 0.4  # gentle for both: the function model's function
    Q[2, k["comfort"]], Q[2, k["instruction"]] = 0.9, 0.1
    voice, probability = name(P, Q, {"violence": 0.7, "judgement": 0.85})
    assert [CLASSES[v] for v in voice] == ["violence", "lament", "instruction"]
    assert np.allclose(probability, [0.8, 0.1, 0.6])
    # the order flag is the function model's alone: the harsh model's violence does not lift verse 0's order
    assert orders(P, {"judgement": 0.8}).tolist() == [True, False, True] and set(DIRECTIVE) == {"command", "instruction"}


def test_the_training_sample_is_stable_and_a_sample_of_zero_is_every_label():
    training = [lab for lab in load_labels() if lab.split == "training"]
    drawn = sample(training, 1500)
    assert len(drawn) == 1500 and len({lab.id for lab in drawn}) == 1500 and set(drawn) <= set(training)
    assert sample(list(reversed(training)), 1500) == drawn  # by the verse ids, not the file's order
    assert sample(training, 0) == training and sample(training, 10**6) == training
    assert {lab.label for lab in drawn} == set(CLASSES)  # a fair draw keeps every function


@pytest.mark.parametrize("text, stance", [
    ("My father beat me when I was small and I still flinch", "sufferer"),
    ("We lost the baby at twenty weeks", "sufferer"),
    ("I am going blind and I'm scared", "sufferer"),
    ("I stole money from my church and nobody knows", "doer"),
    ("I cheated on my husband", "doer"),
    ("How can I comfort my sister after her divorce?", "helper"),
    ("my friend was assaulted, what do I say to her", "helper"),
    ("my brother lost his job, what do I even say to him", "helper"),  # an adverb inside the question
    ("What does the Bible say about divorce?", "seeker"),
    ("Is it a sin to get a tattoo?", "seeker"),
    ("What did Paul teach about grace?", "seeker"),
    ("we're down to our last twenty dollars and the rent is due", "sufferer"),  # a contraction is still the first person
    ("gambled away the rent money again, cannot face her", "sufferer"),  # a diary's dropped subject
    ("Blessed are the poor in spirit", "seeker"),  # a copula after the verb: no dropped subject
    ("drank the whole bottle again last night", "sufferer"),  # an irregular past tense drops its subject too
    ("got fired today and the mortgage is due", "sufferer"),
    ("feeling so alone since the move", "sufferer"),  # a diary's present participle
    ("saved by grace through faith", "seeker"),  # a participle with no object and no diary opening
    ("stole the rent money from my roommate and she doesn't know", "doer"),  # the dropped subject confesses as "I"
    ("had an affair last year and my wife just found out", "doer"),
    ("couldn't get out of bed again today", "sufferer"),  # a diary's time words are the writer's own days
    ("the kids ask about their father every night", "sufferer"),
    ("Is it wrong to feel this tired every day?", "seeker"),  # a question asks what the Bible says
    ("living for today", "seeker"),  # a topic's name
    ("What does it mean to be born again?", "seeker"),
    ("verses for when you feel like nobody would notice if you were gone", "sufferer"),  # scripture for a situation
    ("scripture for a widow who can't face the holidays", "sufferer"),
    ("verses about the grace of God", "seeker"),  # a study of a theme
    ("what to say to a neighbour whose son just died", "helper"),  # a helper's question asked without "I"
    ("how can a pastor support a family after a fire", "helper"),
    ("What did Jesus say to the Pharisees?", "seeker"),
    ("is it wrong that I still can't forgive my father", "sufferer"),  # a study's shape asked of the reader's own life
    ("a widow at forty with two small children, so lonely", "sufferer"),  # a statement of distress: the writer's own
    ("caring for a parent with dementia and completely drained", "sufferer"),
    ("fear of god", "seeker"),  # a topic's name of a few words
    ("sickness: sent as a judgment on the wicked", "seeker"),  # a topic index's heading
    ("what the bible says about grief and loss", "seeker"),  # a study asked, though not with a question mark
])
def test_who_is_speaking(text, stance):
    assert analyze(validate(text)).stance == stance


@pytest.mark.parametrize("text, stance, held_as", [
    ("What does the Bible say about suicide?", "seeker", "sufferer"),
    ("what happens to christians who die by suicide", "seeker", "sufferer"),
    ("what does scripture say to someone who was molested as a child", "seeker", "sufferer"),
    ("What does the Bible say about divorce?", "seeker", "seeker"),  # the issue's own seeker: shown everything
    ("What did Paul teach about grace?", "seeker", "seeker"),
    ("I was raped and I can't tell anyone", "sufferer", "sufferer"),
    ("I cheated on my husband", "doer", "doer"),
])
def test_a_question_asked_of_abuse_or_suicide_is_answered_as_one_it_may_have_happened_to(text, stance, held_as):
    """A seeker's question that names abuse or suicide is often asked by the one it happened to or one who loves them:
    its stance stays a seeker's, and the harm stage holds its answer as a sufferer's (Analysis.harm_stance)."""
    read = analyze(validate(text))
    assert (read.stance, read.harm_stance, read.asks_of_wound) == (stance, held_as, stance != held_as)


def test_a_wish_not_to_live_is_read_without_an_i_where_its_subject_is_dropped():
    """The instruments' phrases of a life at risk are a living reader's, said in a diary's words with no "I"; a study
    question naming one ("what does the Bible say about...") or a sentence naming who said it is not."""
    for text in ("no reason to keep living since she left", "tired of living. so tired", "pills saved up, just in case"):
        read = analyze(validate(text))
        assert read.crisis and read.stance == "sufferer", text
    # the phrase is the writer's own, so the sentence states a need in the first person: it is pastoral
    assert analyze(validate("dont want to wake up tomorrow")).pastoral
    assert not analyze(validate("What does the Bible say about being tired of living?")).crisis
    assert analyze(validate("wrote a goodbye letter to my kids last night")).crisis  # the C-SSRS's preparatory act


SCREENING = Path(__file__).parent / "data" / "screening_sentences.csv"


def test_the_screening_lists_read_sentences_written_apart_from_them():
    """query/screening.py on 310 labelled sentences two helpers wrote without reading the repository (set A read while
    the lists were written, set B once after; docs/decisions.md, seventh increment): nothing reads as crisis that is
    not one, only a helper's "my friend was raped" reads as abuse that was not done to the writer (by design: the abuse
    need and lines serve the helper too), and recall holds its measured floor (A: abuse 38/46, crisis 43/57; B: 31/45,
    29/48)."""
    rows = list(csv.DictReader(SCREENING.open(encoding="utf-8")))
    read = [analyze(validate(r["text"])) for r in rows]
    assert not [r["text"] for r, a in zip(rows, read) if a.crisis and r["crisis"] == "0"]
    assert not [r["text"] for r, a in zip(rows, read) if a.abuse and r["abuse"] == "0" and r["stance"] != "helper"]
    for part, floor in (("A", {"abuse": 0.8, "crisis": 0.75}), ("B", {"abuse": 0.68, "crisis": 0.6})):
        for key in ("abuse", "crisis"):
            told = [getattr(a, key) for r, a in zip(rows, read) if r["set"] == part and r[key] == "1"]
            assert len(told) >= 40 and sum(told) / len(told) >= floor[key], (part, key, sum(told), len(told))


def _cand(ref: str, level: str = "range") -> Candidate:
    r = parse_reference(ref)
    return Candidate(r.start_id, r.end_id, level, hits=[("original", "dense", "verse", 1), ("prior", "prior", "passage", 3)])


def test_a_sufferers_judgement_passage_leaves_the_top_5_and_a_seekers_stays():
    """A synthetic pool: Proverbs 19:9 tagged rebuke (harsh, not grave), Isaiah 13:9 judgement (grave), Psalm 34:18
    comfort. A sufferer and a helper see neither harsh one in the top 5; a doer still sees the rebuke, not the
    judgement; a seeker sees the pool as ranked. Nothing is removed."""
    ids = np.array([parse_reference(r).start_id for r in ("Psalm 34:18", "Proverbs 19:9", "Isaiah 13:9")])
    order = np.argsort(ids)
    voices = Voices(ids[order], np.array([False, True, True])[order], np.array([False, False, True])[order])
    pool = [_cand("Proverbs 19:9"), _cand("Isaiah 13:9"), _cand("Psalm 34:18")] + [_cand(f"Psalm {p}:1") for p in range(1, 8)]
    pins = [None] * len(pool)
    for stance in ("sufferer", "helper"):
        top = [c.key for c in stage(pool, stance, voices, [], pins)[:5]]
        assert pool[0].key not in top and pool[1].key not in top and pool[2].key in top
    doer = [c.key for c in stage(pool, "doer", voices, [], pins)]
    assert doer[0] == pool[0].key and pool[1].key not in doer[:5]
    assert stage(pool, "seeker", voices, [], pins) == pool
    assert sorted(c.key for c in stage(pool, "sufferer", voices, [], pins)) == sorted(c.key for c in pool)


def test_a_passage_no_routed_pastoral_need_votes_for_moves_below_for_a_sufferer():
    """pastoral_votes and held_off: Psalm 34:18 lies in the routed pastoral need's voted range and Proverbs 6:16-19 in
    none (a routed topic votes for it), so it moves below every other candidate for a sufferer or a helper; a doer and a
    seeker read no votes, nor does a reader routed to no pastoral need; a candidate off the need by its surface moves
    either way, and one the need voted for but off it by its surface moves too."""
    from types import SimpleNamespace

    from citebible_pipeline.query.harm import pastoral_votes
    from citebible_pipeline.query.route import Routed

    def span(ref: str) -> tuple[int, int]:
        r = parse_reference(ref)
        return r.start_id, r.end_id

    voted = [span("Psalm 34:17-20"), span("Psalm 23")]
    themes = SimpleNamespace(pastoral_mask=np.array([True, False]), passages=[
        (np.array([s for s, _ in voted]), np.array([e for _, e in voted]), np.ones(2)),
        (np.array([span("Proverbs 6:16-19")[0]]), np.array([span("Proverbs 6:16-19")[1]]), np.ones(1))])
    routed = [Routed(0, 0.5, 0.4), Routed(1, 0.6, 0.6)]
    votes = pastoral_votes(themes, routed, "sufferer")
    assert len(votes) == 1 and pastoral_votes(themes, routed, "helper") == votes
    assert pastoral_votes(themes, routed, "doer") == pastoral_votes(themes, routed, "seeker") == []
    assert pastoral_votes(themes, routed[1:], "sufferer") == []  # a topic routed alone: nothing to read

    voices = Voices(np.array([], np.int64), np.array([], bool), np.array([], bool))
    listed, comfort, psalm = _cand("Proverbs 6:16-19"), _cand("Psalm 34:18"), _cand("Psalm 23:1")
    pool, pins = [listed, comfort, psalm], [None] * 3
    vectors = lambda: np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], np.float32)  # noqa: E731
    off = held_off(pool, vectors, (set(), None), 0.5, votes)
    assert off == [True, False, False]
    assert [c.key for c in stage(pool, "sufferer", voices, [], pins, off)] == [comfort.key, psalm.key, listed.key]
    assert held_off(pool, vectors, (set(), None), 0.5, []) is None  # no votes: nothing moves
    surface = [Candidate(c.start, c.end, c.level, hits=[("original", "dense", "verse", 1)]) for c in pool]
    need = (set(), np.array([[1.0, 0.0]], np.float32))  # the third candidate is far from the routed need's rewrite
    assert held_off(surface, vectors, need, 0.5, []) == [False, False, True]
    assert held_off(surface, vectors, need, 0.5, votes) == [True, False, True]


@pytest.mark.parametrize("text, lost", [
    ("We lost the baby at twenty weeks", ["child"]),
    ("our daughter was stillborn on tuesday", ["child", "death"]),
    ("we can't get pregnant and every shower at church hurts", ["child", "childless"]),
    ("my dad died last month and I can't stop crying", ["death"]),
    ("my friend just got a terminal diagnosis", ["death"]),
    ("my wife walked out on me and the kids", ["abandoned"]),
    ("I'm so anxious about my exams", []),
    ("What does the Bible say about marriage?", []),
])
def test_what_the_reader_has_lost_is_read_from_the_sentence(text, lost):
    assert losses(text) == lost and analyze(validate(text)).losses == lost


def test_jesus_welcoming_the_little_children_is_held_from_the_childless_not_the_bereaved():
    """Matthew 19:14 comforts a parent whose baby died and wounds one who cannot conceive (decisions, eighteenth
    increment); "little children" as an apostle's address is no such welcome."""
    got = promised(["But Jesus said, “Allow the little children, and don’t forbid them to come to me; for the Kingdom of "
                    "Heaven belongs to ones like these.”", "My little children, I write these things to you so that you "
                    "may not sin."])
    assert got["little_ones"].tolist() == [True, False]
    assert losses("another negative test, month 29 of trying to conceive") == ["childless"]
    assert "little_ones" in contradicted(losses("four rounds of IVF and nothing"))
    assert "little_ones" not in contradicted(losses("our daughter was stillborn on tuesday"))


@pytest.mark.parametrize("text, lost", [
    ("my husband hits me when he drinks", ["partner"]),
    ("my ex-boyfriend forced me even after i said no", ["partner"]),
    ("my wife walked out and now she threatens to take the kids", ["abandoned", "partner"]),
    ("my stepdad hits me when he drinks", []),  # abuse, but not by a partner: the marriage ideal is not what it breaks
    ("my husband is wonderful but I'm scared of the surgery", []),  # a partner, no abuse
])
def test_a_partner_who_hurts_the_reader_breaks_the_marriage_ideal(text, lost):
    """A disclosure of abuse naming a partner reads the "partner" loss, which the marriage ideal contradicts."""
    assert analyze(validate(text)).losses == lost
    assert contradicted(["partner"]) == {"family"}


def test_a_verse_promising_what_was_lost_is_told_from_comfort_in_the_same_words():
    """The WEB's own wording: children as a reward, a life's work from the womb, healing of the body and long life, the
    marriage ideal are promises; healing of the broken-hearted, being knit together in the womb, a weapon's quiver and
    a narrative are not."""
    texts = ["Behold, children are a heritage of Yahweh. The fruit of the womb is his reward.",  # Psalm 127:3
             "who forgives all your sins, who heals all your diseases,",  # Psalm 103:3
             "I will satisfy him with long life, and show him my salvation.",  # Psalm 91:16
             "Therefore a man will leave his father and his mother, and will join with his wife, and they will be one flesh.",
             "He heals the broken in heart, and binds up their wounds.",  # Psalm 147:3
             "Now therefore, please take your weapons, your quiver and your bow, and go out to the field",  # Genesis 27:3
             "Yahweh is near to those who have a broken heart, and saves those who have a crushed spirit.", None,
             "God, who separated me from my mother’s womb and called me through his grace,",  # Galatians 1:15
             "For you formed my inmost being. You knit me together in my mother’s womb."]  # Psalm 139:13
    got = promised(texts)
    assert got["children"].tolist() == [True] + [False] * 7 + [True, False]
    assert got["healing"].tolist() == [False, True, True] + [False] * 7
    assert got["family"].tolist() == [False, False, False, True] + [False] * 6
    assert contradicted(["child"]) == {"children", "healing"} and contradicted(["abandoned"]) == {"family"}
    assert contradicted([]) == set()


def test_a_verse_that_damns_is_read_by_its_words_and_leaves_the_top_5_for_everyone_but_a_seeker():
    """The WEB's wording of the unforgivable sin, "the soul who sins shall die" and the Father's forgiveness withheld
    damns; the forgiveness beside it and a warning that holds out a way back do not. A doer, a sufferer and a helper are not shown it first; a seeker is."""
    texts = ["but whoever may blaspheme against the Holy Spirit never has forgiveness, but is subject to eternal "
             "condemnation.",  # Mark 3:29
             "The soul who sins, he shall die.",  # Ezekiel 18:20, shortened
             "So, because you are lukewarm, and neither hot nor cold, I will vomit you out of my mouth.",  # Revelation 3:16
             "Don’t be deceived. Neither the sexually immoral ... will inherit God’s Kingdom.",  # 1 Corinthians 6:9-10
             "If we confess our sins, he is faithful and righteous to forgive us the sins",  # 1 John 1:9
             "Therefore I tell you, every sin and blasphemy will be forgiven men",  # Matthew 12:31's first half
             "Repent therefore, and turn again, that your sins may be blotted out",  # Acts 3:19: sins, not the sinner
             "But if you don’t forgive men their trespasses, neither will your Father forgive your trespasses.",  # 6:15
             "For if you forgive men their trespasses, your heavenly Father will also forgive you."]  # Matthew 6:14
    assert promised(texts)["damnation"].tolist() == [True] * 3 + [False] * 4 + [True, False]
    refs = ("Mark 3:29", "Psalm 34:18")
    ids = np.array(sorted(parse_reference(r).start_id for r in refs))
    voices = Voices(ids, np.zeros(2, bool), np.zeros(2, bool), promises={"damnation": ids == parse_reference("Mark 3:29").start_id})
    pool = [_cand("Mark 3:29")] + [_cand(f"Psalm {p}:1") for p in range(1, 6)] + [_cand("Psalm 34:18")]
    for stance in ("sufferer", "helper", "doer"):
        top = [c.key for c in stage(pool, stance, voices, voices.condemning(stance), [None] * len(pool))[:5]]
        assert pool[0].key not in top
    assert voices.condemning("seeker") == [] and Voices(ids, ids < 0, ids < 0).condemning("doer") == []


def _held_from_the_hurt_only(kind: str, verse: str, passage: str) -> None:
    """A synthetic pool led by `passage` (holding `verse`, of this lexicon `kind`) over six gentle verses: a sufferer
    and a helper are not shown it in the top 5; a doer (spared only judgement and violence) and a seeker are."""
    refs = (verse, "Psalm 34:18")
    ids = np.array(sorted(parse_reference(r).start_id for r in refs))
    voices = Voices(ids, np.zeros(2, bool), np.zeros(2, bool), promises={kind: ids == parse_reference(verse).start_id})
    pool = [_cand(passage)] + [_cand(f"Psalm {p}:1") for p in range(1, 6)] + [_cand("Psalm 34:18")]
    for stance, held in (("sufferer", True), ("helper", True), ("doer", False), ("seeker", False)):
        top = [c.key for c in stage(pool, stance, voices, voices.condemning(stance), [None] * len(pool))[:5]]
        assert (pool[0].key not in top) is held, stance


@pytest.mark.parametrize("kind, wounds, spares, verse, passage", [
    # the woe oracle said to someone and the hearer called fool, hypocrite or sluggard; not "woe is me" (a lament) nor
    # the woe to one alone with no friend to lift him (a call to companionship)
    ("rebuke",
     ["Consider, you senseless among the people; you fools, when will you be wise?",  # Psalm 94:8
      "Woe to you, scribes and Pharisees, hypocrites! For you devour widows’ houses",  # Matthew 23:14
      "Go to the ant, you sluggard. Consider her ways, and be wise;"],  # Proverbs 6:6
     ["Then I said, “Woe is me! For I am undone",  # Isaiah 6:5
      "but woe to him who is alone when he falls, and doesn’t have another to lift him up.",  # Ecclesiastes 4:10
      "Yahweh is near to those who have a broken heart"],  # Psalm 34:18
     "Psalm 94:8", "Psalm 94:7-9"),
    # the principle's three causes of blame: unbelief, sin, sloth; not the forgiven woman's "your faith has saved you",
    # Matthew 6's "you of little faith" nor a blessing on one who considers the poor
    ("blame",
     ["He said to them, “Because of your unbelief. For most certainly I tell you, if you have faith as a grain of "
      "mustard seed",  # Matthew 17:20
      "Behold, you are made well. Sin no more, so that nothing worse happens to you.",  # John 5:14
      "One who is slack in his work is brother to him who is a master of destruction.",  # Proverbs 18:9
      "Daughter, your faith has made you well. Go in peace, and be cured of your disease."],  # Mark 5:34
     ["He said to the woman, “Your faith has saved you. Go in peace.”",  # Luke 7:50
      "won’t he much more clothe you, you of little faith?",  # Matthew 6:30
      "Blessed is he who considers the poor. Yahweh will deliver him in the day of evil."],  # Psalm 41:1
     "John 5:14", "John 5:14"),
    # sin as the hearer's state without the way back; not the confession psalm nor "if we confess our sins"
    ("conviction",
     ["If we say that we have no sin, we deceive ourselves, and the truth is not in us.",  # 1 John 1:8
      "For the wages of sin is death, but the free gift of God is eternal life in Christ Jesus our Lord.",
      "for all have sinned, and fall short of the glory of God;"],  # Romans 3:23
     ["If we confess our sins, he is faithful and righteous to forgive us the sins",  # 1 John 1:9
      "Have mercy on me, God, according to your loving kindness.",  # Psalm 51:1
      "Behold, I was born in iniquity. My mother conceived me in sin."],  # Psalm 51:5: the confession's own
     "Romans 6:23", "Romans 6:23"),
    # the affliction as God's discipline for a fault, and the rod; not the lament "don't discipline me in your wrath" nor
    # the rod and staff that comfort
    ("chastening",
     ["It is for discipline that you endure. God deals with you as with children,",  # Hebrews 12:7
      "Yah has punished me severely, but he has not given me over to death.",  # Psalm 118:18
      "One who spares the rod hates his son, but one who loves him is careful to discipline him."],  # Proverbs 13:24
     ["Yahweh, don’t rebuke me in your anger, neither discipline me in your wrath.",  # Psalm 6:1
      "Your rod and your staff, they comfort me."],  # Psalm 23:4
     "Hebrews 12:7", "Hebrews 12:7-11"),
])
def test_the_warnings_to_the_guilty_leave_the_top_5_for_a_sufferer_and_a_helper_only(kind, wounds, spares, verse, passage):
    """A verse that rebukes its hearer as wicked, blames suffering on unbelief, sin, sloth or God's chastening, or tells
    the hearer of their own sin is read by its WEB words (and the kinder verses beside it are not). A sufferer and a
    helper are not shown it first; a doer (spared only judgement and violence) and a seeker are."""
    assert promised(wounds + spares)[kind].tolist() == [True] * len(wounds) + [False] * len(spares)
    _held_from_the_hurt_only(kind, verse, passage)


def test_a_reader_losing_sight_or_hearing_is_not_shown_blindness_as_an_image_of_sin():
    """The reader's literal blind or deaf is not answered with the word in another sense: the minds the god of this
    world blinded, blind guides, ears dull of hearing, the evil eye, the darkness of those who do not understand. The
    healing of the blind and Jesus' welcome to them are no image of sin, nor the light promised to those who walked in
    darkness, nor the lament of one led into it; "blindsided" is no loss of sight. A sufferer and a helper who are going
    blind are not shown the image first; a seeker is, and so is a reader whose sentence loses no sense."""
    texts = ["in whom the god of this world has blinded the minds of the unbelieving",  # 2 Corinthians 4:4
             "Leave them alone. They are blind guides of the blind. If the blind guide the blind, both will fall into a pit.",
             "for this people’s heart has grown callous, their ears are dull of hearing",  # Matthew 13:15
             "But if your eye is evil, your whole body will be full of darkness.",  # Matthew 6:23
             "They don’t know, neither do they understand. They walk back and forth in darkness.",  # Psalm 82:5
             "Then the eyes of the blind will be opened, and the ears of the deaf will be unstopped.",  # Isaiah 35:5
             "As he passed by, he saw a man blind from birth.",  # John 9:1
             "But when you make a feast, ask the poor, the maimed, the lame, or the blind;",  # Luke 14:13
             "The people who walked in darkness have seen a great light.",  # Isaiah 9:2
             "He has led me and caused me to walk in darkness, and not in light."]  # Lamentations 3:2
    assert promised(texts)["unseeing"].tolist() == [True] * 5 + [False] * 5
    assert losses("I'm going blind from glaucoma") == losses("my dad is losing his hearing") == ["senses"]
    assert losses("blindsided by the layoff") == [] and contradicted(["senses"]) == {"unseeing"}
    _held_from_one_who_lost("unseeing", ["senses"], "2 Corinthians 4:4", "Isaiah 35:5")


def test_a_reader_whose_home_a_flood_or_storm_destroyed_is_not_shown_the_flood_as_gods_power_or_wrath():
    """The reader's literal flood or storm is not answered with the Flood Yahweh sat enthroned at, the floods that beat
    on the house built on sand, or Yahweh's storm, his wrath. The laments that use the flood as an image of distress,
    the refuge from the storm and the storm stilled are none of these; "flooded with guilt" is no flood."""
    texts = ["Yahweh sat enthroned at the Flood. Yes, Yahweh sits as King forever.",  # Psalm 29:10
             "The rain came down, the floods came, and the winds blew and beat on that house; and it fell",  # Matthew 7:27
             "Behold, Yahweh’s storm, his wrath, has gone out. Yes, a whirling storm!",  # Jeremiah 23:19
             "I have come into deep waters, where the floods overflow me.",  # Psalm 69:2
             "a refuge from the storm, a shade from the heat",  # Isaiah 25:4
             "He makes the storm a calm, so that its waves are still."]  # Psalm 107:29
    assert promised(texts)["deluge"].tolist() == [True] * 3 + [False] * 3
    assert losses("our house flooded and we lost everything") == losses("the tornado took our church") == ["disaster"]
    assert losses("I'm flooded with guilt") == losses("the memories flood back at night") == []
    assert contradicted(["disaster"]) == {"deluge"}
    _held_from_one_who_lost("deluge", ["disaster"], "Psalm 29:10", "Isaiah 25:4")


def _held_from_one_who_lost(kind: str, lost: list[str], verse: str, gentle: str) -> None:
    """A synthetic pool led by `verse` (of this lexicon `kind`) over six gentle verses: a sufferer and a helper whose
    sentence reads the loss `lost` are not shown it in the top 5; a seeker is, and so is a sufferer who lost nothing."""
    refs = (verse, gentle)
    ids = np.array(sorted(parse_reference(r).start_id for r in refs))
    voices = Voices(ids, np.zeros(2, bool), np.zeros(2, bool), promises={kind: ids == parse_reference(verse).start_id})
    pool = [_cand(verse)] + [_cand(f"Psalm {p}:1") for p in range(1, 6)] + [_cand(gentle)]
    for stance, loss, held in (("sufferer", lost, True), ("helper", lost, True), ("seeker", lost, False), ("sufferer", [], False)):
        top = [c.key for c in stage(pool, stance, voices, voices.broken_promises(stance, loss), [None] * len(pool))[:5]]
        assert (pool[0].key not in top) is held, (stance, loss)


def test_a_promise_the_readers_loss_contradicts_leaves_the_top_5_for_a_sufferer_and_a_helper_only():
    """A synthetic pool led by Psalm 127:3 (children as a reward) and Psalm 41:3 (restored from the sickbed) over seven
    gentle verses: a bereaved parent and a helper asking for one see neither in the top 5, a reader whose sentence names
    no loss sees both, a seeker sees the pool as ranked, and nothing is removed."""
    refs = ("Psalm 127:3", "Psalm 41:3", "Psalm 34:18")
    ids = np.array(sorted(parse_reference(r).start_id for r in refs))
    flags = {ref: parse_reference(ref).start_id for ref in refs}
    promises = {"children": ids == flags["Psalm 127:3"], "healing": ids == flags["Psalm 41:3"], "family": ids < 0}
    voices = Voices(ids, np.zeros(3, bool), np.zeros(3, bool), promises=promises)
    pool = [_cand("Psalm 127:3"), _cand("Psalm 41:3"), _cand("Psalm 34:18")] + [_cand(f"Psalm {p}:1") for p in range(1, 8)]
    pins = [None] * len(pool)
    for stance in ("sufferer", "helper"):
        lost = voices.broken_promises(stance, losses("our son was stillborn last week"))
        top = [c.key for c in stage(pool, stance, voices, lost, pins)[:5]]
        assert pool[0].key not in top and pool[1].key not in top and pool[2].key in top
        kept = voices.broken_promises(stance, losses("I'm anxious about my exams"))
        assert [c.key for c in stage(pool, stance, voices, kept, pins)[:2]] == [pool[0].key, pool[1].key]
    assert voices.broken_promises("seeker", ["child"]) == [] and voices.broken_promises("doer", ["death"]) == []
    held = stage(pool, "sufferer", voices, voices.broken_promises("sufferer", ["child"]), pins)
    assert sorted(c.key for c in held) == sorted(c.key for c in pool)


def test_a_sufferer_is_shown_its_first_orders_only_and_the_others_move_down_behind_the_rest():
    """harm.stage's cap: Matthew 18:15 ("go, show him his fault"), Matthew 5:24 ("first be reconciled") and 1 John 1:9
    ("if we confess our sins") tagged orders, Psalm 34:18 and 23:4 comfort, Proverbs 19:9 harsh. With a cap of 2 a
    sufferer and a helper keep the first two orders in the top 5, the third waits just below it (before the held
    back); a doer and a seeker keep the ranked order of the orders; no cap, no change; a reader at risk is shown no
    order first; nothing is removed."""
    refs = ("Matthew 18:15", "Matthew 5:24", "Psalm 34:18", "1 John 1:9", "Psalm 23:4", "Proverbs 19:9")
    pool = [_cand(r) for r in refs]
    ids = np.array(sorted(c.start for c in pool))
    is_ = lambda names: np.isin(ids, [parse_reference(r).start_id for r in names])
    voices = Voices(ids, is_(["Proverbs 19:9"]), np.zeros(len(ids), bool), is_(["Matthew 18:15", "Matthew 5:24", "1 John 1:9"]))
    pins = [None] * len(pool)
    for stance in ("sufferer", "helper"):
        got = [c.key for c in stage(pool, stance, voices, [], pins, cap=2)]
        assert got == [pool[i].key for i in (0, 1, 2, 4, 3, 5)]
        assert [c.key for c in stage(pool, stance, voices, [], pins)] == [pool[i].key for i in (0, 1, 2, 3, 4, 5)]
    assert [c.key for c in stage(pool, "doer", voices, [], pins, cap=2)] == [c.key for c in pool]
    assert stage(pool, "seeker", voices, [], pins, cap=0) == pool
    assert [c.key for c in stage(pool, "sufferer", voices, [], pins, cap=0)][:2] == [pool[2].key, pool[4].key]
    # a reader at risk is shown no order first, whatever the cap
    assert [c.key for c in stage(pool, "sufferer", voices, [], pins, cap=2, at_risk=True)][:2] == [pool[2].key, pool[4].key]
    assert not Voices(ids, ids < 0, ids < 0).orders(pool[0].start, pool[0].end, None)  # no directive array: no order
    longer = pool + [_cand(f"Psalm {p}:1") for p in range(1, 4)]  # the waiting order sits just below the top 5
    got = [c.key for c in stage(longer, "sufferer", voices, [], [None] * len(longer), cap=2)]
    assert got == [longer[i].key for i in (0, 1, 2, 4, 6, 3, 7, 8, 5)]


def test_a_reader_at_risk_is_shown_the_shorter_passages_before_any_chapter():
    """To a reader at risk a chapter is read by one verse picked by nearness to the sentence's words; the shorter
    passages go first, in order, and the chapters follow, never removed. A reader not at risk and a seeker see the pool
    as ranked."""
    refs = ("Psalm 34:18", "Psalm 46:1")
    ids = np.array(sorted(parse_reference(r).start_id for r in refs))
    voices = Voices(ids, np.zeros(2, bool), np.zeros(2, bool))
    pool = [_cand("Psalm 139", "chapter"), _cand("Psalm 34:18"), _cand("Job 5", "chapter"), _cand("Psalm 46:1")]
    pins = [parse_reference("Psalm 139:24").start_id, None, parse_reference("Job 5:21").start_id, None]
    keys = [c.key for c in pool]
    assert [c.key for c in stage(pool, "sufferer", voices, [], pins, at_risk=True)] == [keys[1], keys[3], keys[0], keys[2]]
    assert [c.key for c in stage(pool, "sufferer", voices, [], pins)] == keys
    assert [c.key for c in stage(pool, "seeker", voices, [], pins, at_risk=True)] == keys


def test_a_long_passage_is_read_by_its_pinned_verse():
    chapter = _cand("Proverbs 19", "chapter")
    ids = np.arange(chapter.start, chapter.end + 1)
    voices = Voices(ids, ids == parse_reference("Proverbs 19:9").start_id, np.zeros(len(ids), bool))
    assert stage([chapter, _cand("Psalm 23:1")], "sufferer", voices, [], [parse_reference("Proverbs 19:9").start_id, None])[0] \
        .key == _cand("Psalm 23:1").key
    assert stage([chapter, _cand("Psalm 23:1")], "sufferer", voices, [], [parse_reference("Proverbs 19:17").start_id, None])[0] \
        .key == chapter.key


def test_a_long_passage_shows_a_sufferer_the_nearest_kind_verse_within_the_margin_and_is_judged_by_the_nearest():
    """Psalm 34: verse 14 ("seek peace and pursue it") an order, verse 21 ("evil will kill the wicked") harsh, 18 and 22
    comfort. A sufferer or a helper is shown first the nearest verse that neither wounds nor orders when it is within the
    margin of the nearest, else the nearest; a doer is only spared the grave; a seeker always gets the nearest. What the
    stage records as the candidate's pin is that choice; what it holds back it judges by the pins it is given."""
    ids = np.arange(19034001, 19034023)
    v = {n: ids == 19034000 + n for n in (14, 18, 21, 22)}
    voices = Voices(ids, v[21], v[21], v[14])
    sims = np.full(len(ids), 0.1)
    sims[[13, 17, 20]] = 0.40, 0.37, 0.45  # verse 21 nearest, 14 next, 18 three hundredths below 14
    pick = lambda stance, margin: int(ids[voices.pin_for(stance, margin)(ids, sims)])
    assert pick("sufferer", 0.1) == pick("helper", 0.1) == 19034018
    assert pick("sufferer", 0.05) == 19034021  # 18 is 0.08 below the nearest: the nearest stays
    assert pick("doer", 0.1) == 19034014 and pick("seeker", 0.1) == 19034021
    assert int(ids[Voices(ids, ids < 0, ids < 0).pin_for("sufferer", 0.1)(ids, sims)]) == 19034021  # nothing to spare
    chapter, verse = _cand("Psalm 34", "chapter"), _cand("Psalm 23:1")
    out = stage([chapter, verse], "sufferer", voices, [], [19034021, None], show=[19034018, None])
    assert [c.key for c in out] == [verse.key, chapter.key] and chapter.pin == 19034018
    assert stage([chapter, verse], "sufferer", voices, [], [19034018, None])[0].key == chapter.key


def test_a_candidate_reached_only_by_the_surface_words_must_fit_the_routed_need():
    surface = Candidate(19001001, 19001001, "verse", hits=[("original", "dense", "verse", 1), ("original", "fulltext", "verse", 4)])
    routed = Candidate(19001002, 19001002, "verse", hits=[("original", "dense", "verse", 2), ("pastoral:grief", "dense", "verse", 1)])
    need = np.array([[1.0, 0.0]], np.float32)
    far, near = np.array([0.0, 1.0], np.float32), np.array([0.9, 0.436], np.float32)
    assert off_need(surface, far, need, 0.3) and not off_need(surface, near, need, 0.3)
    assert not off_need(routed, far, need, 0.3)  # a rewrite reached it: the need vouches for it
    assert not off_need(surface, far, np.zeros((0, 2), np.float32), 0.3)  # no need routed: nothing to fit


def test_a_topic_the_sentence_names_is_its_surface_and_no_need_to_fit():
    """"dont want to wake up tomorrow" routes to the despair need and to the topics "wake up" and "waking up": those
    topics are the reader's own word (their hits are surface, their rewrites no need a surface candidate can fit), the
    need is not; a topic the sentence does not name ("sleep") stays a theme."""
    from citebible_pipeline.query.display import terms
    from citebible_pipeline.query.harm import named_topics, surface
    from citebible_pipeline.query.models import Rewrite

    stems = terms(["dont want to wake up tomorrow"])
    rewrites = [(Rewrite(text="t", source=src, weight=1.0, theme=name), i) for i, (src, name) in enumerate(
        [("pastoral:despair", "depression and hopelessness"), ("topic:wake up", "wake up"),
         ("topic:waking up", "waking up"), ("topic:sleep", "sleep")])]
    assert named_topics(stems, [(rw.source, rw.theme) for rw, _ in rewrites]) == {"topic:wake up", "topic:waking up"}
    vectors = [np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32), np.array([0.0, 1.0], np.float32),
               np.array([0.6, 0.8], np.float32)]
    named, fit = surface(stems, rewrites, vectors)
    assert fit.tolist() == [[1.0, 0.0], [0.6000000238418579, 0.800000011920929]]
    psalm = Candidate(19057008, 19057008, "verse", hits=[("original", "dense", "verse", 1), ("topic:wake up", "dense", "verse", 1)])
    assert off_need(psalm, np.array([0.0, 1.0], np.float32), fit, 0.9, named)  # near only the named topic's rewrite
    assert not off_need(psalm, np.array([0.0, 1.0], np.float32), fit, 0.9)  # a topic not named is a theme it reached
    assert surface(stems, rewrites[:1], vectors[:1])[0] == set()


def test_the_needs_nearest_the_sentence_are_named_whether_or_not_routing_chose_them():
    """route.nearest_needs: pastoral needs only, by their nearest cue to any routing row, a left-out one skipped."""
    from citebible_pipeline.query.route import ThemeIndex, nearest_needs, route

    keys = ["topic:vows", "pastoral:abuse", "pastoral:marriage", "pastoral:grief"]
    one = (np.array([1]), np.array([1]), np.ones(1))
    cues = np.array([[1, 0, 0], [0.3, 0.954, 0], [0.55, 0, 0.835], [0, 0, 1]], np.float32)
    idx = ThemeIndex(keys=keys, kinds=["topic", "pastoral", "pastoral", "pastoral"], names=keys, rewrites=["r"] * 4,
                     split_keys=keys, cue_vectors=cues, cue_starts=np.arange(4), rewrite_vectors=np.eye(4, 3, dtype=np.float32),
                     passages=[one] * 4)
    rows = np.array([[0.98, 0.2, 0.0]], np.float32)  # "people from church say i broke my vows": the topic name is nearest
    assert [r.theme for r in route(idx, rows, pastoral=True)] == [0]  # routing chose no need
    assert nearest_needs(idx, rows, 2) == [2, 1] and nearest_needs(idx, rows, 0) == []
    assert nearest_needs(idx, rows, 2, frozenset({"pastoral:marriage"})) == [1, 3]


def test_a_judged_sentence_near_the_readers_lends_it_its_wounds_and_a_far_one_does_not():
    judged = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], np.float32)  # three judged reader sentences
    near = np.array([0.95, 0.312], np.float32)  # cosine 0.95, 0.31 and 0.82 to them
    assert near_situations(judged, near, 3, 0.45) == [0, 2] and near_situations(judged, near, 1, 0.45) == [0]
    assert near_situations(judged, near, 3, 0.99) == [] and near_situations(None, near, 3, 0.45) == []
    wound = (np.array([19088001]), np.array([19088018]))  # what wounded the reader of judged sentence 0
    cands = [Candidate(19088001, 19088018, "range"), Candidate(19034018, 19034018, "verse")]
    voices = Voices(np.array([19034018, 19088001]), np.zeros(2, bool), np.zeros(2, bool))
    shown = stage(cands, "sufferer", voices, [wound for i in near_situations(judged, near, 3, 0.45) if i == 0], [None, None])
    assert [c.start for c in shown] == [19034018, 19088001]  # moved below, never removed
    far = np.array([0.0, 1.0], np.float32)
    assert stage(cands, "sufferer", voices, [wound for i in near_situations(judged, far, 3, 0.45) if i == 0],
                 [None, None]) == cands


def test_the_judged_sentences_resolve_and_a_bad_row_names_its_line():
    from citebible_pipeline.themes.situations import load_situations
    from citebible_pipeline.themes.vocabulary import load_pastoral

    situations = load_situations(needs={t.id for t in load_pastoral()})
    assert len(situations) >= 300 and all(s.avoid and s.sentence for s in situations)
    assert len({s.sentence for s in situations}) == len(situations)  # one situation per sentence
    head = "round,need,sentence,ref,reason,review,review_why\n"
    with pytest.raises(ValueError, match="line 2.*Hezekiah 4:1"):
        load_situations(head + '1,grief,my son died,Hezekiah 4:1,"no blame",keep,\n')
    with pytest.raises(ValueError, match="line 2.*unknown need"):
        load_situations(head + '1,sorrow,my son died,John 11:35,"no blame",keep,\n', needs={"grief"})


def test_harm_at_5_counts_a_long_passage_by_its_pin_and_a_short_one_by_overlap():
    p199 = parse_reference("Proverbs 19:9")
    wound = [(p199.start_id, p199.end_id)]
    chapter = parse_reference("Proverbs 19")
    assert wounds(Result(p199.start_id - 2, p199.start_id + 1), wound[0])
    assert not wounds(Result(chapter.start_id, chapter.end_id, pin=p199.start_id + 5), wound[0])
    assert wounds(Result(chapter.start_id, chapter.end_id, pin=p199.start_id), wound[0])
    assert LONG_PASSAGE == 20
    ps1 = parse_reference("Psalm 1:1").start_id
    answers = [Result(ps1 + i, ps1 + i) for i in range(5)] + [Result(p199.start_id, p199.start_id)]
    assert harm_at(answers, wound, 5) == 0.0 and harm_at(answers, wound, 6) == 1.0


def test_a_written_query_names_its_wounds_with_reasons_and_never_a_passage_it_serves():
    ok = CuratedQuery(id="x", kind="pastoral", query="q", rationale="r", relevant={"Psalm 34:18": 3}, stance="sufferer",
                      wounds={"Proverbs 19:9": "a law against the crime shown to its victim"})
    assert ok.wound_spans()[0][:2] == (parse_reference("Proverbs 19:9").start_id,) * 2
    with pytest.raises(ValueError, match="both as serving and as wounding"):
        CuratedQuery(id="x", kind="pastoral", query="q", rationale="r", relevant={"Psalm 34": 3},
                     wounds={"Psalm 34:18": "why"})
    with pytest.raises(ValueError, match="stance"):
        CuratedQuery(id="x", kind="pastoral", query="q", rationale="r", relevant={"Psalm 34:18": 3}, stance="victim")
    with pytest.raises(ValueError, match="needs a reason"):
        CuratedQuery(id="x", kind="pastoral", query="q", rationale="r", relevant={"Psalm 34:18": 3}, wounds={"Job 1:1": " "})


def test_every_avoid_list_resolves_and_no_need_serves_what_it_avoids():
    """pastoral.yaml: every avoid reference resolves with a reason (the loader refuses one that does not), and the
    vocabulary drops from a need's passages any it lists as wounding (the avoid list wins)."""
    from citebible_pipeline.gold.access import TrainingPassage
    from citebible_pipeline.themes.vocabulary import PastoralTheme, build_vocabulary, load_pastoral

    needs = load_pastoral()
    assert sum(len(t.avoid) for t in needs) >= 100 and {"abuse", "childlessness", "prison", "poverty"} <= {t.id for t in needs}
    with pytest.raises(ValueError):
        PastoralTheme(id="x", name="n", rewrite="r", cues=("c",), topics=("t",), avoid={"Hezekiah 9:9": "why"})
    fertile = parse_reference("Psalm 127:3-5")
    voted = [TrainingPassage("children", fertile.start_id, fertile.end_id, 10, None)] + [
        TrainingPassage("children", 19139013 + i, 19139013 + i, 5, None) for i in range(5)]
    need = PastoralTheme(id="loss", name="n", rewrite="r", cues=("c",), topics=("children",),
                         avoid={"Psalm 127:3": "a blessing the reader's life has contradicted"})
    themes, report = build_vocabulary(voted, [need])
    assert (fertile.start_id, fertile.end_id) not in themes[0].passages and len(themes[0].passages) == 5
    assert report["avoided_passages"] == {"loss": 1} and themes[0].avoid[0][2].startswith("a blessing")


@pytest.mark.slow
def test_on_the_built_tables_no_need_serves_a_passage_it_avoids(full_db):
    from citebible_pipeline.db import connect

    with connect(full_db["url"]) as conn:
        clash = conn.execute("SELECT count(*) FROM theme_avoid a JOIN theme_passages p ON p.theme_id = a.theme_id"
                             " AND p.start_id <= a.end_id AND a.start_id <= p.end_id").fetchone()[0]
        listed = conn.execute("SELECT count(*) FROM theme_avoid").fetchone()[0]
        voices = conn.execute("SELECT count(*), count(*) FILTER (WHERE hand IS NOT NULL) FROM passage_voice").fetchone()
        named = dict(conn.execute("SELECT voice, count(*) FROM passage_voice GROUP BY voice").fetchall())
        # an order is the function model's reading: where it names a gentle function, that function is the order
        stray = conn.execute("SELECT count(*) FROM passage_voice WHERE orders AND voice <> ALL(%s)",
                             (list(DIRECTIVE) + list(HARSH),)).fetchone()[0]
    assert clash == 0 and listed >= 100
    assert voices[0] == 31098 and voices[1] == len(load_labels()) + len(load_labels(name=HARSH_DRAWN))
    assert stray == 0 and named.get("violence", 0) > 0  # the harsh model names violence even from the test's sample
