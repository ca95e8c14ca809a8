"""`citebible` command line: database helpers, lookups, and the build summary."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION


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
    from citebible_pipeline.query.retrieve import passage_verses

    try:
        ref = parse_reference(" ".join(args.reference))
    except ReferenceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with connect() as conn:
        rows = passage_verses(conn, ref.start_id, ref.end_id)
    if not rows:
        print(f"{ref}: not loaded yet (run `make run`)", file=sys.stderr)
        return 1
    print(ref.format())
    for _id, r, text in rows:
        print(f"  {r}  {text or '(no text: footnote only)'}")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from citebible_pipeline.db import connect
    from citebible_pipeline.embeddings.embedder import Embedder
    from citebible_pipeline.gold.evaluate import evaluate_all, format_table, record
    from citebible_pipeline.query import Engine
    from citebible_pipeline.retrieval.baselines import RetrievalContext

    llm = _gateway() if args.llm else None
    if args.llm and llm is None:
        return 2
    emb = Embedder()
    engine = Engine(embedder=emb, llm=None)
    others = {name: Engine(embedder=emb, llm=None, reranker=name) for name in args.rerankers}
    if llm is not None:
        others["llm"] = Engine(embedder=emb, llm=llm)
    with connect() as conn:
        rows = evaluate_all(RetrievalContext(conn, emb), engine, limit=args.limit,
                            ablation_limit=None if args.all else args.ablation_sample, rerankers=others,
                            pipeline_only=args.pipeline_only)
        run_id = record(conn, rows) if args.record else None
    print(format_table(rows))
    if run_id:
        print(f"\nrecorded as eval run {run_id}")
    return 0


def _gateway():
    """The LLM gateway of the environment, once asked to answer (eval --llm): a row measured while every call fell
    back to the offline rewrites would read as the LLM's. None, with the reason printed, when it is unset or fails."""
    from citebible_pipeline.query.rewrite import LLMConfig, llm_rewrites

    cfg = LLMConfig.from_env()
    if cfg is None:
        print("error: --llm measures the gateway of CITEBIBLE_LLM_URL (and CITEBIBLE_LLM_MODEL), which is not set",
              file=sys.stderr)
        return None
    try:
        llm_rewrites(cfg, "My friend died and I feel alone", 4)
    except Exception as exc:
        print(f"error: the LLM gateway at {cfg.url} gave no need phrases ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
    return cfg


def _seeds(args: argparse.Namespace) -> int:
    from citebible_pipeline.db import connect
    from citebible_pipeline.gold.evaluate import format_table
    from citebible_pipeline.query import Engine
    from citebible_pipeline.rerank.assets import RerankConfig
    from citebible_pipeline.rerank.seeds import seed_answers, seed_model_sets, seed_rows, serving_variant, training_settings
    from citebible_pipeline.summary import SAMPLE_QUERY
    from citebible_pipeline.retrieval.baselines import RetrievalContext

    try:
        served = serving_variant(args.serve) if args.serve else None
        trained = training_settings(args.train) if args.train else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    engine = Engine(llm=None, reranker=None)
    arms = {"": RerankConfig(), **({" " + " ".join(args.train): trained} if trained is not None else {})}
    with connect() as conn:
        sets = seed_model_sets(engine, conn, args.seeds, arms, args.topics, progress=lambda m: print(m, file=sys.stderr))
        models = sets[""]
        ctx = RetrievalContext(conn, engine.embedder)
        rows = seed_rows(ctx, engine, models, args.limit)
        if served is not None:  # the same models read again with the serving options: the difference is theirs alone
            rows += seed_rows(ctx, engine, models, args.limit, stages=served, label=" " + " ".join(args.serve))
        for name, other in list(sets.items())[1:]:  # fit on the same pools: the difference is the settings' alone
            rows += seed_rows(ctx, engine, other, args.limit, label=name)
    print(format_table(rows))
    text = args.ask or SAMPLE_QUERY
    print(f"\n{text}")
    for seed, refs in seed_answers(engine, models, text).items():
        print(f"  seed {seed}: " + ("; ".join(refs) or "(abstains)"))
    return 0


def _ask(args: argparse.Namespace) -> int:
    from citebible_pipeline.query import Engine, QueryValidationError
    from citebible_pipeline.render import render_text

    engine = Engine()
    try:
        resp = engine.search(" ".join(args.query), k=args.k, translation=args.translation)
    except QueryValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(resp.model_dump_json(indent=2) if args.json else render_text(resp))
    return 0


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from citebible_pipeline.api.app import create_app

    uvicorn.run(create_app(), host=args.host, port=args.port, log_level="info")
    return 0


def _summary(args: argparse.Namespace) -> int:
    from citebible_pipeline.summary import print_summary

    return print_summary()


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)  # its reconnect warnings repeat what we say once
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
    e.add_argument("--all", action="store_true", help="run the ablation rows on every held-out topic too")
    e.add_argument("--ablation-sample", type=int, default=300, help="held-out topics for the ablation rows")
    e.add_argument("--pipeline-only", action="store_true", help="only no_rerank, no_labels, no_blend and full (compare two builds)")
    e.add_argument("--rerankers", nargs="*", default=[], metavar="NAME",
                   help="also measure `full` with these rerankers (features, cross_encoder, none, or a CrossEncoder path)")
    e.add_argument("--llm", action="store_true", help="also measure `full` with the LLM gateway of CITEBIBLE_LLM_URL "
                   "(row full+llm; its need phrases join the offline rewrites); the gateway is asked once first")
    sd = sub.add_parser("seeds", help="retrain the reranker in memory under several seeds (as reranker_model trains "
                        "it, defaults) and print `full` per seed and the mean on the dev sentences and both held-out sets")
    sd.add_argument("--seeds", type=int, nargs="+", default=[11, 12, 13, 14], help="LightGBM and query-order seeds")
    sd.add_argument("--limit", type=int, default=300, help="at most this many queries per set")
    sd.add_argument("--topics", type=int, default=0, help="training topics drawn per seed (0: every one, as the asset)")
    sd.add_argument("--serve", nargs="+", default=[], metavar="KEY=VALUE",
                    help="also read the same models with these stage switches (e.g. blend=false; query.variant.Variant): "
                    "a change that trains nothing, judged without retraining")
    sd.add_argument("--train", nargs="+", default=[], metavar="KEY=VALUE",
                    help="also fit each seed with these training settings on the same pools (pastoral_weight, "
                    "debias_cap; e.g. debias_cap=64): a change to how the pools are fit, judged apart from the pools")
    sd.add_argument("--ask", default=None, help="also print each seed's top 5 for this sentence (default: the sample query)")
    sd.set_defaults(func=_seeds)
    a = sub.add_parser("ask", help='search like the API does, e.g. citebible ask "I am anxious all the time"')
    a.add_argument("query", nargs="+")
    a.add_argument("-k", type=int, default=5, help="results to show (1-50)")
    a.add_argument("--json", action="store_true", help="print the SearchResponse as JSON")
    a.add_argument("--translation", default=DEFAULT_TRANSLATION, help="whose text answers: web (default) or bsb (after `make bsb`)")
    a.set_defaults(func=_ask)
    e.set_defaults(func=_eval)
    sv = sub.add_parser("serve", help="the HTTP API and reading page (http://HOST:PORT/)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8000)
    sv.set_defaults(func=_serve)
    s = sub.add_parser("summary", help="what the last build produced, and a sample answer")
    s.set_defaults(func=_summary)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except Exception as exc:  # a database that is down is one clear line, not a traceback
        from citebible_pipeline.db.connection import UNREACHABLE, URL_ENV_VARS, describe_url
        from citebible_pipeline.query.models import EngineNotReady

        if isinstance(exc, EngineNotReady):  # a table or model to (re)build: the message names the asset
            print(f"error: {exc}", file=sys.stderr)
            return 4
        if not isinstance(exc, UNREACHABLE):
            raise

        url = next((os.environ[v] for v in URL_ENV_VARS if os.environ.get(v)), "")
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"error: cannot reach the {describe_url(url) if url else 'embedded database'}: {first}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
