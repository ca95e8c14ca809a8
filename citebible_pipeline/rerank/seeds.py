"""The reranker retrained in memory under several seeds, as `reranker_model` trains it, each model read on the dev
sentences and both held-out sets (`citebible seeds`). One build's figures move with its seed: the default's top share
read 0.090 to 0.112 over eight seeds and its dev hit@5 0.667 to 0.700 (README, "Twenty-seventh step"), so a change to
the ranking is judged on the seeds' mean (rule D), not on one build. A change that trains nothing (a serving option,
`--serve key=value`) is read on the same models with and without it, so every difference is its own (README,
"Thirty-third step"). Nothing is stored."""

from __future__ import annotations

import json
import logging
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace

import psycopg
from pydantic import ValidationError

from citebible_pipeline.bible.references import format_range
from citebible_pipeline.gold.access import heldout_texts
from citebible_pipeline.gold.evaluate import METRICS, EvalRow, evaluate
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.variant import FULL, Variant
from citebible_pipeline.query.rerank import FeatureReranker
from citebible_pipeline.rerank.pools import collect, training_queries
from citebible_pipeline.rerank.assets import RerankConfig
from citebible_pipeline.rerank.train import FitSettings, feature_reranker, fit, split
from citebible_pipeline.retrieval.baselines import RetrievalContext
from citebible_pipeline.retrieval.pipeline import variant

log = logging.getLogger(__name__)
SETS = ("dev_sentences", "dev_pastoral", "nave_heldout", "heldout_topics")  # what rules D and E read


def seed_models(engine: Engine, conn: psycopg.Connection, seeds: Sequence[int], settings: FitSettings, topics: int = 0,
                progress: Callable[[str], None] = log.info) -> dict[int, FeatureReranker]:
    """One model per seed. Each seed draws its training queries as the asset does (with `topics` 0 every seed draws the
    same queries in its own order); the pools of all the draws are collected once, since a pool does not depend on
    the seed."""
    return seed_model_sets(engine, conn, seeds, {"": settings}, topics, progress)[""]


def seed_model_sets(engine: Engine, conn: psycopg.Connection, seeds: Sequence[int], arms: Mapping[str, FitSettings],
                    topics: int = 0, progress: Callable[[str], None] = log.info) -> dict[str, dict[int, FeatureReranker]]:
    """One model per seed for each named training arm, every arm fit on the same pools (collected once): two arms'
    figures differ by their settings alone, and an arm at the defaults reproduces the default to the bit (`citebible
    seeds --train`, README "Thirty-fourth step")."""
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {list(seeds)}")
    heldout = heldout_texts(conn)
    drawn = {s: training_queries(engine, heldout, topics or 1_000_000, s)[0] for s in seeds}
    every = list({q.text: q for s in seeds for q in drawn[s]}.values())
    pools = {p.query.text: p for p in collect(engine, every, progress=progress)}
    out: dict[str, dict[int, FeatureReranker]] = {name: {} for name in arms}
    for s in seeds:
        train, valid = split([pools[q.text] for q in drawn[s]])
        for name, settings in arms.items():
            text, info, _, _ = fit(train, valid, s, settings)
            progress(f"seed {s}{name}: {info['train_queries']} training queries, {info['rounds']} rounds")
            out[name][s] = feature_reranker(engine, text)
    return out


def seed_rows(ctx: RetrievalContext, engine: Engine, models: dict[int, FeatureReranker], limit: int | None = None,
              query_sets: Sequence[str] = SETS, stages: Variant = FULL, label: str = "") -> list[EvalRow]:
    """`full` (or `stages`) under each seed's model (`seed <n><label>`), then each set's mean over the seeds
    (`mean<label>`)."""
    rows = evaluate(ctx, {f"seed {s}{label}": variant(engine, stages, m) for s, m in models.items()}, query_sets, limit=limit)
    return rows + [mean_row([r for r in rows if r.query_set == qs], f"mean{label}") for qs in query_sets]


def _pairs(flag: str, pairs: Sequence[str], fields: Sequence[str], what: str) -> dict:
    """`key=value` pairs, a value read as JSON where it parses (true, 0.5, [0,1,2,3]), else as text; a key not in
    `fields`, or a pair without "=", is a ValueError naming it."""
    update = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            raise ValueError(f"{flag} {pair!r}: expected key=value with key {what} ({', '.join(sorted(fields))})")
        try:
            update[key] = json.loads(value)
        except json.JSONDecodeError:
            update[key] = value
    return update


def _refused(flag: str, exc: ValidationError) -> ValueError:
    first = exc.errors()[0]
    return ValueError(f"{flag} {'.'.join(map(str, first['loc']))}: {first['msg']}")


def serving_variant(pairs: Sequence[str]) -> Variant:
    """`key=value` stage switches over the served pipeline (`citebible seeds --serve`). A pair that is not a stage
    switch, or a value that is not a boolean, is a ValueError naming it."""
    update = _pairs("--serve", pairs, [f.name for f in fields(Variant)], "a stage switch")
    try:
        return Variant.parse(update)
    except ValueError as exc:
        raise ValueError(f"--serve {exc}") from exc


def training_settings(pairs: Sequence[str]) -> RerankConfig:
    """`key=value` pairs over the asset's training defaults (`citebible seeds --train`), for the settings that change
    how recorded pools are fit (FitSettings); anything else, or a value refused, is a ValueError naming it."""
    update = _pairs("--train", pairs, list(FitSettings.__annotations__), "a training setting")
    try:
        return RerankConfig(**update)
    except ValidationError as exc:
        raise _refused("--train", exc) from exc


def mean_row(rows: Sequence[EvalRow], name: str = "mean") -> EvalRow:
    """The mean of each measure over the seeds' rows of one query set (a measure none of them has stays None)."""
    if not rows or len({r.query_set for r in rows}) != 1:
        raise ValueError("mean_row reads the rows of one query set")
    means = {}
    for f in (*METRICS, "seconds"):
        values = [getattr(r, f) for r in rows if getattr(r, f) is not None]
        means[f] = round(statistics.fmean(values), 4) if values else None
    return replace(rows[0], variant=name, **means)


def seed_answers(engine: Engine, models: dict[int, FeatureReranker], text: str, k: int = 5) -> dict[int, list[str]]:
    """Each seed's top `k` for one sentence (rule D reads the sample query's under every seed); [] where it abstains."""
    out = {}
    for s, m in models.items():
        ranked = engine.rank(text, None, FULL, reranker=m)
        out[s] = [] if ranked.abstained else [format_range(c.start, c.end, whole_chapters=c.level == "chapter")
                                               for c in ranked.candidates[:k]]
    return out
