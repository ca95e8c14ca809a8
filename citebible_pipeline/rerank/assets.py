"""Dagster wiring of the learned precision stage: the feature model (in `make run`) and the fine-tuned
cross-encoder (outside its default selection), both trained on training-side pools only."""

import tempfile
import time

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from citebible_pipeline.embeddings.assets import EmbedderResource, passage_embeddings
from citebible_pipeline.gold.access import heldout_texts
from citebible_pipeline.gold.assets import gold_set
from citebible_pipeline.gold.split import split_key
from citebible_pipeline.metadata import md_table
from citebible_pipeline.resources import PostgresResource
from citebible_pipeline.themes.assets import query_themes
from citebible_pipeline.partitions import default_translation




class RerankConfig(Config):
    topics: int = 0  # training-side topic queries sampled (0: every topic with 5+ voted passages); every pastoral cue joins
    seed: int = 7
    # pastoral-cue pools repeated in training: 137 cues beside ~4,000 topic names. Set by hand, measured since (dev, four
    # seeds): dev nDCG@10 0.348 at 5, 0.335 at 1 (two seeds) and 0.335 at 0, as many times as makes the cues weigh what
    # the other queries weigh (rerank.train.pastoral_repeats, 36x; README "Thirteenth step")
    pastoral_weight: int = 5
    # Dev measurement (issue 22 probe, the 90 dev sentences / 300 Nave's / 300 held-out topics, caps 8 and 32 fixed
    # before measuring): cap 32 moved dev hit@5 0.489 -> 0.544, top-passage share 0.352 -> 0.239, Nave's nDCG@10
    # 0.162 -> 0.165, held-out topics 0.416 -> 0.407; cap 8 lost more on the votes (0.399). 0: labels as voted.
    debias_cap: int = 32


class CrossEncoderConfig(Config):
    topics: int = 600  # sized for 2 CPU cores; CUDA is used when present
    seed: int = 7
    pairs_per_query: int = 8
    epochs: int = 1
    batch_size: int = 16
    max_length: int = 128  # a query and 3 verses; 256 doubles the cost of every pair


def _pools(context: AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource, topics: int, seed: int):
    from citebible_pipeline.query.engine import Engine
    from citebible_pipeline.rerank.pools import collect, training_queries
    from citebible_pipeline.rerank.train import split

    engine = Engine(postgres.resolved_url(), embedder=embedder.get(), llm=None, reranker=None)
    with postgres.connect() as conn:
        heldout = heldout_texts(conn)
    queries, leak = training_queries(engine, heldout, topics or 1_000_000, seed)
    context.log.info(f"{len(queries):,} training queries ({sum(q.kind == 'pastoral' for q in queries):,} pastoral cues);"
                     f" leakage guard dropped {len(leak.same_key)} held-out keys and {len(leak.near_duplicates)} near duplicates")
    pools = collect(engine, queries, progress=context.log.info)
    train, valid = split(pools)
    return engine, queries, leak, train, valid


def _leak_meta(leak) -> dict:
    return {"leakage_checked": leak.checked, "leakage_dropped_same_key": len(leak.same_key),
            "leakage_dropped_near_duplicates": MetadataValue.md(md_table(
                ("training query", "held-out topic", "cosine"), leak.near_duplicates or [("-", "-", "-")]))}


def _validate(engine, valid, model, name: str) -> dict:
    """nDCG@10 / hit@5 of the fused order and of the model, per kind of validation query."""
    from citebible_pipeline.rerank.train import quality

    rows = {}
    for kind in ("topic", "pastoral"):
        part = [p for p in valid if p.query.kind == kind]
        rows[(kind, "fused (no rerank)")] = quality(engine, part, None)
        rows[(kind, name)] = quality(engine, part, model)
        if kind == "pastoral":  # the served order blends (query.rerank.apply); the model's own order beside it
            rows[(kind, f"{name}, not blended")] = quality(engine, part, model, blend=False)
    return rows


def _quality_meta(rows: dict) -> MetadataValue:
    return MetadataValue.md(md_table(("validation set", "ranking", "queries", "nDCG@10", "hit@5"),
                                     ((s, r, m["queries"], m["ndcg_10"], m["hit_5"]) for (s, r), m in rows.items())))


@asset(
    deps=[gold_set, default_translation(passage_embeddings), query_themes],
    group_name="rerank",
    kinds={"postgres", "lightgbm"},
    code_version="7",
    description="LightGBM lambdarank over the query module's pool features, trained on training-side topic names "
    "and pastoral cues (each with its own theme left out of routing), graded by "
    "OpenBible votes with the hubs' grades debiased (debias_cap) and by Nave's listings; stored in "
    "reranker_models and activated in one transaction when it loads.",
)
def reranker_model(context: AssetExecutionContext, config: RerankConfig, postgres: PostgresResource,
                   embedder: EmbedderResource) -> MaterializeResult:
    from citebible_pipeline.query.features import FEATURES
    from citebible_pipeline.rerank.store import activate, save_model
    from citebible_pipeline.rerank.train import feature_reranker, fit, training_hash

    started = time.perf_counter()
    engine, queries, leak, train, valid = _pools(context, postgres, embedder, config.topics, config.seed)
    text, info, train, valid = fit(train, valid, config.seed, config)
    context.log.info(f"pastoral-cue pools weigh {info.pop('pastoral_repeats')}x in training")
    rows = _validate(engine, valid, feature_reranker(engine, text), "feature model")
    settings = {"topics": config.topics, "pastoral_weight": config.pastoral_weight, "debias_cap": config.debias_cap,
                "features": list(FEATURES)}
    metrics = {**info, "seed": config.seed, "validation": {f"{k}/{r}": m for (k, r), m in rows.items()},
               "training_queries": sorted({p.query.text for p in train}), "leakage_dropped": leak.dropped}
    with postgres.connect() as conn:
        model_id = save_model(conn, "features", engine.space_id, text.encode(), FEATURES,
                              training_hash(train, settings), config.seed, metrics)
        activate(conn, model_id, engine.pool_tables())
    context.log.info(f"reranker model {model_id} active: {rows}")
    return MaterializeResult(metadata={
        "model_id": model_id, "train_queries": info["train_queries"], "valid_queries": len(valid),
        "rounds": info["rounds"],
        "validation": _quality_meta(rows), "debias_cap": config.debias_cap,
        "valid_topic_ndcg_10_gain": round(rows[("topic", "feature model")]["ndcg_10"] - rows[("topic", "fused (no rerank)")]["ndcg_10"], 4),
        "importance": MetadataValue.json(info["importance"]), **_leak_meta(leak),
        "seconds": round(time.perf_counter() - started, 1),
    })


@asset_check(asset=reranker_model, description="The active feature model matches this code's feature list, none of "
             "its training queries shares a split key with a held-out topic or Nave's entry, and it beats the fused order on validation.")
def reranker_model_sound(postgres: PostgresResource) -> AssetCheckResult:
    from citebible_pipeline.query.features import FEATURES

    with postgres.connect() as conn:
        row = conn.execute("SELECT id, features, metrics FROM reranker_models WHERE kind = 'features' AND is_active").fetchone()
        heldout = {split_key(t) for t in heldout_texts(conn)}
    if row is None:
        return AssetCheckResult(passed=False, metadata={"error": "no active feature model"})
    model_id, features, metrics = row
    leaked = sorted(t for t in metrics.get("training_queries", []) if split_key(t) in heldout)
    v = metrics.get("validation", {})
    gain = v.get("topic/feature model", {}).get("ndcg_10", 0) - v.get("topic/fused (no rerank)", {}).get("ndcg_10", 0)
    return AssetCheckResult(passed=tuple(features) == FEATURES and not leaked and gain > 0, metadata={
        "model_id": model_id, "features_match_code": tuple(features) == FEATURES, "heldout_keys_in_training": len(leaked),
        "leaked_examples": MetadataValue.json(leaked[:10]), "valid_topic_ndcg_10_gain": round(gain, 4)})


@asset(
    deps=[gold_set, default_translation(passage_embeddings), query_themes],
    group_name="rerank",
    kinds={"postgres", "pytorch"},
    code_version="1",
    description="A cross-encoder fine-tuned from the offline MiniLM weights on (query, passage) pairs from the same "
    "training pools (graded positives, hard negatives). Outside `make run`'s default selection (minutes on 2 cores).",
)
def reranker_cross_encoder(context: AssetExecutionContext, config: CrossEncoderConfig, postgres: PostgresResource,
                           embedder: EmbedderResource) -> MaterializeResult:
    from citebible_pipeline.embeddings.embedder import resolve_model_path
    from citebible_pipeline.query.rerank import CE_INPUTS, CrossEncoderReranker, pack_dir
    from citebible_pipeline.rerank.store import activate, save_model
    from citebible_pipeline.rerank.train import ce_pairs, train_cross_encoder, training_hash

    started = time.perf_counter()
    engine, queries, leak, train, valid = _pools(context, postgres, embedder, config.topics, config.seed)
    pairs = ce_pairs(engine, train, config.pairs_per_query, config.seed)
    context.log.info(f"fine-tuning on {len(pairs):,} pairs from {len(train):,} queries")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        train_cross_encoder(pairs, tmp, resolve_model_path(embedder.model), config.seed, epochs=config.epochs,
                            batch_size=config.batch_size, max_length=config.max_length)
        train_seconds = time.perf_counter() - t0
        rows = _validate(engine, valid, CrossEncoderReranker(tmp), "cross-encoder")
        blob = pack_dir(tmp)
    settings = {k: getattr(config, k) for k in ("topics", "pairs_per_query", "epochs", "batch_size", "max_length")}
    metrics = {"pairs": len(pairs), "train_seconds": round(train_seconds, 1), "seed": config.seed,
               "validation": {f"{k}/{r}": m for (k, r), m in rows.items()},
               "training_queries": sorted({p.query.text for p in train}), "leakage_dropped": leak.dropped}
    with postgres.connect() as conn:
        model_id = save_model(conn, "cross_encoder", engine.space_id, blob, CE_INPUTS, training_hash(train, settings),
                              config.seed, metrics)
        activate(conn, model_id, None)
    return MaterializeResult(metadata={
        "model_id": model_id, "pairs": len(pairs), "train_seconds": round(train_seconds, 1), "megabytes": round(len(blob) / 2**20, 1),
        "validation": _quality_meta(rows), **_leak_meta(leak), "seconds": round(time.perf_counter() - started, 1),
    })


rerank_assets = [reranker_model, reranker_cross_encoder]
rerank_checks = [reranker_model_sound]
