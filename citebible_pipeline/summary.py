"""The end of `make run`: what each table holds, the latest evaluation, and a sample answer."""

from __future__ import annotations

from psycopg import sql

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db import connect
from citebible_pipeline.gold.access import QUERY_SETS
from citebible_pipeline.retrieval.pipeline import VARIANT_ORDER

TABLES = (
    "books", "verses", "chapters", "verse_genres", "genre_boosts", "passage_embeddings", "cross_references",
    "topics", "topic_verses", "nave_topics", "nave_passages", "nave_links", "gold_queries", "gold_passages", "query_themes", "theme_passages", "abstention_floors",
    "reranker_models", "eval_results",
)
SAMPLE_QUERY = "My mother is dying and I'm angry at God"


def table_counts(conn) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for t in TABLES:
        exists = conn.execute("SELECT to_regclass(%s)", (t,)).fetchone()[0]
        out[t] = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(t))).fetchone()[0] if exists else None
    return out


def print_summary() -> int:
    with connect() as conn:
        counts = table_counts(conn)
        print("CiteBible build summary")
        for t, n in counts.items():
            print(f"  {t:<20} {'(missing)' if n is None else f'{n:,} rows'}")
        latest = conn.execute(
            "SELECT variant, query_set, queries, recall_50, ndcg_10, hit_5, harm_5, abstention_accuracy, top_passage_share,"
            " distinct_per_100 FROM eval_results"
            " WHERE run_id = (SELECT run_id FROM eval_results ORDER BY run_at DESC LIMIT 1)"
            " ORDER BY array_position(%s, query_set), array_position(%s, variant), variant",
            (list(QUERY_SETS), list(VARIANT_ORDER)),
        ).fetchall() if counts.get("eval_results") else []
        if latest:
            print("\nLatest retrieval_eval (ablation rows on a fixed sample of held-out queries, see n; top share and"
                  " distinct/100: concentration of the top-5 answers; harm@5: pastoral answers showing a passage judged"
                  " to wound that reader):")
            print(f"  {'variant':<13}{'query set':<18}{'n':>5}{'recall@50':>11}{'nDCG@10':>9}{'hit@5':>7}{'harm@5':>8}{'abstain ok':>12}"
                  f"{'top share':>11}{'distinct/100':>14}")
            for v, qs, n, *m in latest:
                cells = "".join(f"{'-' if x is None else (f'{x:.1f}' if w == 14 else f'{x:.3f}'):>{w}}"
                                for x, w in zip(m, (11, 9, 7, 8, 12, 11, 14)))
                print(f"  {v:<13}{qs:<18}{n:>5}{cells}")
        row = conn.execute("SELECT ref, text FROM verses WHERE translation = %s AND id = 19034018",
                           (DEFAULT_TRANSLATION,)).fetchone()
        if row:
            print(f"\nLookup: {row[0]} — {row[1]}")
    if counts.get("abstention_floors"):
        from citebible_pipeline.query import Engine
        from citebible_pipeline.render import render_text

        print("\nAsk (the full pipeline, as `citebible ask`):")
        print(render_text(Engine(llm=None).search(SAMPLE_QUERY)))
    return 0 if all(counts.values()) else 1
