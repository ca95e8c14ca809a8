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
from citebible_pipeline.query.rerank import RerankerError, RerankerMismatch
from citebible_pipeline.query.variant import Variant
from citebible_pipeline.rerank.pools import collect, labels, leakage_guard, training_queries
from citebible_pipeline.rerank.store import activate, active_id, save_model
from citebible_pipeline.rerank.train import ce_pairs, split, train_cross_encoder, train_features
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
        on, off = engine.rank(q).candidates[:10], engine.rank(q, None, Variant(rerank=False)).candidates[:10]
        assert on and off
        changed += [c.key for c in on] != [c.key for c in off]
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
        text = engine.reranker.booster.model_to_string()
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


def test_debiased_labels_count_a_passage_by_its_exact_span():
    """20 pools label Matthew 6:33 relevant, 20 others its whole chapter: each span is counted on its own, under the cap
    of 32, so both keep their grade, as does a verse outside the chapter (7:7, labelled in 20 pools)."""
    from citebible_pipeline.query.fuse import Candidate
    from citebible_pipeline.rerank.pools import Pool
    from citebible_pipeline.rerank.train import debias_labels

    verse, chapter, prayer = (40006033, 40006033), (40006001, 40006034), (40007007, 40007007)

    def pool(i):
        cands = [Candidate(*verse, "verse", 1.0), Candidate(*chapter, "chapter", 0.5), Candidate(*prayer, "verse", 0.2)]
        return Pool(DevQuery(f"q{i}", f"q{i}", "topic", ()), None, cands, np.zeros((3, 1)),
                    np.array([3, 0, 2] if i < 20 else [0, 3, 0], np.int32))

    pools = [pool(i) for i in range(40)]
    out = debias_labels(pools, cap=32)
    assert [int(x) for x in out[0].labels] == [3, 0, 2] and [int(x) for x in out[25].labels] == [0, 3, 0]  # 20 each


def test_balanced_pastoral_weight_makes_the_cues_weigh_what_the_rest_weighs():
    from citebible_pipeline.rerank.pools import Pool
    from citebible_pipeline.rerank.train import pastoral_repeats

    def pool(kind, i):
        return Pool(DevQuery(f"{kind}{i}", f"{kind}{i}", kind, ()), None, [], np.zeros((0, 1)), np.zeros(0, np.int32))

    train = [pool("topic", i) for i in range(100)] + [pool("pastoral", i) for i in range(3)]
    assert pastoral_repeats(train, 0) == 33  # 100 other pools over 3 cues' pools, rounded
    assert pastoral_repeats(train, 5) == 5  # a set weight is kept as set
    assert pastoral_repeats(train[:100], 0) == 1  # no cue: nothing to weigh
    with pytest.raises(ValueError, match="pastoral_weight"):
        pastoral_repeats(train, -1)


def test_training_queries_read_no_held_out_key_of_either_source(full_db, engine):
    with connect(full_db["url"]) as conn:
        heldout = [q.text for s in ("heldout_topics", "nave_heldout") for q in eval_queries(conn, s)]
    kept, report = training_queries(engine, heldout, topics=40, seed=5)
    keys = {split_key(h) for h in heldout}
    assert not [q.text for q in kept if split_key(q.text) in keys or q.exclude in keys]
    assert report.checked == len(kept) + report.dropped  # the guard saw every one


def test_seeds_retrain_one_model_per_seed_in_memory_and_read_their_mean(full_db, engine):
    """`citebible seeds` (rule D as a tool): the asset's own training under each seed, nothing stored, and the mean row
    per set is the seeds' mean of each measure."""
    from citebible_pipeline.bible.references import parse_reference
    from citebible_pipeline.rerank.assets import RerankConfig
    from citebible_pipeline.rerank.seeds import (mean_row, seed_answers, seed_model_sets, seed_models, seed_rows,
                                                 serving_variant, training_settings)
    from citebible_pipeline.retrieval.baselines import RetrievalContext

    sets = ("dev_sentences", "heldout_topics")
    with connect(full_db["url"]) as conn:
        with pytest.raises(ValueError, match="distinct"):
            seed_models(engine, conn, (3, 3), RerankConfig())
        before = active_id(conn, "features")
        # training arms fit on the same pools (`--train`): one at the defaults reproduces the default to the bit, so any
        # difference a training setting makes is its own; the cues' pools weighed once fit another model
        arms = seed_model_sets(engine, conn, (3, 4), {"": RerankConfig(), " same": training_settings(["debias_cap=32"]),
                                                      " once": training_settings(["pastoral_weight=1"])},
                               topics=60, progress=lambda _m: None)
        models = arms[""]
        ctx = RetrievalContext(conn, engine.embedder)
        rows = seed_rows(ctx, engine, models, limit=12, query_sets=sets)
        # the same models read again with stage switches (`--serve`): a switch already at its default reads alike, so
        # any difference a switch makes is its own, not the read's
        again = seed_rows(ctx, engine, models, limit=12, query_sets=sets, stages=serving_variant(["slots=true"]),
                          label=" slots=true")
        assert active_id(conn, "features") == before  # nothing stored, nothing activated
    assert [r.variant for r in again] == [r.variant + " slots=true" for r in rows]
    assert [(r.ndcg_10, r.hit_5, r.top_passage_share) for r in again] == [(r.ndcg_10, r.hit_5, r.top_passage_share) for r in rows]
    assert sorted(models) == [3, 4]
    text = {(arm, s): m.booster.model_to_string() for arm, ms in arms.items() for s, m in ms.items()}
    assert text[("", 3)] != text[("", 4)]
    assert all(text[(" same", s)] == text[("", s)] for s in (3, 4))
    assert any(text[(" once", s)] != text[("", s)] for s in (3, 4))
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


def test_serving_variant_reads_stage_switches_over_the_served_pipeline_and_names_what_it_refuses():
    """`citebible seeds --serve`: values read as JSON; a key that is not a stage switch, a pair without "=", or a value
    that is not a boolean is a ValueError naming it (the CLI prints it and exits 2)."""
    from citebible_pipeline.rerank.seeds import serving_variant

    v = serving_variant(["blend=false", "slots=false"])
    assert v.blend is False and v.slots is False and v.rerank and v.prior  # the rest stay served
    for bad, named in ((["nope=1"], "'nope=1'"), (["blend"], "'blend'"), (["blend=zzz"], "blend"), (["pool=40"], "pool")):
        with pytest.raises(ValueError, match=named):
            serving_variant(bad)


def test_training_settings_read_key_value_pairs_over_the_training_defaults_and_name_what_they_refuse():
    """`citebible seeds --train`: only the settings that change how recorded pools are fit; a setting that changes the
    pools (topics) or the seed, a pair without "=", or a value refused is a ValueError naming it."""
    from citebible_pipeline.rerank.seeds import training_settings

    c = training_settings(["debias_cap=64"])
    assert c.debias_cap == 64 and c.pastoral_weight == 5 and c.topics == 0 and c.seed == 7  # the rest stay defaults
    assert training_settings(["pastoral_weight=0", "debias_cap=0"]).pastoral_weight == 0
    for bad, named in ((["seed=3"], "'seed=3'"), (["topics=3"], "'topics=3'"), (["debias_cap"], "'debias_cap'"),
                       (["debias_cap=two"], "debias_cap"), (["pastoral_weight=[1]"], "pastoral_weight")):
        with pytest.raises(ValueError, match=named):
            training_settings(bad)
