"""Nave's sub-entries as gold: a side for every sub-entry (the OpenBible split's near-duplicate key and
hash, so an equal key falls on the same side in both sources) and the queries chosen by the rule in
`naves/queries.py`, every listed passage grade 1 (Nave's has no popularity to grade by)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import psycopg

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.gold.split import side, split_key
from citebible_pipeline.naves.queries import name_words, readable, select_queries


@dataclass
class NaveGold:
    splits: list[tuple[int, str, str]]  # (entry id, split key, side) of every sub-entry
    queries: list[tuple]  # gold_queries rows
    passages: list[tuple[str, int, int, int]]  # gold_passages rows


def web_name_words(conn: psycopg.Connection) -> frozenset[str]:
    """The query rule's name words (naves.queries.name_words), read from the WEB's verses."""
    return name_words(r[0] for r in conn.execute("SELECT text FROM verses WHERE translation = %s", (DEFAULT_TRANSLATION,)))


def nave_gold(conn: psycopg.Connection) -> NaveGold:
    entries = [(eid, subject, tuple(path)) for eid, subject, path in conn.execute(
        "SELECT id, subject, path FROM nave_topics WHERE depth > 0 ORDER BY id")]
    if not entries:
        raise RuntimeError("no Nave's entries loaded: materialize nave_topics and nave_passages first")
    listed: dict[int, list[tuple[int, int]]] = {}
    for tid, s, e in conn.execute("SELECT topic_id, start_id, end_id FROM nave_passages ORDER BY topic_id, start_id"):
        listed.setdefault(tid, []).append((s, e))
    names = web_name_words(conn)
    splits = []
    for eid, subject, path in entries:
        text = readable(subject, path)
        splits.append((eid, split_key(text), side(text)))
    queries, passages = [], []
    counts = Counter({eid: len(ps) for eid, ps in listed.items()})
    for q in select_queries(entries, counts, names):
        qid = f"nave:{q.entry_ids[0]}"
        queries.append((qid, "naves", "topic", side(q.text), q.text, False, None, None))
        spans = {span for eid in q.entry_ids for span in listed[eid]}
        passages.extend((qid, s, e, 1) for s, e in sorted(spans))
    return NaveGold(splits, queries, passages)
