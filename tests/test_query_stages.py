"""The query module's pure stages, without a database: analyze, fuse, merge, boost, floor, display."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from citebible_pipeline.bible.canon import by_order, verse_id
from citebible_pipeline.query.analyze import analyze, pastoral_score, validate
from citebible_pipeline.query.boost import final_scores
from citebible_pipeline.query.display import highlights, pinned_index, terms
from citebible_pipeline.query.floor import FEATURES
from citebible_pipeline.themes.calibrate import calibrate
from citebible_pipeline.query.fuse import Candidate, RankedList, admit, fuse
from citebible_pipeline.query.merge import collapse, merge, merge_ranges
from citebible_pipeline.query.models import QueryValidationError
from citebible_pipeline.query.retrieve import DenseQuery, exact_rows, level, prefill_exact
from citebible_pipeline.query.route import (
    Routed, SplitKeys, ThemeIndex, clause_needs, excluded, prior_scores, route, specificity, stated,
)
from citebible_pipeline.query.slots import fill, serves


def verses_in(cid: int) -> int:
    return by_order(cid // 1_000_000).verses_in(cid // 1000 % 1000)


@pytest.mark.parametrize("text,ref", [
    ("John 3:16", "John 3:16"), ("Rom 8:28-30", "Romans 8:28-30"), ("Ps 23", "Psalm 23"),
    ("1 Cor 13", "1 Corinthians 13"), ("Jn 3:16-18", "John 3:16-18"),
])
def test_explicit_references_are_lookups(text, ref):
    a = analyze(validate(text))
    assert a.query_type == "reference" and a.references == [ref] and a.reference_error is None


def test_an_impossible_reference_says_why_and_is_not_searched():
    a = analyze(validate("John 99:1"))
    assert a.query_type == "reference" and "John has 21 chapters" in a.reference_error
    assert analyze(validate("who won the world cup in 2018")).query_type == "search"


def test_references_inside_a_sentence_are_found():
    assert analyze(validate("what does Romans 8:28 mean for me")).references == ["Romans 8:28"]


@pytest.mark.parametrize("text", [
    "My mother is dying and I'm angry at God", "I'm terrified about tomorrow", "we lost our baby",
    "I feel so alone since the divorce",
    # crisis and trauma in the wording of screening instruments' items (PHQ-9 item 9, C-SSRS, PCL-5)
    "Sometimes I think I'd be better off dead", "I keep having flashbacks of that night", "I have been hurting myself",
    # the same items said of someone else (a parent, a friend): each item in every person
    "My son says he wants to kill himself", "Our daughter tried to take her own life", "My friend wishes she were dead",
    # the C-SSRS's "not alive anymore" and the Beck Scale's lowest wish to live read as distress, as they read as crisis
    "I wish I was not alive anymore", "My brother says he doesn't want to live anymore",
    # the Interpersonal Needs Questionnaire's burdensomeness and the AFSP's warning signs, read as crisis too
    "The people in my life would be better off if I were gone", "He told me he has no reason to live",
])
def test_pastoral_intent(text):
    assert analyze(validate(text)).pastoral, pastoral_score(text)


@pytest.mark.parametrize("text", ["justification by faith", "the armor of God", "Paul's teaching on grace",
                                  "recipe for bread", "the Sadducees and the resurrection",
                                  "Judas killed himself", "Saul took his own life in battle",
                                  # rule S': a word of another family than a distress word's ("Thirty-first step")
                                  "I want to learn about the Sadducees", "Where is Illyricum? I'm reading Romans 15",
                                  "I'm painting a mural of the crucifixion for my church",
                                  "I'm pleased with how my Bible study went"])
def test_study_and_everyday_queries_are_not_pastoral(text):
    assert not analyze(validate(text)).pastoral, pastoral_score(text)


@pytest.mark.parametrize("other,family", [("Sadducees", "sadness"), ("saddle", "sadly"), ("painting", "painful"),
                                          ("crystal", "cry"), ("sickle", "sickness"), ("illustrate", "illness"),
                                          ("Illyricum", "ill"), ("hospitality", "hospital"), ("Chemosh", "chemo"),
                                          ("bittern", "bitterness"), ("deadline", "deadly"), ("dreadlocks", "dreadful")])
def test_a_distress_prefix_reads_its_own_word_family_not_a_word_of_another(other, family):
    # rule S' (README "Thirty-first step"): the words a prefix met in the WEB text and the topic names, not of its family
    assert pastoral_score(other) == 0.0 and pastoral_score(family) == pytest.approx(0.3)


def test_no_other_family_prefix_hides_a_distress_or_plea_word():
    from citebible_pipeline.query.analyze import DISTRESS, OTHER_FAMILIES, OTHER_WORDS, PLEA

    assert not [w for w in (*DISTRESS, *PLEA) if w.isalpha() and (w.startswith(OTHER_FAMILIES) or w in OTHER_WORDS)]
    assert pastoral_score("I'm pleased") == pytest.approx(0.4)  # the first person alone: "pleased" is no plea


@pytest.mark.parametrize("text,crisis", [
    ("I keep having thoughts of killing myself", True), ("I think about suicide every day", True),
    ("My son tried to kill himself last year", True), ("Sometimes I think I'd be better off dead", True),
    ("I have been hurting myself", True), ("My family would be better off if I were dead", True),
    ("Judas killed himself", False), ("Saul took his own life in battle", False), ("what is the suicide rate in Japan", False),
    ("My father died last week", False), ("I'm terrified I won't wake up after surgery", False),
    # the Beck Scale's wish to live at its lowest, of oneself or one's own; the C-SSRS's "not alive anymore"
    ("I don't want to live anymore", True), ("My brother told me he doesn't want to live like this", True),
    ("Some days I do not want to live.", True), ("I have no wish to live", True), ("I wish I was not alive anymore", True),
    ("I don't want to live in fear", False), ("I want to live for God", False),
    ("Jonah did not want to live anymore", False),
    # burdensomeness (the Interpersonal Needs Questionnaire) and the AFSP's warning signs: of oneself, or in every
    # person where another's version is not ordinary talk
    ("The people in my life would be better off if I were gone", True), ("I think my kids would be better off without me", True),
    ("I feel like my death would be a relief to my family", True), ("My dad says he has no reason to live", True),
    ("My sister is better off without him", False), ("I'm better off without that job", False),
    ("Elijah said he had no reason to live", False),
    # the C-SSRS's preparatory behaviour ("collected pills... gave away valuables") and the everyday "end it all"
    ("i have pills saved up and i'm so tired", True), ("I've been stockpiling my sleeping pills", True),
    ("My son gave away his things last week", True), ("Some days I just want to end it all", True),
    ("My friend says she keeps thinking about ending it", True),
    ("I take my pills every morning", False), ("What does the Bible say about birth control pills?", False),
    # the C-SSRS's wish "to go to sleep and not wake up", its methods and self-injury, the ASQ's attempt, the AFSP's
    # warning signs in everyday words; a helper asking about someone else with no "I"
    ("i just want to go to sleep and never wake up", True), ("my son keeps talking about hanging himself", True),
    ("some days I just dont want to wake up", True), ("I don't want to wake up the baby", False),
    ("my coworker is cutting, any advice for supporting her", True), ("I don't want to be here anymore", True),
    ("how to support a friend after a suicide attempt", True), ("she's cutting carbs this month", False),
    ("this homework is killing me", False), ("how to support a friend after a divorce", False),
])
def test_crisis_language_is_a_reader_speaking_of_self_harm_not_a_study_of_it(text, crisis):
    assert analyze(validate(text)).crisis is crisis


@pytest.mark.parametrize("text, confesses", [
    # the reader did the wrong: the Decalogue's lying, stealing, adultery, killing, and harm done to a person
    ("I cheated on my husband and I don't know how to tell him", True), ("I stole money from my employer", True),
    ("I've been lying to my therapist for months", True), ("I had an affair and it ended my marriage", True),
    ("I hit my son when I was angry", True), ("I was unfaithful to my fiance", True),
    ("I yelled at my kids again today", True), ("I broke my promise to my dying father", True),
    # the wrong was done to the reader, denied, or is no wrong done to anyone
    ("My husband cheated on me", False), ("I was cheated out of my inheritance", False),
    ("My parents lied to me my whole life", False), ("I never lied to her", False), ("I hurt my back at work", False),
    ("I hurt so much since she left", False), ("I'm tempted to cheat on my taxes", False),
    ("Why did Peter lie about knowing Jesus?", False), ("I killed myself trying to finish on time", False),
    ("I killed it at work today", False), ("I lied down on the couch and cried", False),
    ("I slept with the lights on because I'm scared", False), ("I slept with another man", True),
    # the abuse screens' blows as the reader's own act
    ("I shoved my wife into the wall in front of the kids", True), ("I pushed the door open and cried", False),
])
def test_a_confession_is_the_reader_doing_the_wrong_not_suffering_it(text, confesses):
    assert (analyze(validate(text)).stance == "doer") is confesses


@pytest.mark.parametrize("text, complains", [
    # anger whose object is God: a complaint to God (rule L)
    ("My father is dying and I'm angry at God", True), ("I have so much anger toward God about my divorce", True),
    ("I'm furious with God", True), ("I hate God", True), ("I blame God for what happened", True),
    ("I feel bitter toward God", True), ("I'm so angry and bitter at the Lord", True), ("I'm mad at Jesus", True),
    ("Is it wrong to be angry at God?", True), ("I'm upset with my God", True),
    # God is angry, God's own things, or God is not the anger's object
    ("Why is God angry with me?", False), ("God's anger at sin", False), ("I'm angry with my husband and God", False),
    ("I'm angry with God's people", False), ("What does the Bible say about anger?", False),
    ("I'm angry at the godless people at work", False), ("I'm angry at my boss and I pray to God", False),
])
def test_anger_at_god_is_a_complaint_to_god_not_anger_at_people(text, complains):
    assert analyze(validate(text)).complains is complains


def test_a_reader_angry_at_god_is_routed_to_lament_not_to_the_themes_named_for_anger():
    """perspective (rule L): the themes named for anger leave the routing, the lament need's nearest cue joins it and
    lament holds a top slot; a stance needs its need in the index and acts only where its need is not left out (L');
    a confession is read before a complaint."""
    from citebible_pipeline.query.analyze import one_more_distress
    from citebible_pipeline.query.perspective import LAMENT, WRONGDOER, as_told, slot_needs, stance

    keys = ["topic:be angry and sin not", "pastoral:anger", LAMENT, "topic:mothers"]
    names = ["be angry and sin not", "anger and the desire for revenge", "lament and honest complaint to God", "mothers"]
    one = (np.array([1]), np.array([1]), np.ones(1))
    cues = np.array([[1, 0, 0], [0.95, 0.312, 0], [0, 0, 1], [0, 0.6, 0.8], [0, 1, 0]], np.float32)
    idx = ThemeIndex(keys=keys, kinds=["topic", "pastoral", "pastoral", "topic"], names=names, rewrites=["r"] * 4,
                     split_keys=keys, cue_vectors=cues, cue_starts=np.array([0, 1, 2, 4]),
                     rewrite_vectors=np.eye(4, 3, dtype=np.float32), passages=[one] * 4, specificity=[np.ones(1)] * 4)
    sentence = np.array([[0.9, 0.436, 0.0]], np.float32)  # "I'm angry at God": nearest the themes named for anger
    assert route(idx, sentence, pastoral=True)[0].theme in (0, 1)
    a = analyze(validate("My mother is dying and I'm angry at God"))
    assert stance(a) == LAMENT
    # rule L': a stance whose need is left out (training: the query's own theme) does not act; another key left out, it does
    assert stance(a, themes=idx, exclude=frozenset({LAMENT})) is None
    assert stance(a, themes=idx, exclude=frozenset({"topic:mothers"})) == LAMENT
    rows, exclude = as_told(idx, stance(a), sentence)
    assert rows.shape == (2, 3) and np.allclose(rows[1], cues[3])  # the lament cue nearest the sentence
    assert exclude == {"topic:be angry and sin not", "pastoral:anger"}
    routed = route(idx, rows, pastoral=True, exclude=exclude)
    assert {r.theme for r in routed} <= {2, 3} and 2 in {r.theme for r in routed}
    assert slot_needs(idx, [3], routed, LAMENT) == [3, 2] and slot_needs(idx, [3], routed, None) == [3]
    both = analyze(validate("I lied to my wife and I'm angry at God"))
    assert stance(both) == WRONGDOER
    blame = analyze(validate("I blame God for what happened"))
    assert blame.complains and not blame.pastoral and one_more_distress(blame).pastoral  # the complaint states its distress


def test_crisis_language_routes_to_the_despair_need_after_a_disclosure_of_abuse_and_before_a_confession():
    """perspective.stance: safe messaging asks hope and help for a life at risk, so crisis language is a stance whose
    need is the despair need; it leaves no theme out of routing."""
    from citebible_pipeline.query.perspective import ABUSE, DESPAIR, left_out, stance

    assert stance(analyze(validate("i have pills saved up and i'm so tired of fighting"))) == DESPAIR
    assert stance(analyze(validate("I stole from my boss and now I want to kill myself"))) == DESPAIR
    assert stance(analyze(validate("My husband beats me and I want to end my life"))) == ABUSE
    assert stance(analyze(validate("I'm so tired of fighting with my sister"))) is None
    assert left_out(SimpleNamespace(names=["despair", "hope"], keys=[DESPAIR, "topic:hope"]), DESPAIR) == set()


def test_a_reader_who_did_the_wrong_is_routed_as_its_doer_with_a_slot_for_guilt():
    """perspective.as_told for a confession: the needs for the wronged leave the routing and the guilt need's nearest cue joins it as a
    row; slot_needs gives guilt a top slot beside the situation. A need left out (training) is not added back."""
    from citebible_pipeline.query.analyze import one_more_distress
    from citebible_pipeline.query.perspective import WRONGDOER, as_told, slot_needs

    keys = ["pastoral:betrayal", "pastoral:forgiving", WRONGDOER, "topic:adultery"]
    one = (np.array([1]), np.array([1]), np.ones(1))
    cues = np.array([[1, 0, 0], [0.9, 0.436, 0], [0, 0, 1], [0, 0.6, 0.8], [0.8, 0.6, 0]], np.float32)
    idx = ThemeIndex(keys=keys, kinds=["pastoral"] * 3 + ["topic"], names=keys, rewrites=["r"] * 4, split_keys=keys,
                     cue_vectors=cues, cue_starts=np.array([0, 1, 2, 4]), rewrite_vectors=np.eye(4, 3, dtype=np.float32),
                     passages=[one] * 4, specificity=[np.ones(1)] * 4)
    sentence = np.array([[0.98, 0.2, 0.0]], np.float32)  # "I cheated on my wife": nearest "my partner cheated on me"
    assert route(idx, sentence, pastoral=True)[0].theme == 0
    rows, exclude = as_told(idx, WRONGDOER, sentence)
    assert rows.shape == (2, 3) and np.allclose(rows[1], cues[3])  # guilt's cue nearest the sentence
    assert exclude == {"pastoral:betrayal", "pastoral:forgiving"}
    routed = route(idx, rows, pastoral=True, exclude=exclude)
    assert {r.theme for r in routed} == {2, 3}
    assert slot_needs(idx, [], routed, WRONGDOER) == [3, 2] and slot_needs(idx, [], routed, None) == []
    assert as_told(idx, WRONGDOER, sentence, frozenset({WRONGDOER}))[0] is sentence
    a = analyze(validate("I stole from my grandmother"))
    assert a.stance == "doer" and not a.pastoral and one_more_distress(a).pastoral  # a confession states its guilt by its act


def test_half_its_verses_make_a_candidate_serve_a_need():
    """slots.serves (rule V): a need's passages must hold half the candidate's verses, so a chapter holding one
    listed verse does not count as serving the need; overlapping listed passages count their verses once."""
    psalm_23 = verse_id(19, 23, 1)
    chapter = Candidate(psalm_23, psalm_23 + 5, "chapter", 1.0)  # Psalm 23: six verses
    one_verse = (np.array([psalm_23 + 2]), np.array([psalm_23 + 2]))
    assert not serves(chapter, one_verse)
    overlapping = (np.array([psalm_23, psalm_23 + 1]), np.array([psalm_23 + 2, psalm_23 + 2]))  # 1-3 and 2-3
    assert serves(chapter, overlapping)  # verses 1-3: half of six
    assert not serves(chapter, (np.array([psalm_23, psalm_23 + 1]), np.array([psalm_23 + 1, psalm_23 + 1])))
    assert serves(Candidate(psalm_23 + 2, psalm_23 + 2, "verse", 1.0), one_verse)
    assert not serves(chapter, (np.array([psalm_23 + 40]), np.array([psalm_23 + 40])))
    cands = [chapter] + [Candidate(psalm_23 + 1000 * i, psalm_23 + 1000 * i, "verse", 0.5) for i in range(1, 9)]
    need = (np.array([psalm_23 + 2, psalm_23 + 7000]), np.array([psalm_23 + 2, psalm_23 + 7000]))
    other = (np.array([psalm_23 + 1000]), np.array([psalm_23 + 1000]))
    assert fill(cands, [other, need], 5, 20)[4].start == psalm_23 + 7000  # one verse of the chapter does not serve it


def test_testament_hint():
    assert analyze(validate("covenant in the Old Testament")).testament == "OT"
    assert analyze(validate("prayer in the Gospels")).testament == "NT"


@pytest.mark.parametrize("bad,why", [("", "empty"), ("   \n\t ", "empty"), ("a\x00b", "control"), ("x" * 600, "limit"),
                                     ("x" * 10_000, "limit"), ("bell\x07", "control")])
def test_validation_errors_say_why(bad, why):
    with pytest.raises(QueryValidationError, match=why):
        validate(bad)


def test_validation_normalizes_whitespace():
    assert validate("  grief \n and   loss ") == "grief and loss"


def test_weighted_rrf_keeps_provenance_and_weights():
    a = RankedList("original", "dense", "verse", 1.0, [(1, 1, "verse", 0.9), (2, 2, "verse", 0.8)])
    b = RankedList("theme", "dense", "verse", 0.5, [(2, 2, "verse", 0.7), (3, 3, "verse", 0.6)])
    out = fuse([a, b], prior={(3, 3): 0.4})
    scores = {c.start: c.score for c in out}
    assert scores[1] == pytest.approx(1 / 61) and scores[2] == pytest.approx(1 / 62 + 0.5 / 61)
    assert [c.start for c in out] == [2, 1, 3]
    two = next(c for c in out if c.start == 2)
    assert two.hits == [("original", "dense", "verse", 2), ("theme", "dense", "verse", 1)] and two.dense == 0.8
    assert next(c for c in out if c.start == 3).prior == 0.4


def test_each_retrieval_lists_top_reaches_the_pool_whatever_the_prior_says():
    prior = RankedList("prior", "prior", "passage", 2.0, [(i, i, "verse", 1.0) for i in range(100, 160)])
    dense = RankedList("original", "dense", "verse", 1.0, [(i, i, "verse", 0.9) for i in range(1, 31)])
    fused = fuse([prior, dense])
    assert all(c.start >= 100 for c in fused[:50])  # the prior alone fills a 50-slot pool
    pool = admit(fused, 50, 10)
    assert [c.start for c in pool[:50]] == [c.start for c in fused[:50]]  # fused order kept
    assert [c.start for c in pool[50:]] == list(range(1, 11))  # the query's own top 10 join it
    assert admit(fused, 50, 0) == fused[:50]


PS23 = 19023000  # Psalm 23 has 6 verses


def test_adjacent_verses_become_one_range_scored_by_the_best():
    cands = [Candidate(PS23 + 1, PS23 + 1, "verse", 0.5), Candidate(PS23 + 2, PS23 + 3, "range", 0.9),
             Candidate(PS23 + 5, PS23 + 5, "verse", 0.3)]
    out = merge_ranges(cands)
    assert [(c.start % 1000, c.end % 1000, c.level, c.score) for c in out] == [(1, 3, "range", 0.9), (5, 5, "verse", 0.3)]


def test_a_verse_never_comes_back_with_its_chapter():
    chap = Candidate(PS23 + 1, PS23 + 6, "chapter", 0.9)
    verse = Candidate(PS23 + 4, PS23 + 4, "verse", 0.5)
    other = Candidate(19024001, 19024001, "verse", 0.4)
    out = merge([chap, verse, other], verses_in)
    assert [(c.start, c.level) for c in out] == [(PS23 + 1, "chapter"), (19024001, "verse")]
    # the verse outscores its chapter: the verse stays, the chapter goes
    out = merge([Candidate(PS23 + 1, PS23 + 6, "chapter", 0.2), Candidate(PS23 + 4, PS23 + 4, "verse", 0.5)], verses_in)
    assert [(c.start, c.level) for c in out] == [(PS23 + 4, "verse")]


def test_dense_hits_collapse_into_their_chapter_with_the_mean_score():
    cands = [Candidate(PS23 + v, PS23 + v, "verse", s) for v, s in ((1, 0.6), (3, 0.4), (5, 0.2), (6, 0.4))]
    def chapter(vid):
        return (vid // 1000 * 1000 + 1, vid // 1000 * 1000 + verses_in(vid // 1000 * 1000))

    out = collapse(cands, "chapter", chapter, ratio=0.5)
    assert len(out) == 1 and out[0].level == "chapter" and out[0].score == pytest.approx(0.4)
    assert (out[0].start, out[0].end) == (PS23 + 1, PS23 + 6)
    assert len(collapse(cands[:3], "chapter", chapter, ratio=0.5)) == 3  # 3 of 6 is not more than half


def test_the_hierarchy_is_verse_then_pericope_then_chapter():
    # John 11: pericopes 1-16 and 17-37 and 38-57 (the BSB's headings)
    def pericope_of(vid):
        v = vid % 1000
        base = vid // 1000 * 1000
        return (base + 1, base + 16) if v <= 16 else (base + 17, base + 37) if v <= 37 else (base + 38, base + 57)

    def verses(cid):
        return 57

    j = 43011000
    hits = [Candidate(j + 17, j + 22, "range", 0.5), Candidate(j + 25, j + 31, "range", 0.9), Candidate(j + 3, j + 3, "verse", 0.3)]
    out = merge(hits, verses, 0.5, pericope_of)  # 13 of the 21 verses of 17-37 hit; 22 of the chapter's 57 do not
    assert [(c.start % 1000, c.end % 1000, c.level) for c in out] == [(17, 37, "pericope"), (3, 3, "verse")]
    assert out[0].score == pytest.approx((0.5 + 0.9) / 2)
    # a retrieved pericope that scores below its best verse gives way to it, and a chapter absorbs pericopes
    box = Candidate(j + 17, j + 37, "pericope", 0.6)
    out = merge([box, Candidate(j + 35, j + 35, "verse", 0.8)], verses, 0.5, pericope_of)
    assert [(c.start % 1000, c.level) for c in out] == [(35, "verse")]
    out = merge([Candidate(j + 1, j + 57, "chapter", 0.9), box], verses, 0.5, pericope_of)
    assert [(c.start % 1000, c.end % 1000, c.level) for c in out] == [(1, 57, "chapter")]


def test_no_two_results_overlap_after_merge():
    rng = np.random.default_rng(0)
    cands = []
    for _ in range(60):
        ch = int(rng.integers(1, 4))
        v = int(rng.integers(1, 10))
        cands.append(Candidate(43000000 + ch * 1000 + v, 43000000 + ch * 1000 + v + int(rng.integers(0, 3)), "verse",
                               float(rng.random())))
    cands.append(Candidate(43001001, 43001000 + verses_in(43001000), "chapter", 0.5))
    cands.append(Candidate(43002001, 43002005, "pericope", 0.7))
    out = merge(cands, verses_in, 0.5, lambda vid: (vid // 1000 * 1000 + 1, vid // 1000 * 1000 + 5) if vid % 1000 <= 5 else None)
    spans = sorted((c.start, c.end) for c in out)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))


def test_genre_boost_is_soft_and_only_when_asked():
    psalm, gen = Candidate(19023001, 19023001, "verse", 1.0), Candidate(13001001, 13001001, "verse", 1.0)
    psalm.genre, gen.genre = "psalm", "genealogy"
    out = final_scores([gen, psalm], use_prior=False, genre_boosts={"psalm": 1.3, "genealogy": 0.7}, testament=None,
                       testament_of=lambda _: "OT")
    assert [c.genre for c in out] == ["psalm", "genealogy"] and out[1].score > 0
    a, b = Candidate(1, 1, "verse", 1.0), Candidate(2, 2, "verse", 0.9, prior=1.0)
    out = final_scores([a, b], use_prior=True, genre_boosts=None, testament=None, testament_of=lambda _: "OT")
    assert out[0].start == 2  # the prior lifts the voted passage
    # passages the boost leaves equal keep the order they came in (the reranker's), not canonical order (rule T)
    later, earlier = Candidate(19023001, 19023001, "verse", 1.0), Candidate(13001001, 13001001, "verse", 1.0)
    later.genre = earlier.genre = "psalm"
    out = final_scores([later, earlier], use_prior=False, genre_boosts={"psalm": 1.3}, testament=None, testament_of=lambda _: "OT")
    assert [c.start for c in out] == [19023001, 13001001] and out[0].score == out[1].score


def test_a_genre_boost_never_multiplies_by_zero():
    """final_scores keeps a floor (min_genre_boost), so a genre weighted 0 still keeps a score."""
    c = Candidate(4, 4, "verse", 1.0)
    c.genre = "genealogy"
    assert final_scores([c], use_prior=False, genre_boosts={"genealogy": 0.0}, testament=None, testament_of=lambda _: "OT")[0].score > 0


def _index() -> ThemeIndex:
    vecs = np.eye(4, dtype=np.float32)
    return ThemeIndex(keys=["pastoral:grief", "topic:pizza", "topic:grief"], kinds=["pastoral", "topic", "topic"],
                      names=["grief", "pizza", "grief"], rewrites=["mourning", "pizza", "grief"],
                      split_keys=["pastoral:grief", "pizza", "grief"], cue_vectors=vecs,
                      cue_starts=np.array([0, 2, 3]), rewrite_vectors=vecs[:3],
                      passages=[(np.array([1]), np.array([1]), np.array([1.0])), (np.array([2]), np.array([2]), np.array([1.0])),
                                (np.array([1, 3]), np.array([1, 3]), np.array([0.5, 1.0]))])


def test_routing_reads_cues_and_leaves_out_excluded_themes():
    idx = _index()
    q = np.array([0.0, 0.75, 0.0, 0.66], np.float32)  # near the grief theme's second cue and topic:grief
    routed = route(idx, q, pastoral=False)
    assert [r.theme for r in routed] == [0, 2] and routed[0].weight > routed[1].weight
    assert sum(r.weight for r in routed) == pytest.approx(1.0)
    assert [r.theme for r in route(idx, q, pastoral=False, exclude=frozenset({"pastoral:grief"}))][0] == 2
    prior = prior_scores(idx, routed)
    assert prior[(1, 1)] > prior[(3, 3)] > 0


def test_llm_phrases_join_the_offline_rewrites():
    """Rule A: an LLM's need phrases join the routed themes' step-back rewrites. A failing gateway falls back to the
    offline rewrites."""
    import json

    from citebible_pipeline.query.rewrite import LLMConfig, rewrites
    from tests.httpfixture import ScriptedServer

    idx = _index()
    routed = route(idx, np.array([0.0, 0.75, 0.0, 0.66], np.float32), pastoral=False)
    reply = json.dumps({"choices": [{"message": {"content": "- lament\n- comfort in grief"}}]}).encode()
    with ScriptedServer() as srv:
        srv.routes = {"/ok": [(200, reply)], "/down": [(503, b"busy")]}
        cfg = LLMConfig(srv.base + "/ok", "stub", timeout_s=5.0)
        added, note = rewrites(idx, routed, "my mother died", 4, cfg)
        assert note is None
        assert [(rw.source, theme) for rw, theme in added] == [("original", -1), ("pastoral:grief", 0), ("topic:grief", 2),
                                                               ("llm", -1), ("llm", -1)]
        assert [rw.text for rw, _ in added[3:]] == ["lament", "comfort in grief"]
        offline, note = rewrites(idx, routed, "my mother died", 4, LLMConfig(srv.base + "/down", "stub", timeout_s=5.0))
        assert [rw.source for rw, _ in offline] == ["original", "pastoral:grief", "topic:grief"] and "offline" in note


def test_a_clause_states_a_need_only_when_a_theme_fits_it_as_well_as_the_sentence():
    idx = _index()
    sentence = np.array([0.0, 0.8, 0.3, 0.0], np.float32)  # grief (0.8), pizza far below it
    clear = np.array([1.0, 0.0, 0.0, 0.0], np.float32)  # a clause that is plainly grief (1.0)
    vague = np.array([0.0, 0.0, 0.5, 0.5], np.float32)  # a few words nearest pizza, but only at 0.5
    rows = np.vstack([sentence, clear, vague])
    assert stated(np.maximum.reduceat(idx.cue_vectors @ rows.T, idx.cue_starts, axis=0)) == [0, 1]
    assert all(r.theme != 1 for r in route(idx, rows, pastoral=False))  # the vague clause hands pizza nothing
    both = np.vstack([sentence, clear, np.array([0.0, 0.0, 0.9, 0.0], np.float32)])  # pizza stated plainly
    assert 1 in [r.theme for r in route(idx, both, pastoral=False)]
    assert clause_needs(idx, both, pastoral=False) == [0, 1] and clause_needs(idx, rows, pastoral=False) == []


def test_floor_calibration_separates_and_keeps_answerable_queries():
    rng = np.random.default_rng(1)
    pos = [dict(zip(FEATURES, (0.6 + 0.1 * rng.random(), 0.5, 0.7, 0.5, 0.3, 0.9))) for _ in range(100)]
    neg = [dict(zip(FEATURES, (0.25 + 0.1 * rng.random(), 0.2, 0.4, 0.1, 0.0, 0.3))) for _ in range(40)]
    floor, metrics = calibrate(pos, neg, max_false_abstain=0.02)
    assert metrics["answerable_abstained"] <= 0.02 and metrics["everyday_abstained"] == 1.0
    assert not floor.abstains(pos[0]) and floor.abstains(neg[0])
    with pytest.raises(ValueError, match="at least|>= 10"):
        calibrate(pos[:3], neg)


def test_highlights_use_stems_and_pinned_is_the_nearest_verse():
    stems = terms(["My mother is dying", "grief and mourning"])
    text = "Blessed are those who mourn, for they shall be comforted; he grieves with the dying."
    marked = [text[s.start:s.end] for s in highlights(text, stems)]
    assert "mourn" in marked and "dying" in marked and "Blessed" not in marked
    q = np.array([0.0, 1.0], np.float32)
    assert pinned_index(q, [np.array([1.0, 0.0]), np.array([0.6, 0.8]), np.array([0.0, 1.0])]) == 2


def test_clauses_split_a_sentence_into_its_needs():
    from citebible_pipeline.query.route import clauses

    assert clauses("My mother is dying and I'm angry at God") == ["My mother is dying", "I'm angry at God"]
    assert clauses("the armor of God") == [] and clauses("grief and loss") == []


def test_lexicon_coverage():
    from citebible_pipeline.query.floor import lexicon, lexicon_coverage

    words = lexicon(["The Lord is my shepherd; I shall not want.", "Bread and wine and fishes"])
    assert lexicon_coverage("the shepherd and bread", words) == 1.0
    assert lexicon_coverage("reset the wifi router", words) == 0.0
    assert lexicon_coverage("a fish", words) == 0.0 and lexicon_coverage("fishes", words) == 1.0


def test_every_weight_and_threshold_says_where_it_came_from():
    from citebible_pipeline.query.tuning import TUNING, Tuning

    sources = Tuning.sources()
    assert len(sources) >= 24 and all(len(s) > 15 for s in sources.values()), \
        [k for k, s in sources.items() if len(s) <= 15]
    assert all(s.split(":")[0] in ("dev", "rule", "set by hand", "rule from the issue", "rule from the architecture",
                                   "rule stated with the classifier", "rule stated before measuring") for s in sources.values())
    assert TUNING.rrf_k == 60 and TUNING.max_false_abstain == 0.05  # one default, where there were two


def test_no_query_module_imports_another_in_a_circle():
    """The import graph of citebible_pipeline.query is acyclic (rerankers take what they read, never the Engine)."""
    import ast
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[1] / "citebible_pipeline" / "query"
    graph = {}
    for path in pkg.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("citebible_pipeline.query"):
                mods = [node.module] if node.module != "citebible_pipeline.query" else \
                    [f"citebible_pipeline.query.{a.name}" for a in node.names]
                deps |= {m.rsplit(".", 1)[-1] for m in mods}
        graph[path.stem] = deps - {path.stem, "__init__"}
    done, visiting = set(), []

    def visit(mod):
        assert mod not in visiting, f"import circle: {' -> '.join([*visiting[visiting.index(mod):], mod])}"
        if mod in done or mod not in graph:
            return
        visiting.append(mod)
        for dep in graph[mod]:
            visit(dep)
        visiting.pop()
        done.add(mod)

    for mod in graph:
        if mod != "__init__":
            visit(mod)
    assert max(len(p.read_text().splitlines()) for p in pkg.glob("*.py")) <= 270


def test_specificity_prior_a_hub_loses_to_a_specific_passage():
    """Toy table: the hub (id 9) is voted under all four themes, at the top of each; passage 5 is voted only under
    the routed need, at half the hub's share. Raw vote share ranks the hub first; specificity ranks 5 first."""
    themes = 4
    passages = [(np.array([9, 5]), np.array([9, 5]), np.array([1.0, 0.5]))] + \
        [(np.array([9, 10 + t]), np.array([9, 10 + t]), np.array([1.0, 0.3])) for t in range(1, themes)]
    spec = specificity(passages)
    assert spec[0][1] == pytest.approx(1.0) and spec[0][0] == pytest.approx(np.log(2) / np.log(1 + themes))
    idx = ThemeIndex(keys=[f"t{i}" for i in range(themes)], kinds=["pastoral"] * themes, names=["n"] * themes,
                     rewrites=["r"] * themes, split_keys=[f"t{i}" for i in range(themes)],
                     cue_vectors=np.eye(themes, dtype=np.float32), cue_starts=np.arange(themes),
                     rewrite_vectors=np.eye(themes, dtype=np.float32), passages=passages, specificity=spec)
    routed = [Routed(0, 0.9, 1.0)]
    raw, specific = prior_scores(idx, routed, specific=False), prior_scores(idx, routed)
    assert raw[(9, 9)] > raw[(5, 5)]
    assert specific[(5, 5)] > specific[(9, 9)] > 0  # the hub still counts, less
    # where the hub is the only thing voted, it still answers
    assert prior_scores(idx, [Routed(1, 0.9, 1.0)])[(9, 9)] > 0


def test_specificity_counts_a_passage_among_its_own_layer():
    """Three pastoral needs all list the hub (9); forty topic names list a passage each and none lists the hub. Pooled,
    the hub is in 3 of 43 themes and keeps most of its weight; among the needs it is in all 3 and keeps log 2 / log 4,
    while a passage one need alone lists keeps 1."""
    needs = [(np.array([9, 5 + t]), np.array([9, 5 + t]), np.array([1.0, 0.6])) for t in range(3)]
    topics = [(np.array([100 + t]), np.array([100 + t]), np.array([1.0])) for t in range(40)]
    kinds = ["pastoral"] * 3 + ["topic"] * 40
    pooled, layered = specificity(needs + topics), specificity(needs + topics, layers=kinds)
    assert pooled[0][0] == pytest.approx(np.log1p(43 / 3) / np.log1p(43))  # about 0.72
    assert layered[0][0] == pytest.approx(np.log(2) / np.log(4)) and layered[0][1] == pytest.approx(1.0)
    assert layered[3][0] == pytest.approx(1.0) and len(layered) == 43
    idx = ThemeIndex(keys=[f"t{i}" for i in range(43)], kinds=kinds, names=["n"] * 43, rewrites=["r"] * 43,
                     split_keys=[f"t{i}" for i in range(43)], cue_vectors=np.eye(43, dtype=np.float32),
                     cue_starts=np.arange(43), rewrite_vectors=np.eye(43, dtype=np.float32), passages=needs + topics,
                     specificity=layered)
    routed = [Routed(0, 0.9, 1.0)]
    assert prior_scores(idx, routed)[(5, 5)] > prior_scores(idx, routed)[(9, 9)]  # the layer's rule: the need wins
    pooled_idx = dataclasses.replace(idx, specificity=pooled)
    assert prior_scores(pooled_idx, routed)[(9, 9)] > prior_scores(pooled_idx, routed)[(5, 5)]  # pooled, the hub would


PS119 = verse_id(19, 119, 0)  # Psalm 119: 176 verses, so verse i of a synthetic ranking is a real verse id


def _cand(i: int) -> Candidate:
    return Candidate(PS119 + 1 + i, PS119 + 1 + i, "verse", 1.0 - i / 100)


def _need(*verses: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([PS119 + 1 + v for v in verses])
    return ids, ids


def test_each_stated_need_gets_a_top_slot_from_the_top_20():
    """A synthetic two-need sentence: need A (grief) is served at ranks 1-4, need B (anger at God) first at rank 9."""
    cands = [_cand(i) for i in range(30)]
    grief, lament = _need(0, 1, 2, 3, 5), _need(8, 12)
    out = fill(cands, [grief, lament], k=5, depth=20)
    top = [c.start - PS119 - 1 for c in out[:5]]
    assert top == [0, 1, 2, 3, 8]  # B's best took the last slot; 4 (serving neither) was displaced, not lost
    assert out[5].start == PS119 + 5 and sorted(c.start - PS119 - 1 for c in out) == list(range(30))
    # a single need: unchanged; a need whose first candidate is beyond the top 20: not promoted
    assert fill(cands, [grief], k=5, depth=20) == cands
    assert fill(cands, [grief, _need(25)], k=5, depth=20) == cands
    # the displaced candidate is never the only one serving another need, and never the first
    out = fill(cands, [grief, _need(4), lament], k=5, depth=20)
    assert [c.start - PS119 - 1 for c in out[:5]] == [0, 1, 2, 4, 8]
    # a range candidate serves a need whose passages hold half its verses
    assert serves(Candidate(PS119 + 8, PS119 + 9, "verse", 0.5), lament)


def test_on_pastoral_intent_the_learned_order_is_blended_with_the_order_it_was_given():
    from citebible_pipeline.query.features import RerankQuery
    from citebible_pipeline.query.rerank import Reranker, apply

    class Reverse(Reranker):  # a learned model that turns the fused order upside down
        learned = True

        def rerank(self, query, cands, inputs):
            for i, c in enumerate(cands):
                c.score = float(i + 1)
            return sorted(cands, key=lambda c: -c.score)

    def pool():
        return [Candidate(PS23 + i, PS23 + i, "verse", 1.0 - i / 10) for i in range(1, 6)]

    def query(pastoral):
        return RerankQuery("q", np.zeros(4, np.float32), np.zeros((0, 4), np.float32), pastoral=pastoral)

    learned, was_learned = apply(Reverse(), query(False), pool(), None)
    assert [c.start - PS23 for c in learned] == [5, 4, 3, 2, 1] and was_learned  # a study query: the model's order
    assert [c.start - PS23 for c in apply(Reverse(), query(True), pool(), None, blend=False)[0]] == [5, 4, 3, 2, 1]
    blended, _ = apply(Reverse(), query(True), pool(), None, k=60)
    # reciprocal rank of both orders: each order's first ties with the other's and the tie keeps the learned order
    # (rule T: not the earlier verse, canonical position says nothing of the reader); the middle, never near the top
    # of either, comes last
    assert [c.start - PS23 for c in blended] == [5, 1, 4, 2, 3]
    assert blended[0].score == 1.0 and all(0 < c.score <= 1 for c in blended)
    assert apply(None, query(True), pool(), None)[1] is False  # no reranker: the order it was given, not learned


def test_merge_leaves_no_two_results_overlapping_even_across_a_chapter_break():
    """A voted span across a chapter break (Matthew 6:25-7:29) and a range inside it (6:25-34): ranges merge only
    within a chapter, so the final pass keeps the better one and gives it the other's provenance (the test CI hit:
    both came back for "I'm terrified about my surgery tomorrow")."""
    from citebible_pipeline.bible.canon import verses_in_chapter_of
    from citebible_pipeline.query.merge import merge

    inner, across, apart = Candidate(40006025, 40006034, "range", 0.9), Candidate(40006025, 40007029, "range", 0.5), \
        Candidate(40010001, 40010001, "verse", 0.4)
    inner.hits.append(("original", "dense", "verse", 1))
    across.hits.append(("original", "prior", "verse", 3))
    out = merge([inner, across, apart], verses_in_chapter_of)
    spans = sorted((c.start, c.end) for c in out)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), spans
    assert len(out) == 2 and (40010001, 40010001) in spans
    kept = next(c for c in out if c.start <= 40006025 <= c.end)  # the range, or the chapter it collapsed into
    assert ("original", "prior", "verse", 3) in kept.hits and ("original", "dense", "verse", 1) in kept.hits


def test_retrieval_is_remembered_per_request_and_only_when_asked(monkeypatch):
    from citebible_pipeline.query import retrieve as stage

    calls = []
    monkeypatch.setattr(stage, "retrieve", lambda conn, *args, **kw: calls.append(args) or [(0, "dense", "verse", 1, 1, 0.5)])
    a, b = np.ones(4, np.float32), np.array([1, 1, 1, 0], np.float32)
    def ask(memo, vec, text="x", translation="web"):
        return stage.retrieve_once(memo, None, 1, 4, [stage.DenseQuery(0, "verse", vec)], 30, 60, text, translation=translation)

    memo: dict = {}
    first = ask(memo, a)
    assert ask(memo, a) is first and len(calls) == 1  # the same request: answered from the memo
    ask(memo, b), ask(memo, a, "y"), ask(memo, a, translation="bsb")
    assert len(calls) == 4  # another vector, full-text query or translation: searched
    ask(None, a), ask(None, a)
    assert len(calls) == 6  # no memo: every call searches


def test_every_routed_need_brings_its_best_passages_into_the_pool():
    """lists.need_candidates: each routed theme's best `depth` passages by weight x specificity join the pool when fusion
    left them out; a Nave's entry's unweighted listings (equal weights) come nearest the query first, not in canonical
    order; passages already in the pool are not repeated; each carries its prior and the need's provenance."""
    from citebible_pipeline.query.lists import need_candidates

    lament = (np.array([1, 2, 3, 4, 50]), np.array([1, 2, 3, 4, 52]), np.array([1.0, 1.0, 1.0, 1.0, 1.0]))
    grief = (np.array([7, 8]), np.array([7, 8]), np.array([1.0, 0.2]))
    idx = ThemeIndex(keys=["a", "b"], kinds=["pastoral"] * 2, names=["n"] * 2, rewrites=["r"] * 2, split_keys=["a", "b"],
                     cue_vectors=np.eye(2, dtype=np.float32), cue_starts=np.arange(2),
                     rewrite_vectors=np.eye(2, dtype=np.float32), passages=[lament, grief],
                     specificity=[np.ones(5), np.ones(2)])
    near = {50: 0.9, 3: 0.5}  # the query's cosine to each passage's best verse

    def cosines(starts, ends):
        return np.array([near.get(int(s), 0.1) for s in starts])

    prior = {(50, 52): 0.4, (7, 7): 0.3}
    routed = [Routed(0, 0.7, 0.6), Routed(1, 0.6, 0.4)]
    got = need_candidates(idx, routed, prior, cosines, 2, have={(7, 7)})  # equal weights: the cosine order
    assert [(c.start, c.end) for c in got] == [(50, 52), (3, 3), (8, 8)]  # lament's two nearest, grief's second
    assert got[0].level == "range" and got[0].prior == 0.4 and got[1].prior == 0.0 and got[0].score == 0.0
    assert got[0].hits == [("prior", "need", "passage", 1)] and got[2].hits == [("prior", "need", "passage", 2)]
    assert need_candidates(idx, [], prior, cosines, 2, set()) == []


def test_a_need_chooses_its_passages_with_the_sentence():
    """A theme's weight order and the sentence's cosine order meet by reciprocal rank, so a passage of the need that
    fits the sentence (second by weight, nearest the sentence) comes before the need's heaviest one far from it. Reciprocal rank reads ranks, not weights: a passage the need barely lists
    but the sentence is near (6) comes before the need's middle ones, still after the need's own best."""
    from citebible_pipeline.query.lists import need_candidates

    need = (np.arange(1, 7), np.arange(1, 7), np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.05]))
    near = {1: 0.1, 2: 0.8, 3: 0.5, 4: 0.4, 5: 0.3, 6: 0.7}
    idx = ThemeIndex(keys=["a"], kinds=["pastoral"], names=["n"], rewrites=["r"], split_keys=["a"],
                     cue_vectors=np.eye(1, dtype=np.float32), cue_starts=np.arange(1),
                     rewrite_vectors=np.eye(1, dtype=np.float32), passages=[need], specificity=[np.ones(6)])

    def cosines(starts, ends):
        return np.array([near[int(s)] for s in starts])

    def first(depth=3):
        return [c.start for c in need_candidates(idx, [Routed(0, 0.7, 1.0)], {}, cosines, depth, set())]

    assert first() == [2, 3, 1]  # 2: ranks 2 and 1; 3: 3 and 3; 1 and 6 tie on their sums, 1 first by id
    assert first(6) == [2, 3, 1, 6, 4, 5]


def test_routing_records_the_row_each_theme_scored_best_on():
    """route: each routed theme says which row stated it best (the sentence, a clause); one row, the sentence."""
    topic = (np.array([100]), np.array([100]), np.array([1.0]))
    need = (np.array([1, 2, 3]), np.array([1, 2, 3]), np.ones(3))
    idx = ThemeIndex(keys=["t", "n"], kinds=["topic", "pastoral"], names=["t", "n"], rewrites=["r"] * 2,
                     split_keys=["t", "n"], cue_vectors=np.eye(2, dtype=np.float32), cue_starts=np.arange(2),
                     rewrite_vectors=np.eye(2, dtype=np.float32), passages=[topic, need], specificity=[np.ones(1), np.ones(3)])
    sentence = np.array([0.8, 0.6], np.float32)  # nearer the topic than the need
    vecs = np.vstack([sentence, [1.0, 0.0], [0.0, 1.0]]).astype(np.float32)  # then its two clauses
    assert {idx.keys[r.theme]: r.row for r in route(idx, vecs, pastoral=False)} == {"t": 1, "n": 2}
    assert {r.row for r in route(idx, sentence, pastoral=False)} == {0}


def test_the_prior_list_orders_by_weight_then_canonically():
    """prior_list: heavier first, equal weights in canonical order, cut at the pool; the weights travel unchanged."""
    from citebible_pipeline.query.lists import prior_list

    prior = {(10, 10): 0.5, (20, 22): 0.5, (30, 30): 0.5, (40, 40): 0.9, (50, 50): 0.2}
    assert [s for s, _, _, _ in prior_list(prior, 5).items] == [40, 10, 20, 30, 50]
    assert [s for s, _, _, _ in prior_list(prior, 2).items] == [40, 10]
    assert prior_list(prior, 5).items[2] == (20, 22, "range", 0.5)


@pytest.mark.parametrize("text, pair", [("'; DROP TABLE verses; --", "DROP TABLE"),
                                        ("Robert'); DELETE FROM verses;--", "DELETE FROM"),
                                        ("1 UNION ALL SELECT password FROM users /*", "UNION ALL SELECT"),
                                        ("x'; update verses set text = 'gone", "UPDATE VERSES SET")])
def test_a_database_statement_is_refused_unsearched_and_says_why(text, pair):
    a = analyze(validate(text))
    assert a.query_type == "statement" and pair in a.refused and not a.pastoral


@pytest.mark.parametrize("text", ["I want to delete from my phone every photo of him; is that wrong?",
                                  "My kids drop table manners the moment we sit down -- help",
                                  "I'm exhausted; I select what to read from the Psalms each night",
                                  "Can you update me on Psalm 23; I forgot it"])
def test_a_readers_words_that_share_a_statements_are_still_searched(text):
    assert analyze(validate(text)).query_type == "search"


def test_many_queries_on_threads_keep_their_order_and_hold_blas_to_one_thread(monkeypatch):
    """query.batch: results come back in the order asked whatever order the threads finish in, BLAS runs one thread
    while they do and is given back after, `hold_blas` holds it and can give it back, and a bad CITEBIBLE_QUERY_WORKERS
    is named."""
    import threading
    import time

    from threadpoolctl import threadpool_info

    from citebible_pipeline.query.batch import hold_blas
    from citebible_pipeline.retrieval.batch import default_workers, map_queries

    seen: list[tuple[int, set[int], str]] = []

    def blas() -> set[int]:
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    def slow_first(i: int) -> int:
        time.sleep(0.05 if i == 0 else 0.0)
        seen.append((i, blas(), threading.current_thread().name))
        return i * i

    before = blas()
    assert list(map_queries(slow_first, range(8), workers=2)) == [i * i for i in range(8)]
    assert seen[0][0] != 0  # a later item finished first
    assert all(threads <= {1} for _, threads, _ in seen) and len({name for *_, name in seen}) == 2
    assert blas() == before
    held = hold_blas(1)  # what the engine does at start-up, for its whole process
    assert blas() <= {1} and hold_blas(None) is None
    held.restore_original_limits()
    assert blas() == before
    monkeypatch.setenv("CITEBIBLE_QUERY_WORKERS", "1")
    assert default_workers() == 1
    monkeypatch.setenv("CITEBIBLE_QUERY_WORKERS", "two")
    with pytest.raises(ValueError, match="CITEBIBLE_QUERY_WORKERS"):
        default_workers()


def test_exact_retrieval_answers_each_search_nearest_first_in_the_order_asked():
    """retrieve.exact_rows: every dense search answered from vectors in memory in `retrieve`'s row shape, the searches
    in the order given whatever their level, nearest first, equal similarities by start id, at most k a search."""
    verse = level(np.array([101, 102, 103, 104]), np.array([101, 102, 103, 104]),
                  np.array([[1, 0], [0.6, 0.8], [0.6, 0.8], [0, 1]], np.float32))
    chapter = level(np.array([1001, 2001]), np.array([1031, 2022]), np.array([[0, 1], [1, 0]], np.float32))
    q_a, q_b = np.array([1, 0], np.float32), np.array([0, 1], np.float32)
    dense = [DenseQuery(0, "chapter", q_a), DenseQuery(0, "verse", q_a), DenseQuery(1, "verse", q_b)]
    rows = exact_rows(dense, {"verse": verse, "chapter": chapter}, k=3)
    assert [r[:5] for r in rows] == [
        (0, "dense", "chapter", 2001, 2022), (0, "dense", "chapter", 1001, 1031),  # k 3, only two chapters
        (0, "dense", "verse", 101, 101), (0, "dense", "verse", 102, 102), (0, "dense", "verse", 103, 103),  # a tie: by id
        (1, "dense", "verse", 104, 104), (1, "dense", "verse", 102, 102), (1, "dense", "verse", 103, 103)]
    assert rows[0][5] == pytest.approx(1.0) and rows[3][5] == pytest.approx(0.6) and rows[1][5] == pytest.approx(0.0)
    assert exact_rows([], {"verse": verse}, k=3) == []


def test_exact_memo_is_the_same_to_the_bit():
    """retrieve.exact_rows with a memo (prefill_exact, then answers kept as they are asked) returns exactly what it
    returns without one, at the verse matrix's real size: a product's last bits depend on its width, a vector's place in
    it and the machine's BLAS kernels, so the rows near the k-th are scored again by themselves (`_top`), and an
    answer is the same alone, beside a few vectors or among a prefilled chunk."""
    rng = np.random.default_rng(3)
    unit = lambda a: (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)
    mat = unit(rng.standard_normal((31_103, 384)))
    levels = {"verse": level(np.arange(31_103) + 1001001, np.arange(31_103) + 1001001, mat),
              "chapter": level(np.arange(50) * 1000, np.arange(50) * 1000 + 9, unit(rng.standard_normal((50, 384))))}
    sentences, themes = unit(rng.standard_normal((40, 384))), unit(rng.standard_normal((6, 384)))
    searches = [[DenseQuery(0, lv, sentences[i]) for lv in ("verse", "chapter")]
                + [DenseQuery(1 + j, "verse", themes[(i + j) % 6]) for j in range(i % 4)] for i in range(40)]
    memo: dict = {}
    prefill_exact(memo, levels, np.vstack([sentences[:30], themes[:3]]), 30)  # some asked later are not prefilled
    for dense in searches:
        assert exact_rows(dense, levels, 30, memo) == exact_rows(dense, levels, 30)
    wide = exact_rows([DenseQuery(i, "verse", v) for i, v in enumerate(sentences[:33])], levels, 30)
    alone = [row for i, v in enumerate(sentences[:33]) for row in exact_rows([DenseQuery(i, "verse", v)], levels, 30)]
    assert wide == alone and len(wide) == 33 * 30


def test_excluded_reads_the_rows_of_the_keys_left_out():
    """route.excluded: the rows whose split key is left out, from SplitKeys' rows of each key or from a plain list."""
    keys = ["grief", "anger", "grief", "joy", "hope"]
    want = np.array([True, False, True, False, True])
    assert np.array_equal(excluded(SplitKeys(keys), frozenset({"grief", "hope", "absent"})), want)
    assert np.array_equal(excluded(keys, frozenset({"grief", "hope"})), want)
    assert not excluded(SplitKeys(keys), frozenset()).any() and excluded(SplitKeys(), frozenset({"a"})).shape == (0,)


@pytest.mark.parametrize("text,abuse", [
    # intimate-partner-violence screening items (HITS, the Abuse Assessment Screen, WAST) said of oneself
    ("My partner screams at me and threatens me", True), ("My boyfriend slapped me last night", True),
    ("I was raped at a party last year", True), ("My stepfather abused me for years", True),
    ("My ex was abusive and I still jump at every noise", True),
    # the same words of someone else, or not done to the reader, are not a disclosure
    ("Jesus was hit and mocked by the soldiers", False), ("Why was Tamar raped?", False),
    ("I got kicked out of school", False), ("What does the Bible say about wives submitting to husbands?", False),
    # what was done to the reader is a disclosure beside the reader's own act too
    ("I hit my husband back after he hit me", True),
    # sex without consent as the Sexual Experiences Survey asks it; "forced me to" an errand is not one
    ("He held me down and I couldn't stop him", True), ("My ex forced himself on me after the party", True),
    ("he forced me. I never told anyone", True), ("My boss forced me to work late again", False),
    # blows to the reader and siblings by someone close; a team or a storm "beat us" or "hit us" is no one close
    ("Our stepdad beat us with a cord when he was drunk", True), ("They beat us 3-0 in the final", False),
    ("The storm hit us hard last year", False),
    # the Danger Assessment's items and child sexual abuse as children tell it
    ("He strangled me until I passed out", True), ("my ex threatens to post my pictures if I leave", True),
    ("my uncle touched me when I was little", True), ("The sermon really touched me", False),
    ("My landlord threatened to evict us", False),
])
def test_a_reader_disclosing_abuse_is_read_as_pastoral_and_as_abuse(text, abuse):
    a = analyze(validate(text))
    assert a.abuse is abuse and (a.pastoral if abuse else True), (a.pastoral_score, a.abuse)


def test_a_disclosure_of_abuse_leaves_out_the_themes_named_for_the_wrong_done_to_the_reader():
    """perspective.left_out: for the abuse need, reconciliation and submission, and the topics of the sexual wrong and
    of drink (their entries list the law and the warnings to whoever did it); the other stances' lists are their own."""
    from citebible_pipeline.query.perspective import ABUSE, LAMENT, left_out

    names = ["sexual purity", "fornication", "drunkenness", "reconciliation", "comfort", "refuge", "God's anger"]
    idx = SimpleNamespace(names=names, keys=names)
    assert left_out(idx, ABUSE) == {0, 1, 2, 3}
    assert left_out(idx, LAMENT) == {6}


def test_a_reader_confessing_the_abuse_they_did_is_its_doer_and_is_not_told_it_is_not_their_fault():
    """care.help_now: the victims' help text goes to a disclosure, not to the one who did it (the doer)."""
    from citebible_pipeline.query.care import ABUSE_HELP as HELP, help_now

    own = analyze(validate("I abused my wife for years and now she's gone"))
    assert own.abuse and own.stance == "doer" and help_now(own) is None
    both = analyze(validate("I hit my husband back after he hit me"))
    assert both.abuse and both.stance == "sufferer" and help_now(both) == HELP
    told = analyze(validate("My stepfather abused me for years"))
    assert told.abuse and told.stance == "sufferer" and help_now(told) == HELP


def test_for_a_reader_disclosing_abuse_the_orders_to_submit_stay_or_not_resist_come_after_every_other_passage():
    """harm.stage with the abuse need's avoid list (pastoral.yaml): a passage holding an order to submit (Colossians
    3:18), to stay (1 Corinthians 7:10-11) or not to resist (Matthew 5:39-41) goes below the rest, in its order; a
    chapter goes by its pinned verse; the verses beside an order (1 Corinthians 7:12-16) and a seeker's answer stay."""
    from citebible_pipeline.bible.references import parse_reference
    from citebible_pipeline.query.harm import Voices, stage
    from citebible_pipeline.themes.vocabulary import load_pastoral

    abuse = next(t for t in load_pastoral() if t.id == "abuse")
    avoid = [(np.array([s for s, _, _ in abuse.avoid_spans()]), np.array([e for _, e, _ in abuse.avoid_spans()]))]
    none = Voices(np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, bool))

    def cand(ref, level="range"):
        r = parse_reference(ref)
        return Candidate(r.start_id, r.end_id, level)

    ranked = [cand("Colossians 3:18-19"), cand("Psalm 9:9", "verse"), cand("Colossians 3", "chapter"),
              cand("Colossians 3", "chapter"), cand("1 Corinthians 7:12-16"), cand("Matthew 5:38-48"),
              cand("1 Corinthians 7:10-16"), cand("Psalm 10:17-18")]
    pins = [None, None, parse_reference("Colossians 3:18").start_id, parse_reference("Colossians 3:12").start_id,
            None, None, None, None]
    held = stage(ranked, "sufferer", none, avoid, pins)
    assert [c.key for c in held] == [ranked[i].key for i in (1, 3, 4, 7, 0, 2, 5, 6)]
    assert stage(ranked, "seeker", none, avoid, pins) == ranked  # "what does the Bible say about submission" keeps them
    assert stage(ranked[1::3], "sufferer", none, avoid, pins[1::3]) == ranked[1::3]  # nothing to hold back
