"""reranker_models: insert a trained model inactive, prove it loads (same loader the query module
uses), then swap the active flag of its kind in one transaction. A model that fails to load is never
activated, so the previous one keeps serving."""

from __future__ import annotations

import json
from collections.abc import Sequence

import psycopg

from citebible_pipeline.query.features import PoolTables
from citebible_pipeline.query.rerank import Reranker, RerankerError, fetch_row, load_row


def save_model(conn: psycopg.Connection, kind: str, space_id: int, blob: bytes, features: Sequence[str],
               training_hash: str, seed: int, metrics: dict) -> int:
    with conn.transaction():
        return conn.execute(
            "INSERT INTO reranker_models (kind, space_id, model, features, training_hash, seed, metrics)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (kind, space_id, blob, list(features), training_hash, seed, json.dumps(metrics)),
        ).fetchone()[0]


def activate(conn: psycopg.Connection, model_id: int, tables: PoolTables | None) -> Reranker:
    """Load the row first (raises RerankerError and changes nothing if it cannot serve), then activate it."""
    row = fetch_row(conn, model_id=model_id)
    if row is None:
        raise RerankerError(f"no reranker model {model_id}")
    reranker = load_row(row, tables)
    with conn.transaction():
        conn.execute("UPDATE reranker_models SET is_active = false WHERE kind = %s AND is_active", (row[1],))
        conn.execute("UPDATE reranker_models SET is_active = true WHERE id = %s", (model_id,))
    return reranker


def active_id(conn: psycopg.Connection, kind: str) -> int | None:
    row = conn.execute("SELECT id FROM reranker_models WHERE kind = %s AND is_active", (kind,)).fetchone()
    return row[0] if row else None
