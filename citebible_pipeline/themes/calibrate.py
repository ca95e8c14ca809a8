"""Calibrate the relevance floor on the built tables (answerable: training-side topic names and the
pastoral cues, each with its own theme left out; unanswerable: everyday_questions.txt)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from importlib import resources

import numpy as np
import psycopg

from citebible_pipeline.retrieval.batch import map_queries
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.floor import FEATURES, Floor
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


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, iters: int = 3000, lr: float = 0.5
                 ) -> tuple[np.ndarray, float]:
    """Class-balanced L2 logistic regression by gradient descent (a few hundred rows, five features)."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    w_pos = 0.5 / max(1, y.sum())
    w_neg = 0.5 / max(1, (1 - y).sum())
    sw = np.where(y == 1, w_pos, w_neg)
    coef = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(x @ coef + b)))
        g = sw * (p - y)
        coef -= lr * (x.T @ g + l2 * coef)
        b -= lr * g.sum()
    return coef, float(b)


def calibrate(pos: Sequence[dict[str, float]], neg: Sequence[dict[str, float]], max_false_abstain: float = TUNING.max_false_abstain
              ) -> tuple[Floor, dict]:
    """Fit, then set the threshold as high as it can go while at most `max_false_abstain` of the
    answerable queries abstain (answering is the costly side to lose)."""
    if len(pos) < 10 or len(neg) < 10:
        raise ValueError(f"calibration needs >= 10 queries on each side, got {len(pos)} and {len(neg)}")
    x = np.array([[s[f] for f in FEATURES] for s in (*pos, *neg)])
    y = np.array([1] * len(pos) + [0] * len(neg))
    coef, b = fit_logistic(x, y)
    p = 1.0 / (1.0 + np.exp(-(x @ coef + b)))
    p_pos = np.sort(p[: len(pos)])
    threshold = float(p_pos[int(np.floor(max_false_abstain * len(pos)))])
    floor = Floor(FEATURES, coef, b, threshold)
    metrics = {
        "answerable": len(pos), "everyday": len(neg), "threshold": round(threshold, 4),
        "answerable_abstained": round(float((p[: len(pos)] < threshold).mean()), 4),
        "everyday_abstained": round(float((p[len(pos):] < threshold).mean()), 4),
        "coef": dict(zip(FEATURES, (round(float(c), 4) for c in coef))), "intercept": round(b, 4),
    }
    return floor, metrics
