"""`citebible` command line: database helpers, lookups, and the build summary."""

from __future__ import annotations

import argparse
import logging
import sys


def _db(args: argparse.Namespace) -> int:
    from citebible_pipeline.db import apply_migrations, database_url
    from citebible_pipeline.db.embedded import pgdata_dir, stop_server

    if args.action == "url":
        print(database_url())
    elif args.action == "migrate":
        applied = apply_migrations()
        print("applied: " + (", ".join(applied) if applied else "nothing (up to date)"))
    elif args.action == "stop":
        print("stopped" if stop_server() else f"no embedded server running for {pgdata_dir()}")
    return 0


def _verse(args: argparse.Namespace) -> int:
    from citebible_pipeline.bible.references import ReferenceError, parse_reference
    from citebible_pipeline.db import connect

    try:
        ref = parse_reference(" ".join(args.reference))
    except ReferenceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with connect() as conn:
        rows = conn.execute(
            "SELECT ref, text FROM verses WHERE translation = 'web' AND id BETWEEN %s AND %s ORDER BY id",
            (ref.start_id, ref.end_id),
        ).fetchall()
    if not rows:
        print(f"{ref}: not loaded yet (run `make run`)", file=sys.stderr)
        return 1
    print(ref.format())
    for r, text in rows:
        print(f"  {r}  {text or '(no text: footnote only)'}")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from citebible_pipeline.db import connect
    from citebible_pipeline.embeddings.embedder import Embedder
    from citebible_pipeline.gold.evaluate import evaluate, format_table, record
    from citebible_pipeline.retrieval.baselines import RetrievalContext

    with connect() as conn:
        rows = evaluate(RetrievalContext(conn, Embedder()), limit=args.limit)
        run_id = record(conn, rows) if args.record else None
    print(format_table(rows))
    if run_id:
        print(f"\nrecorded as eval run {run_id}")
    return 0


def _summary(args: argparse.Namespace) -> int:
    from citebible_pipeline.summary import print_summary

    return print_summary()


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="citebible", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    db = sub.add_parser("db", help="database: url (starts the embedded server if needed), migrate, stop")
    db.add_argument("action", choices=["url", "migrate", "stop"])
    db.set_defaults(func=_db)
    v = sub.add_parser("verse", help="print the verses of a reference, e.g. citebible verse Ps 34:18")
    v.add_argument("reference", nargs="+")
    v.set_defaults(func=_verse)
    e = sub.add_parser("eval", help="run every retrieval variant on the held-out gold set and print the table")
    e.add_argument("--limit", type=int, default=None, help="at most this many queries per set")
    e.add_argument("--record", action="store_true", help="also store the results in eval_results")
    e.set_defaults(func=_eval)
    s = sub.add_parser("summary", help="what the last build produced, and a sample answer")
    s.set_defaults(func=_summary)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
