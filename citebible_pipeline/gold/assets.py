"""Dagster wiring: the gold set and the retrieval evaluation recorded on every build."""

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.embeddings.assets import EmbedderResource, passage_embeddings
from citebible_pipeline.gold.build import build_gold
from citebible_pipeline.gold.evaluate import ABLATION_SAMPLE, METRICS, evaluate_all, format_table, record
from citebible_pipeline.metadata import md_table
from citebible_pipeline.openbible.assets import topic_verses
from citebible_pipeline.resources import PostgresResource
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.retrieval.baselines import RetrievalContext
from citebible_pipeline.partitions import default_translation


@asset(
    deps=[topic_verses, "nave_topics", "nave_passages"],
    group_name="gold",
    kinds={"postgres"},
    code_version="2",
    description="Gold queries with graded passages: OpenBible topics and Nave's sub-entries (each held out ~20 % "
    "by a hash of the near-duplicate key; training for anything that ranks), the curated pastoral/study/"
    "off-topic set and the development reader sentences.",
)
def gold_set(context: AssetExecutionContext, postgres: PostgresResource) -> MaterializeResult:
    with postgres.connect() as conn:
        stats = build_gold(conn)
        kinds = conn.execute("SELECT source, kind, split, count(*) FROM gold_queries GROUP BY 1, 2, 3 ORDER BY 1, 2, 3").fetchall()
        sample = conn.execute("SELECT query FROM gold_queries WHERE source = 'openbible' AND split = 'heldout'"
                              " ORDER BY md5(query) LIMIT 12").fetchall()
    context.log.info(f"{stats.gold_topics:,} topic queries ({stats.gold_heldout:,} held out), {stats.nave_queries:,} "
                     f"Nave's queries ({stats.nave_heldout:,} held out), {stats.curated} curated, "
                     f"{stats.dev_sentences} dev sentences, {stats.dev_harm} harm sentences ({stats.wounds} wounds judged)")
    return MaterializeResult(metadata={
        "nave_sub_entries": stats.nave_entries, "nave_queries": stats.nave_queries,
        "nave_queries_heldout": stats.nave_heldout, "dev_sentences": stats.dev_sentences, "dev_harm": stats.dev_harm,
        "wounds_judged": stats.wounds,
        "topics": stats.topics, "topics_heldout": stats.heldout_topics, "gold_topic_queries": stats.gold_topics,
        "gold_topic_queries_heldout": stats.gold_heldout, "curated_queries": stats.curated, "passages": stats.passages,
        "by_kind": MetadataValue.md(md_table(("source", "kind", "split", "queries"), kinds)),
        "heldout_sample": MetadataValue.json([r[0] for r in sample]),
    })


@asset_check(asset=gold_set, blocking=True, description="About 20 % held out in each source; no near-duplicate key on "
             "both sides; >= 40 curated queries, >= 80 dev sentences and >= 100 harm sentences; every passage and wound resolves.")
def gold_set_split_sound(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        share = conn.execute("SELECT avg((split = 'heldout')::int) FROM gold_queries WHERE source = 'openbible'").fetchone()[0]
        straddling = conn.execute("SELECT count(*) FROM (SELECT split_key FROM topic_splits GROUP BY split_key"
                                  " HAVING count(DISTINCT split) > 1) x").fetchone()[0]
        nave_share = conn.execute("SELECT avg((split = 'heldout')::int) FROM gold_queries WHERE source = 'naves'").fetchone()[0]
        straddling += conn.execute("SELECT count(*) FROM (SELECT split_key FROM (SELECT split_key, split FROM topic_splits"
                                   " UNION ALL SELECT split_key, split FROM nave_splits) k GROUP BY split_key"
                                   " HAVING count(DISTINCT split) > 1) x").fetchone()[0]
        curated = conn.execute("SELECT count(*) FROM gold_queries WHERE source = 'curated'").fetchone()[0]
        dev = conn.execute("SELECT count(*) FROM gold_queries WHERE source = 'dev'").fetchone()[0]
        harm = conn.execute("SELECT count(*) FROM gold_queries WHERE source = 'dev_harm'").fetchone()[0]
        unresolved_wounds = conn.execute(
            "SELECT count(*) FROM gold_wounds w WHERE NOT EXISTS (SELECT 1 FROM verses v WHERE v.translation = %s"
            " AND v.id = w.start_id) OR NOT EXISTS (SELECT 1 FROM verses v WHERE v.translation = %s AND v.id = w.end_id)",
            (DEFAULT_TRANSLATION, DEFAULT_TRANSLATION)).fetchone()[0]
        unresolved = conn.execute("SELECT count(*) FROM gold_passages p WHERE NOT EXISTS (SELECT 1 FROM verses v WHERE v.translation = %s"
                                  " AND v.id = p.start_id) OR NOT EXISTS (SELECT 1 FROM verses v WHERE v.translation = %s"
                                  " AND v.id = p.end_id)", (DEFAULT_TRANSLATION, DEFAULT_TRANSLATION)).fetchone()[0]
    share, nave_share = float(share or 0), float(nave_share or 0)
    return AssetCheckResult(passed=0.15 <= share <= 0.25 and 0.15 <= nave_share <= 0.25 and straddling == 0
                            and curated >= 40 and dev >= 80 and harm >= 100 and unresolved == 0 and unresolved_wounds == 0,
                            metadata={"heldout_share": share, "nave_heldout_share": nave_share,
                                      "keys_on_both_sides": straddling, "curated": curated, "dev_sentences": dev,
                                      "dev_harm": harm, "unresolved_passages": unresolved,
                                      "unresolved_wounds": unresolved_wounds})


class EvalConfig(Config):
    limit_per_set: int = 0  # 0: every query
    ablation_sample: int = ABLATION_SAMPLE  # held-out topics for the ablation rows; 0: all of them


@asset(
    deps=[gold_set, default_translation(passage_embeddings), "abstention_floor", "reranker_model", "passage_voice"],  # by key: those modules import gold_set
    group_name="gold",
    kinds={"postgres"},
    code_version="4",
    description="Recall@50, nDCG@10, MRR@10, hit@5, abstention accuracy and concentration of every registered "
    "retrieval variant on the held-out OpenBible topics and Nave's entries, the curated set and the dev "
    "sentences, measured in one run.",
)
def retrieval_eval(context: AssetExecutionContext, config: EvalConfig, postgres: PostgresResource,
                   embedder: EmbedderResource) -> MaterializeResult:
    with postgres.connect() as conn:
        emb = embedder.get()
        engine = Engine(postgres.resolved_url(), embedder=emb, llm=None)
        ctx = RetrievalContext(conn, emb)
        rows = evaluate_all(ctx, engine, limit=config.limit_per_set or None, ablation_limit=config.ablation_sample or None)
        run_id = record(conn, rows)
    table = format_table(rows)
    context.log.info("\n" + table)
    meta = {"run_id": run_id, "table": MetadataValue.md(md_table(
        ("variant", "query set", "n", *METRICS),
        ((r.variant, r.query_set, r.queries, *("-" if getattr(r, m) is None else getattr(r, m) for m in METRICS)) for r in rows)))}
    for r in rows:
        for m in ("recall_50", "ndcg_10", "hit_5", "harm_5", "top_passage_share", "distinct_per_100"):
            if getattr(r, m) is not None:
                meta[f"{r.variant}.{r.query_set}.{m}"] = getattr(r, m)
    return MaterializeResult(metadata=meta)


gold_assets = [gold_set, retrieval_eval]
gold_checks = [gold_set_split_sound]
