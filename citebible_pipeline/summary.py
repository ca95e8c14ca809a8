"""The end of `make run`: what each table holds, and a sample answer from the data."""

from __future__ import annotations

from citebible_pipeline.db import connect

TABLES = ("books", "verses", "chapters", "verse_genres", "genre_boosts", "passage_embeddings", "cross_references", "topics", "topic_verses", "gold_queries", "gold_passages", "eval_results")


def table_counts(conn) -> dict[str, int | None]:
    from psycopg import sql

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
            print(f"  {t:<24} {'(missing)' if n is None else f'{n:,} rows'}")
        row = conn.execute("SELECT ref, text FROM verses WHERE id = 19034018").fetchone()
    if row:
        print(f"\nSample lookup: {row[0]} — {row[1]}")
    return 0 if all(n for n in counts.values()) else 1
