"""The reranker retrained in memory under several seeds, as `reranker_model` trains it, each model read on the dev
sentences and both held-out sets (`citebible seeds`). One build's figures move with its seed: the default's top share
read 0.090 to 0.112 over eight seeds and its dev hit@5 0.667 to 0.700 (README, "Twenty-seventh step"), so a change to
the ranking is judged on the seeds' mean (rule D), not on one build. Nothing is stored."""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace

import psycopg

from citebible_pipeline.bible.references import format_range
from citebible_pipeline.gold.access import heldout_texts
from citebible_pipeline.gold.evaluate import METRICS, EvalRow, evaluate
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.rerank import FeatureReranker
from citebible_pipeline.rerank.pools import collect, training_queries
from citebible_pipeline.rerank.train import FitSettings, feature_reranker, fit, split
from citebible_pipeline.retrieval.baselines import RetrievalContext
from citebible_pipeline.retrieval.pipeline import FULL, variant

log = logging.getLogger(__name__)
SETS = ("dev_sentences", "nave_heldout", "heldout_topics")  # what rule D reads


def seed_models(engine: Engine, conn: psycopg.Connection, seeds: Sequence[int], settings: FitSettings, topics: int = 0,
                progress: Callable[[str], None] = log.info) -> dict[int, FeatureReranker]:
    """One model per seed. Each seed draws its training queries as the asset does (with `topics` 0 every seed draws the
    same queries in its own order); the pools of all the draws are collected once, since a pool does not depend on
    the seed."""
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {list(seeds)}")
    heldout = heldout_texts(conn)
    drawn = {s: training_queries(engine, heldout, topics or 1_000_000, s)[0] for s in seeds}
    every = list({q.text: q for s in seeds for q in drawn[s]}.values())
    pools = {p.query.text: p for p in collect(engine, every, progress=progress)}
    models = {}
    for s in seeds:
        train, valid = split([pools[q.text] for q in drawn[s]])
        text, info, _, _ = fit(train, valid, s, settings)
        progress(f"seed {s}: {info['train_queries']} training queries, {info['rounds']} rounds")
        models[s] = feature_reranker(engine, text)
    return models


def seed_rows(ctx: RetrievalContext, engine: Engine, models: dict[int, FeatureReranker], limit: int | None = None,
              query_sets: Sequence[str] = SETS) -> list[EvalRow]:
    """`full` under each seed's model (`seed <n>`), then each set's mean over the seeds (`mean`)."""
    rows = evaluate(ctx, {f"seed {s}": variant(engine, FULL, m) for s, m in models.items()}, query_sets, limit=limit)
    return rows + [mean_row([r for r in rows if r.query_set == qs]) for qs in query_sets]


def mean_row(rows: Sequence[EvalRow]) -> EvalRow:
    """The mean of each measure over the seeds' rows of one query set (a measure none of them has stays None)."""
    if not rows or len({r.query_set for r in rows}) != 1:
        raise ValueError("mean_row reads the rows of one query set")
    means = {}
    for f in (*METRICS, "seconds"):
        values = [getattr(r, f) for r in rows if getattr(r, f) is not None]
        means[f] = round(statistics.fmean(values), 4) if values else None
    return replace(rows[0], variant="mean", **means)


def seed_answers(engine: Engine, models: dict[int, FeatureReranker], text: str, k: int = 5) -> dict[int, list[str]]:
    """Each seed's top `k` for one sentence (rule D reads the sample query's under every seed); [] where it abstains."""
    out = {}
    for s, m in models.items():
        ranked = engine.rank(text, FULL, reranker=m)
        out[s] = [] if ranked.abstained else [format_range(c.start, c.end, whole_chapters=c.level == "chapter")
                                               for c in ranked.candidates[:k]]
    return out
