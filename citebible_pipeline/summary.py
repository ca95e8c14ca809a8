"""The end of `make run`: what each table holds, the latest evaluation, and a sample answer."""

from __future__ import annotations

from psycopg import sql

from citebible_pipeline.db import connect

TABLES = (
    "books", "verses", "chapters", "verse_genres", "genre_boosts", "passage_embeddings", "cross_references",
    "topics", "topic_verses", "gold_queries", "gold_passages", "eval_results",
)
SAMPLE_QUERY = "Jesus wept"


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
            "SELECT variant, query_set, queries, recall_50, ndcg_10, hit_5 FROM eval_results"
            " WHERE run_id = (SELECT run_id FROM eval_results ORDER BY run_at DESC LIMIT 1) ORDER BY query_set, variant"
        ).fetchall() if counts.get("eval_results") else []
        if latest:
            print("\nLatest retrieval_eval (baselines):")
            print(f"  {'variant':<11}{'query set':<18}{'n':>5}{'recall@50':>11}{'nDCG@10':>9}{'hit@5':>7}")
            for v, qs, n, r, nd, h in latest:
                if r is not None:
                    print(f"  {v:<11}{qs:<18}{n:>5}{r:>11.3f}{nd:>9.3f}{h:>7.3f}")
        row = conn.execute("SELECT ref, text FROM verses WHERE id = 19034018").fetchone()
        if row:
            print(f"\nLookup: {row[0]} — {row[1]}")
        if counts.get("passage_embeddings"):
            from citebible_pipeline.embeddings.embedder import Embedder
            from citebible_pipeline.retrieval.baselines import (
                RetrievalContext,
                dense_raw,
            )

            ctx = RetrievalContext(conn, Embedder())
            hits = dense_raw(ctx, SAMPLE_QUERY).results[:3]
            refs = conn.execute("SELECT id, ref, text FROM verses WHERE id = ANY(%s)", ([h.start for h in hits],)).fetchall()
            by_id = {i: (r, t) for i, r, t in refs}
            print(f"\nAsk (dense baseline): {SAMPLE_QUERY!r}")
            for h in hits:
                ref, text = by_id[h.start]
                print(f"  {ref} — {text}")
    return 0 if all(counts.values()) else 1
