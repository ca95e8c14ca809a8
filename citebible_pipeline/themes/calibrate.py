"""Calibrate the relevance floor on the built tables (answerable: training-side topic names and the
pastoral cues, each with its own theme left out; unanswerable: everyday_questions.txt)."""

from __future__ import annotations

import json
import random
from importlib import resources

import psycopg

from citebible_pipeline.query.batch import map_queries
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.floor import Floor, calibrate
from citebible_pipeline.query.variant import Variant
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.themes.vocabulary import load_pastoral

SEED = 2026


def everyday_questions() -> list[str]:
    text = resources.files("citebible_pipeline.themes").joinpath("everyday_questions.txt").read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def answerable_queries(engine: Engine, topics: int = 300) -> list[tuple[str, str]]:
    """(query, split key to leave out): a seeded sample of topic names and every pastoral cue."""
    idx = engine.themes
    topic_rows = [i for i, k in enumerate(idx.kinds) if k == "topic"]
    sample = random.Random(SEED).sample(topic_rows, min(topics, len(topic_rows)))
    out = [(idx.names[i], idx.split_keys[i]) for i in sample]
    out += [(cue, f"pastoral:{t.id}") for t in load_pastoral() for cue in t.cues]
    return out


def calibrate_floor(engine: Engine, max_false_abstain: float = TUNING.max_false_abstain) -> tuple[Floor, dict]:
    v = Variant(floor=False)
    pos = list(map_queries(lambda qk: engine.rank(qk[0], None, v, exclude=frozenset({qk[1]})).signals, answerable_queries(engine)))
    neg = list(map_queries(lambda q: engine.rank(q, None, v).signals, everyday_questions()))
    return calibrate(pos, neg, max_false_abstain)


def store_floor(conn: psycopg.Connection, space_id: int, floor: Floor, metrics: dict) -> int:
    """Insert and activate in one transaction; older floors stay as history."""
    with conn.transaction():
        conn.execute("UPDATE abstention_floors SET is_active = false WHERE is_active")
        return conn.execute(
            "INSERT INTO abstention_floors (space_id, features, coef, intercept, threshold, metrics, is_active)"
            " VALUES (%s, %s, %s, %s, %s, %s, true) RETURNING id",
            (space_id, list(floor.features), [float(c) for c in floor.coef], floor.intercept, floor.threshold,
             json.dumps(metrics)),
        ).fetchone()[0]
