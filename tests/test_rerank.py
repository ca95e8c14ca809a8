"""The learned reranker on the real built tables: the feature model the build trained serves by default;
training is deterministic for a seed; the leakage guard; a feature-list mismatch is refused; a row that
fails to load never replaces the model serving; the cross-encoder fine-tunes on a small sample."""

import contextlib

import numpy as np
import pytest

from citebible_pipeline.db import connect
from citebible_pipeline.gold.access import eval_queries
from citebible_pipeline.gold.metrics import Passage
from citebible_pipeline.gold.split import split_key
from citebible_pipeline.query import Engine
from citebible_pipeline.query.features import FEATURES, compute
from citebible_pipeline.query.rerank import BOOSTER_SEP, FeatureReranker, RerankerError, RerankerMismatch
from citebible_pipeline.rerank.pools import collect, labels, leakage_guard, training_queries
from citebible_pipeline.rerank.store import activate, active_id, save_model
from citebible_pipeline.rerank.train import ce_pairs, split, train_cross_encoder, train_ensemble, train_features
from citebible_pipeline.themes.devset import DevQuery

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def engine(full_db) -> Engine:
    return Engine(full_db["url"], llm=None)


@pytest.fixture(scope="module")
def heldout(full_db) -> list[str]:
    with connect(full_db["url"]) as conn:
        return [q.text for q in eval_queries(conn, "heldout_topics")]


@pytest.fixture(scope="module")
def pools(engine, heldout):
    queries, _ = training_queries(engine, heldout, topics=80, seed=5)
    return collect(engine, queries, progress=lambda _msg: None)


@contextlib.contextmanager
def restored_active(url: str, kind: str):
    """Tests that swap models put the build's active one back."""
    with connect(url) as conn:
        before = active_id(conn, kind)
    try:
        yield before
    finally:
        with connect(url) as conn, conn.transaction():
            conn.execute("UPDATE reranker_models SET is_active = false WHERE kind = %s AND is_active", (kind,))
            if before is not None:
                conn.execute("UPDATE reranker_models SET is_active = true WHERE id = %s", (before,))


def test_build_trains_and_activates_the_feature_model_and_search_uses_it(full_db, engine):
    check = [e for e in full_db["full_result"].get_asset_check_evaluations() if e.check_name == "reranker_model_sound"]
    assert check and check[0].passed, check and check[0].metadata
    assert engine.reranker is not None and engine.reranker.kind == "features"
    with connect(full_db["url"]) as conn:
        assert active_id(conn, "features") == engine.reranker.model_id
        stored = conn.execute("SELECT features, seed, length(training_hash) FROM reranker_models WHERE id = %s",
                              (engine.reranker.model_id,)).fetchone()
    assert tuple(stored[0]) == FEATURES and stored[2] == 64
    changed = 0
    for q in ("I feel so alone since my wife died", "the promise to Abraham", "forgiving my brother"):
        on, off = engine.search(q, k=10), engine.search(q, k=10, rerank=False)
        assert on.results and off.results
        changed += [r.ref for r in on.results] != [r.ref for r in off.results]
    assert changed  # the model reorders, it is not the fused order under another name


def test_features_are_finite_and_pool_links_are_mutual(engine, pools):
    p = pools[0]
    X = compute(engine.pool_tables(), p.rq, p.cands)
    assert X.shape == (len(p.cands), len(FEATURES)) and np.isfinite(X).all()
    assert np.array_equal(X, p.X)  # the recorded training row is what serving computes
    links = X[:, FEATURES.index("xref_pool_links")]
    assert links.sum() % 2 == 0  # every link is counted at both of its ends


def test_labels_are_the_best_grade_a_candidate_covers(pools):
    p = next(p for p in pools if p.labels.max() > 0)
    c = p.cands[int(np.argmax(p.labels))]
    assert labels([c], [Passage(c.start, c.start, 2), Passage(c.end, c.end, 3)])[0] == 3
    assert labels([c], [Passage(c.end + 1, c.end + 1, 3)])[0] == 0 or c.level == "chapter"


def test_training_is_deterministic_for_a_seed(pools):
    train, valid = split(pools, share=0.25)
    a, info = train_features(train, valid, seed=3, rounds=40)
    b, _ = train_features(train, valid, seed=3, rounds=40)
    c, _ = train_features(train, valid, seed=4, rounds=40)
    assert a == b and info["train_queries"] > 0
    assert a != c  # bagging follows the seed


def test_an_ensemble_scores_the_mean_of_its_members_and_serves_from_one_row(full_db, engine, pools):
    """RerankConfig.ensemble: members trained on the same pools with consecutive seeds, one stored text, mean scores."""
    train, valid = split(pools, share=0.25)
    both, info = train_ensemble(train, valid, seed=3, members=2, rounds=40)
    a, _ = train_features(train, valid, seed=3, rounds=40)
    b, _ = train_features(train, valid, seed=4, rounds=40)
    assert both == BOOSTER_SEP.join([a, b]) and info["importance"]
    assert isinstance(info["rounds"], int) and len(info["member_rounds"]) == 2  # one metadata type whatever the size
    assert train_ensemble(train, valid, seed=3, members=1, rounds=40)[0] == a  # one member: the single model
    X = np.vstack([p.X for p in pools[:5]])
    one, two = (FeatureReranker(t, FEATURES, engine.pool_tables()).scores(X) for t in (a, b))
    assert not np.allclose(one, two)
    with restored_active(full_db["url"], "features"), connect(full_db["url"]) as conn:
        model_id = save_model(conn, "features", engine.space_id, both.encode(), FEATURES, "e" * 64, 3, {})
        served = activate(conn, model_id, engine.pool_tables())
        assert len(served.boosters) == 2 and np.allclose(served.scores(X), (one + two) / 2)


def test_pools_on_several_threads_are_the_pools_of_one(engine, pools):
    """query.batch runs the training queries on threads: the pools, their order, features and labels are what one
    caller builds."""
    queries = [p.query for p in pools[:40]]
    one, two = (collect(engine, queries, progress=lambda _msg: None, workers=w) for w in (1, 2))
    assert [p.query.text for p in one] == [p.query.text for p in two] == [q.text for q in queries]
    for a, b in zip(one, two):
        assert [c.key for c in a.cands] == [c.key for c in b.cands]
        assert np.array_equal(a.X, b.X) and np.array_equal(a.labels, b.labels)


def test_leakage_guard_drops_heldout_topics_and_near_duplicates(engine, heldout, pools):
    name = heldout[0]
    fake = [DevQuery(name.upper() + "!", split_key(name), "topic", ()),  # same key in other clothes
            DevQuery("walking humbly with god", "walk humbly god", "topic", ()),
            DevQuery("a near copy", "a near copy", "topic", ())]

    def encode(texts):  # "a near copy" lands on the held-out name; the others far away
        return np.array([[1.0, 0.0] if t in (name, "a near copy") else [0.0, 1.0] for t in texts])

    kept, report = leakage_guard(fake, [name], encode)
    assert [q.text for q in kept] == ["walking humbly with god"]
    assert report.same_key == [name.upper() + "!"] and report.near_duplicates[0][:2] == ("a near copy", name)
    keys = {split_key(h) for h in heldout}
    assert not [p.query.text for p in pools if split_key(p.query.text) in keys]  # the real guard, real queries


def test_a_feature_list_mismatch_is_refused(full_db, engine):
    with restored_active(full_db["url"], "features"), connect(full_db["url"]) as conn:
        text = engine.reranker.boosters[0].model_to_string()
        wrong = save_model(conn, "features", engine.space_id, text.encode(), list(reversed(FEATURES)), "x" * 64, 0, {})
        with pytest.raises(RerankerMismatch, match="materialize reranker_model"):
            activate(conn, wrong, engine.pool_tables())
        conn.execute("UPDATE reranker_models SET is_active = (id = %s) WHERE kind = 'features'", (wrong,))
        conn.commit()
        with pytest.raises(RerankerMismatch, match="trained on"):
            Engine(full_db["url"], llm=None)


def test_a_model_row_that_fails_to_load_leaves_the_previous_one_serving(full_db, engine):
    serving = engine.reranker.model_id
    with restored_active(full_db["url"], "features") as before, connect(full_db["url"]) as conn:
        assert before == serving
        bad = save_model(conn, "features", engine.space_id, b"tree\nnot a model", FEATURES, "y" * 64, 0, {})
        with pytest.raises(RerankerError):
            activate(conn, bad, engine.pool_tables())
        assert active_id(conn, "features") == serving
        conn.execute("UPDATE reranker_models SET is_active = (id = %s) WHERE kind = 'features'", (bad,))
        conn.commit()
        assert engine.refresh() is False and engine.reranker.model_id == serving
        assert engine.follower.error.startswith("Reranker")
        assert engine.search("I am afraid of the future").results


def test_cross_encoder_fine_tunes_deterministically_and_serves_from_the_table(full_db, engine, pools, tmp_path):
    from citebible_pipeline.embeddings.embedder import DEFAULT_MODEL, resolve_model_path
    from citebible_pipeline.query.rerank import CE_INPUTS, CrossEncoderReranker, pack_dir

    pairs = ce_pairs(engine, pools[:6], per_query=4, seed=1)
    assert pairs and all(0.0 <= y <= 1.0 for _, _, y in pairs) and any(y > 0 for _, _, y in pairs)
    base = resolve_model_path(DEFAULT_MODEL)
    a = train_cross_encoder(pairs, str(tmp_path / "a"), base, seed=1, batch_size=8, max_length=64)
    b = train_cross_encoder(pairs, str(tmp_path / "b"), base, seed=1, batch_size=8, max_length=64)
    probe = [t for _, t, _ in pairs[:4]]
    sa, sb = CrossEncoderReranker(a).scores("grief", probe), CrossEncoderReranker(b).scores("grief", probe)
    assert np.allclose(sa, sb, atol=1e-5)
    with restored_active(full_db["url"], "cross_encoder"), connect(full_db["url"]) as conn:
        model_id = save_model(conn, "cross_encoder", engine.space_id, pack_dir(a), CE_INPUTS, "z" * 64, 1, {})
        activate(conn, model_id, None)
        conn.commit()
        ce = Engine(full_db["url"], llm=None, reranker="cross_encoder")
        assert ce.reranker.kind == "cross_encoder" and ce.reranker.model_id == model_id
        calls, score = [], ce.reranker.scores
        ce.reranker.scores = lambda query, texts: calls.append(len(texts)) or score(query, texts)
        r = ce.search("my father died and I miss him", k=5)
        assert r.results and calls  # the stored cross-encoder served the search


def test_debiased_labels_demote_a_hub_and_keep_a_rare_passage():
    from citebible_pipeline.query.fuse import Candidate
    from citebible_pipeline.rerank.pools import Pool
    from citebible_pipeline.rerank.train import debias_labels

    hub, rare, miss = (23041010, 23041010), (19088001, 19088018), (1001001, 1001001)

    def pool(i):  # the hub is relevant (grade 3) in all 40 pools, the rare passage in one
        cands = [Candidate(*hub, "verse", 1.0), Candidate(*rare, "chapter", 0.5), Candidate(*miss, "verse", 0.1)]
        return Pool(DevQuery(f"q{i}", f"q{i}", "topic", ()), None, cands, np.zeros((3, 1)),
                    np.array([3, 3 if i == 0 else 0, 0], np.int32))

    pools = [pool(i) for i in range(40)]
    out = debias_labels(pools, cap=8)  # 40 > 8: log2(40 / 8) = 2.3 -> three grades down, floored at 1
    assert [int(x) for x in out[0].labels] == [1, 3, 0] and [int(x) for x in out[5].labels] == [1, 0, 0]
    assert [int(x) for x in debias_labels(pools, cap=64)[0].labels] == [3, 3, 0]  # under the cap: as voted
    assert [int(x) for x in debias_labels(pools, cap=0)[0].labels] == [3, 3, 0]
    assert [int(x) for x in pools[0].labels] == [3, 3, 0]  # the recorded pools are not changed


def test_debiased_labels_by_verse_count_a_famous_verse_in_any_cut():
    """debias_by_verse: 20 pools label Matthew 6:33 relevant, 20 others its whole chapter, each cut under the cap of 32
    by exact span; by verse both are the one hub of 40 pools (verse 33), so both lose a grade, while a verse outside the
    chapter (7:7, labelled in 20 pools) keeps its own count and grade."""
    from citebible_pipeline.query.fuse import Candidate
    from citebible_pipeline.rerank.pools import Pool
    from citebible_pipeline.rerank.train import debias_labels

    verse, chapter, prayer = (40006033, 40006033), (40006001, 40006034), (40007007, 40007007)

    def pool(i):
        cands = [Candidate(*verse, "verse", 1.0), Candidate(*chapter, "chapter", 0.5), Candidate(*prayer, "verse", 0.2)]
        return Pool(DevQuery(f"q{i}", f"q{i}", "topic", ()), None, cands, np.zeros((3, 1)),
                    np.array([3, 0, 2] if i < 20 else [0, 3, 0], np.int32))

    pools = [pool(i) for i in range(40)]
    assert [int(x) for x in debias_labels(pools, cap=32)[0].labels] == [3, 0, 2]  # by span: 20 each, under the cap
    by_verse = debias_labels(pools, cap=32, by_verse=True)
    assert [int(x) for x in by_verse[0].labels] == [2, 0, 2] and [int(x) for x in by_verse[25].labels] == [0, 2, 0]


def test_balanced_pastoral_weight_makes_the_cues_weigh_what_the_rest_weighs():
    from citebible_pipeline.rerank.pools import Pool
    from citebible_pipeline.rerank.train import pastoral_repeats

    def pool(kind, i):
        return Pool(DevQuery(f"{kind}{i}", f"{kind}{i}", kind, ()), None, [], np.zeros((0, 1)), np.zeros(0, np.int32))

    train = [pool("topic", i) for i in range(90)] + [pool("nave", i) for i in range(10)] + [pool("pastoral", i) for i in range(3)]
    assert pastoral_repeats(train, 0) == 33  # 100 other pools over 3 cues' pools, rounded
    assert pastoral_repeats(train, 5) == 5  # a set weight is kept as set
    assert pastoral_repeats(train[:100], 0) == 1  # no cue: nothing to weigh
    with pytest.raises(ValueError, match="pastoral_weight"):
        pastoral_repeats(train, -1)


def test_composite_sentences_join_a_cue_to_nouns_off_its_need_and_keep_its_grades():
    from citebible_pipeline.query.route import ThemeIndex
    from citebible_pipeline.rerank.pools import composite_queries

    def listed(*spans):
        return np.array([s for s, _ in spans]), np.array([e for _, e in spans]), np.ones(len(spans))

    need = listed((19088001, 19088018), (19042005, 19042005))
    topics = [listed((40027057, 40027061), (19088010, 19088010), (1, 1), (2, 2), (3, 3)),  # shares Psalm 88:10
              listed((20001001, 20001005), (1, 1), (2, 2), (3, 3), (4, 4)),
              listed((2020012, 2020012), (1, 1), (2, 2), (3, 3), (4, 4)),
              listed((19042001, 19042011), (1, 1), (2, 2), (3, 3), (4, 4)),  # covers Psalm 42:5
              listed((5, 5))]  # under 5 passages: not a topic query
    n = 1 + len(topics)
    idx = ThemeIndex(keys=[f"k{i}" for i in range(n)], kinds=["pastoral"] + ["topic"] * len(topics),
                     names=["lament", "Burial", "Proverbs", "Mothers", "Hope", "Rare"], rewrites=["r"] * n,
                     split_keys=[f"k{i}" for i in range(n)], cue_vectors=np.eye(n, dtype=np.float32),
                     cue_starts=np.arange(n), rewrite_vectors=np.eye(n, dtype=np.float32), passages=[need, *topics])
    gold = (Passage(19088001, 19088018, 3), Passage(19042005, 19042005, 2))
    cues = [DevQuery("i am angry at god", "pastoral:lament", "pastoral", gold),
            DevQuery("grief", "grief", "topic", (Passage(1, 1, 3),))]
    got = composite_queries(idx, cues, 3, seed=7)
    assert sorted(q.text for q in got) == ["i am angry at god, because of mothers", "i am angry at god, because of proverbs"]
    assert all(q.kind == "composite" and q.exclude == "pastoral:lament" and q.passages == gold for q in got)
    assert [q.text for q in composite_queries(idx, cues, 1, seed=7)][0] in {q.text for q in got}
    assert composite_queries(idx, cues[1:], 3, seed=7) == []  # topic names get none


def test_chapter_labels_drop_a_grade_for_whole_chapters_only():
    from citebible_pipeline.query.fuse import Candidate
    from citebible_pipeline.rerank.pools import Pool
    from citebible_pipeline.rerank.train import chapter_labels

    cands = [Candidate(40006033, 40006033, "verse", 1.0), Candidate(40006001, 40006034, "chapter", 0.9),
             Candidate(40006025, 40006034, "range", 0.8), Candidate(59005001, 59005020, "chapter", 0.7)]
    pools = [Pool(DevQuery("q", "q", "topic", ()), None, cands, np.zeros((4, 1)), np.array([3, 3, 2, 1], np.int32))]
    assert [int(x) for x in chapter_labels(pools, 1)[0].labels] == [3, 2, 2, 0]  # a chapter one grade down, never below 0
    assert [int(x) for x in chapter_labels(pools, 0)[0].labels] == [3, 3, 2, 1]  # off: as covered
    assert [int(x) for x in pools[0].labels] == [3, 3, 2, 1]  # the recorded pools are not changed
    # by share: Matthew 6:25-34 voted (grade 3) covers 10 of the chapter's 34 verses -> ceil(3 * 10 / 34) = 1; a vote
    # for the whole of James 5 keeps its grade
    voted = (Passage(40006025, 40006034, 3), Passage(59005001, 59005020, 1))
    shared = [Pool(DevQuery("q", "q", "topic", voted), None, cands, np.zeros((4, 1)), np.array([3, 3, 2, 1], np.int32))]
    assert [int(x) for x in chapter_labels(shared, 0, by_share=True)[0].labels] == [3, 1, 2, 1]


def test_nave_and_composite_training_queries_follow_the_rules_and_read_no_held_out_key_of_either_source(full_db, engine):
    from citebible_pipeline.gold.access import training_nave_passages
    from citebible_pipeline.gold.nave_set import web_name_words
    from citebible_pipeline.rerank.pools import nave_queries

    with connect(full_db["url"]) as conn:
        nave = nave_queries(training_nave_passages(conn), web_name_words(conn))
        heldout = [q.text for s in ("heldout_topics", "nave_heldout") for q in eval_queries(conn, s)]
    assert nave and all(q.kind == "nave" and len(q.passages) >= 3 for q in nave)
    assert {p.grade for q in nave for p in q.passages} == {2}  # a Nave's listing: half a top-voted passage
    kept, report = training_queries(engine, heldout, topics=40, seed=5, nave=nave, composites=1)
    keys = {split_key(h) for h in heldout}
    assert any(q.kind == "nave" for q in kept)
    cues = {q.text: q for q in kept if q.kind == "pastoral"}
    mixed = [q for q in kept if q.kind == "composite"]  # the composite sentences pass the same guard
    assert mixed and all(cues[q.text.split(", because of ")[0]].passages == q.passages for q in mixed)
    assert not [q.text for q in kept if split_key(q.text) in keys or q.exclude in keys]
    assert report.checked == len(kept) + report.dropped and report.checked > len(nave)  # the guard saw every one


def test_seeds_retrain_one_model_per_seed_in_memory_and_read_their_mean(full_db, engine):
    """`citebible seeds` (rule D as a tool): the asset's own training under each seed, nothing stored, and the mean row
    per set is the seeds' mean of each measure."""
    from citebible_pipeline.bible.references import parse_reference
    from citebible_pipeline.rerank.assets import RerankConfig
    from citebible_pipeline.rerank.seeds import (mean_row, seed_answers, seed_model_sets, seed_models, seed_rows,
                                                 serving_options, training_settings)
    from citebible_pipeline.retrieval.baselines import RetrievalContext

    sets = ("dev_sentences", "heldout_topics")
    with connect(full_db["url"]) as conn:
        with pytest.raises(ValueError, match="distinct"):
            seed_models(engine, conn, (3, 3), RerankConfig())
        before = active_id(conn, "features")
        # training arms fit on the same pools (`--train`): one at the defaults reproduces the default to the bit, so any
        # difference a training setting makes is its own; linear gains fit another model
        arms = seed_model_sets(engine, conn, (3, 4), {"": RerankConfig(), " same": training_settings(["debias_cap=32"]),
                                                      " linear": training_settings(["label_gain=[0,1,2,3]"])},
                               topics=60, progress=lambda _m: None)
        models = arms[""]
        ctx = RetrievalContext(conn, engine.embedder)
        rows = seed_rows(ctx, engine, models, limit=12, query_sets=sets)
        # the same models read again under serving options (`--serve`): an option already at its default reads alike, so
        # any difference a serving option makes is its own, not the read's
        again = seed_rows(ctx, engine, models, limit=12, query_sets=sets, options=serving_options(["diversify=false"]),
                          label=" diversify=false")
        assert active_id(conn, "features") == before  # nothing stored, nothing activated
    assert [r.variant for r in again] == [r.variant + " diversify=false" for r in rows]
    assert [(r.ndcg_10, r.hit_5, r.top_passage_share) for r in again] == [(r.ndcg_10, r.hit_5, r.top_passage_share) for r in rows]
    assert sorted(models) == [3, 4]
    text = {(arm, s): [b.model_to_string() for b in m.boosters] for arm, ms in arms.items() for s, m in ms.items()}
    assert text[("", 3)] != text[("", 4)]
    assert all(text[(" same", s)] == text[("", s)] for s in (3, 4))
    assert any(text[(" linear", s)] != text[("", s)] for s in (3, 4))
    assert [(r.query_set, r.variant) for r in rows] == [(qs, v) for qs in sets for v in ("seed 3", "seed 4")] + [
        (qs, "mean") for qs in sets]
    for qs in sets:
        per_seed = [r for r in rows if r.query_set == qs and r.variant != "mean"]
        mean = next(r for r in rows if r.query_set == qs and r.variant == "mean")
        assert all(0.0 <= r.ndcg_10 <= 1.0 and 0.0 <= r.hit_5 <= 1.0 for r in per_seed) and mean.queries == 12
        assert mean.ndcg_10 == pytest.approx(sum(r.ndcg_10 for r in per_seed) / 2, abs=1e-4)
        assert mean.hit_5 == pytest.approx(sum(r.hit_5 for r in per_seed) / 2, abs=1e-4)
    assert rows[0].top_passage_share is not None and rows[-1].abstention_accuracy is None  # held-out sets score none
    with pytest.raises(ValueError, match="one query set"):
        mean_row(rows[:3])
    answers = seed_answers(engine, models, "My mother is dying and I'm angry at God")
    assert sorted(answers) == [3, 4] and all(len(refs) == 5 for refs in answers.values())
    assert all(parse_reference(ref) for refs in answers.values() for ref in refs)  # real, addressable passages


def test_serving_options_read_key_value_pairs_over_the_served_defaults_and_name_what_they_refuse():
    """`citebible seeds --serve`: values read as JSON where they parse, else as text; a key that is not a search option,
    a pair without "=", or a value the option refuses is a ValueError naming it (the CLI prints it and exits 2)."""
    from citebible_pipeline.rerank.seeds import serving_options

    o = serving_options(["complaint=false", "need_order=weight", "pool=40"])
    assert o.complaint is False and o.need_order == "weight" and o.pool == 40 and o.blend  # the rest stay served defaults
    for bad, named in ((["nope=1"], "'nope=1'"), (["complaint"], "'complaint'"), (["need_order=zzz"], "need_order"),
                       (["pool=abc"], "pool")):
        with pytest.raises(ValueError, match=named):
            serving_options(bad)


def test_training_settings_read_key_value_pairs_over_the_training_defaults_and_name_what_they_refuse():
    """`citebible seeds --train`: only the settings that change how recorded pools are fit; a setting that changes the
    pools (topics, composites) or the seed, a pair without "=", or a value refused is a ValueError naming it."""
    from citebible_pipeline.rerank.seeds import training_settings

    c = training_settings(["label_gain=[0,1,2,3]", "debias_cap=64", "chapter_label_share=true"])
    assert c.label_gain == [0, 1, 2, 3] and c.debias_cap == 64 and c.chapter_label_share and c.pastoral_weight == 5
    for bad, named in ((["seed=3"], "'seed=3'"), (["composites=3"], "'composites=3'"), (["debias_cap"], "'debias_cap'"),
                       (["ensemble=two"], "ensemble"), (["label_gain=[0,1,2]"], "label_gain"),
                       (["label_gain=[0,-1,2,3]"], "label_gain")):
        with pytest.raises(ValueError, match=named):
            training_settings(bad)
