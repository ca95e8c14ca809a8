"""Write a parsed Nave's index: entries, passages and links swap together in one transaction, each through
the OpenBible loads' gate (stage, diff, refuse a shrink of more than 20 %), so nothing half-loaded is read."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from citebible_pipeline.naves.parse import NaveIndex
from citebible_pipeline.openbible.load import Diff, gated_replace


@dataclass
class NaveLoad:
    topics: Diff
    passages: Diff
    links: Diff
    seconds: float


def write_index(conn: psycopg.Connection, index: NaveIndex) -> NaveLoad:
    with conn.transaction():
        _, topics = gated_replace(
            conn, "nave_topics", ("id",), ("subject", "label", "path", "depth", "parent_id", "line"),
            ("id", "subject", "label", "path", "depth", "parent_id", "line"),
            ("bigint", "text", "text", "text[]", "smallint", "bigint", "integer"),
            ((e.id, e.subject, e.label, list(e.path), e.depth, e.parent_id, e.line) for e in index.entries))
        stats, passages = gated_replace(
            conn, "nave_passages", ("topic_id", "start_id", "end_id"), (),
            ("topic_id", "start_id", "end_id"), ("bigint", "integer", "integer"), sorted(index.passages))
        _, links = gated_replace(
            conn, "nave_links", ("from_id", "target"), ("to_id", "line"), ("from_id", "target", "to_id", "line"),
            ("bigint", "text", "bigint", "integer"),
            {(link.from_id, link.target): (link.from_id, link.target, link.to_id, link.line) for link in index.links}.values())
    return NaveLoad(topics, passages, links, stats.seconds)
