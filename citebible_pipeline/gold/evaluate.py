"""Run named retrieval variants over the held-out topics and the curated set in one run."""

from __future__ import annotations

import logging
import statistics
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import psycopg

from citebible_pipeline.db.load import copy_rows
from citebible_pipeline.gold.access import QUERY_SETS, eval_queries
from citebible_pipeline.gold.metrics import (
    abstention_correct,
    concentration,
    harm_at,
    hit_at,
    mrr_at,
    ndcg_at,
    recall_at,
)
from citebible_pipeline.retrieval.batch import map_queries
from citebible_pipeline.retrieval.baselines import VARIANTS, RetrievalContext, Retrieved

log = logging.getLogger(__name__)
METRICS = ("recall_50", "ndcg_10", "mrr_10", "hit_5", "harm_5", "abstention_accuracy", "top_passage_share",
           "distinct_per_100")
# query sets whose abstention is scored (they hold off-topic or answerable sentences); "dev" is dev_harm's prefix too
WRITTEN_SETS = ("curated", "dev")


@dataclass
class EvalRow:
    variant: str
    query_set: str
    queries: int
    recall_50: float | None
    ndcg_10: float | None
    mrr_10: float | None
    hit_5: float | None
    harm_5: float | None  # share of pastoral answers showing a passage judged to wound that reader (judged sets only)
    abstention_accuracy: float | None
    top_passage_share: float | None  # concentration over the top-5 answers (gold.metrics.concentration)
    distinct_per_100: float | None
    seconds: float


def _mean(xs: list[float]) -> float | None:
    return round(statistics.fmean(xs), 4) if xs else None


def evaluate(
    ctx: RetrievalContext,
    variants: Mapping[str, Callable[[RetrievalContext, str], Retrieved]] | None = None,
    query_sets: Sequence[str] = tuple(QUERY_SETS),
    limit: int | None = None,
    workers: int | None = None,
) -> list[EvalRow]:
    """Each variant over each query set; a variant's queries run on `workers` threads (query.batch), so a variant
    must be safe to call from several (the engine's are; the baselines share one connection, which psycopg locks)."""
    variants = variants or VARIANTS
    out: list[EvalRow] = []
    for qs in query_sets:
        queries = eval_queries(ctx.conn, qs, limit)
        judged = any(q.wounds for q in queries)  # a written set with harm judgments
        ctx.prepare([q.text for q in queries])
        ctx.forget()  # retrieval answers are kept for one query set's variants only
        for name, fn in variants.items():
            started = time.perf_counter()
            rec, ndcg, mrr, hit, abst, answers, harm = [], [], [], [], [], [], []
            for q, got in zip(queries, map_queries(lambda q: fn(ctx, q.text), queries, workers)):
                abst.append(abstention_correct(got.abstained, q.expect_abstain))
                answers.append([] if got.abstained else got.results[:5])
                if judged and q.kind == "pastoral":
                    harm.append(0.0 if got.abstained else harm_at(got.results, q.wounds, 5))
                if q.passages:
                    res = [] if got.abstained else got.results
                    rec.append(recall_at(res, q.passages, 50))
                    ndcg.append(ndcg_at(res, q.passages, 10))
                    mrr.append(mrr_at(res, q.passages, 10))
                    hit.append(hit_at(res, q.passages, 5))
            top, distinct = concentration(answers)
            out.append(EvalRow(name, qs, len(queries), _mean(rec), _mean(ndcg), _mean(mrr), _mean(hit), _mean(harm),
                               _mean(abst) if qs.startswith(WRITTEN_SETS) else None,
                               None if top is None else round(top, 4), None if distinct is None else round(distinct, 2),
                               round(time.perf_counter() - started, 2)))
            log.info("%s on %s: %d queries in %.1fs", name, qs, len(queries), out[-1].seconds)
    return out


ABLATION_SAMPLE = 300  # held-out topics for the ablation rows in a build; `citebible eval --all` runs all


def evaluate_all(ctx: RetrievalContext, engine, limit: int | None = None, ablation_limit: int | None = ABLATION_SAMPLE,
                 rerankers: Mapping[str, object] | None = None, pipeline_only: bool = False) -> list[EvalRow]:
    """Baselines, `full`, `no_rerank`, `no_labels` and `no_blend` on every query, the ablation rows on the first `ablation_limit`
    held-out topics (query ids are hashes of the topic, so that is a fixed pseudo-random sample), and
    `full+<name>` for each other engine in `rerankers` (another reranker, or `llm`: the LLM gateway), one table.
    `pipeline_only`: just `full_variant`'s rows (comparing two builds of the same pipeline)."""
    from citebible_pipeline.retrieval.pipeline import VARIANT_ORDER, ablation_variants, full_variant

    extra = {f"full+{name}": full_variant(e)["full"] for name, e in (rerankers or {}).items()}
    main = evaluate(ctx, {**({} if pipeline_only else VARIANTS), **full_variant(engine), **extra}, limit=limit)
    cap = min(x for x in (limit, ablation_limit) if x is not None) if (limit or ablation_limit) else None
    ablations = [] if pipeline_only else evaluate(ctx, ablation_variants(engine), limit=cap)
    sets = list(QUERY_SETS)
    order = [*VARIANT_ORDER, *extra]
    return sorted(main + ablations, key=lambda r: (sets.index(r.query_set), order.index(r.variant)))


def _cell(metric: str, v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if metric == "distinct_per_100" else f"{v:.3f}"


def format_table(rows: Sequence[EvalRow]) -> str:
    w = max([12, *(len(r.variant) + 2 for r in rows)])
    widths = {m: max(11, len(m) + 2) for m in METRICS}
    head = f"{'variant':<{w}}{'query set':<18}{'n':>5}" + "".join(f"{m:>{widths[m]}}" for m in METRICS)
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = "".join(f"{_cell(m, getattr(r, m)):>{widths[m]}}" for m in METRICS)
        lines.append(f"{r.variant:<{w}}{r.query_set:<18}{r.queries:>5}{cells}")
    return "\n".join(lines)


def record(conn: psycopg.Connection, rows: Sequence[EvalRow]) -> str:
    run_id = uuid.uuid4().hex[:12]
    with conn.transaction(), conn.cursor() as cur:
        copy_rows(cur, "eval_results", ("run_id", "variant", "query_set", "queries", *METRICS),
                  ("text", "text", "text", "integer", *("real",) * len(METRICS)),
                  ((run_id, r.variant, r.query_set, r.queries, *(getattr(r, m) for m in METRICS)) for r in rows))
    return run_id
