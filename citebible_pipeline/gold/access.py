"""The one door to OpenBible's topic votes and Nave's listed passages for anything that ranks (theme
vocabulary, prior, learned weights): it returns the training side only. Evaluation reads held-out queries through
`eval_queries`. tests/test_gold.py fails if other modules read topic_verses or gold tables directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from citebible_pipeline.gold.metrics import Passage
from citebible_pipeline.naves.queries import readable


@dataclass(frozen=True)
class TrainingPassage:
    topic: str
    start_id: int
    end_id: int
    votes: int | None
    score: int | None


def training_topic_passages(conn: psycopg.Connection) -> list[TrainingPassage]:
    """Topic passages of training-side topics only (raises if the split was never built)."""
    if conn.execute("SELECT count(*) FROM topic_splits").fetchone()[0] == 0:
        raise RuntimeError("topic_splits is empty: materialize gold_set before reading training data")
    rows = conn.execute(
        "SELECT t.name, tv.start_id, tv.end_id, tv.votes, tv.score FROM topic_verses tv"
        " JOIN topics t ON t.id = tv.topic_id JOIN topic_splits s ON s.topic_id = tv.topic_id"
        " WHERE s.split = 'training' AND NOT EXISTS ("
        "   SELECT 1 FROM topic_splits h WHERE h.split = 'heldout' AND h.split_key = s.split_key)"
        " ORDER BY t.name, tv.start_id"
    ).fetchall()
    return [TrainingPassage(*r) for r in rows]


@dataclass(frozen=True)
class TrainingNavePassage:
    entry_id: int
    text: str  # the readable label ("afflictions and adversities: prayer in")
    subject: str  # as the index writes it ("AFFLICTIONS AND ADVERSITIES")
    path: tuple[str, ...]  # the labels below the subject
    start_id: int
    end_id: int


def training_nave_passages(conn: psycopg.Connection) -> list[TrainingNavePassage]:
    """Passages of training-side Nave's sub-entries only, skipping any whose key is held out in either source."""
    if conn.execute("SELECT count(*) FROM nave_splits").fetchone()[0] == 0:
        raise RuntimeError("nave_splits is empty: materialize gold_set before reading training data")
    rows = conn.execute(
        "SELECT t.id, t.subject, t.path, p.start_id, p.end_id FROM nave_passages p"
        " JOIN nave_topics t ON t.id = p.topic_id JOIN nave_splits s ON s.topic_id = p.topic_id"
        " WHERE s.split = 'training' AND NOT EXISTS ("
        "   SELECT 1 FROM nave_splits h WHERE h.split = 'heldout' AND h.split_key = s.split_key)"
        " AND NOT EXISTS (SELECT 1 FROM topic_splits h WHERE h.split = 'heldout' AND h.split_key = s.split_key)"
        " ORDER BY t.id, p.start_id"
    ).fetchall()
    return [TrainingNavePassage(eid, readable(subject, tuple(path)), subject, tuple(path), s, e)
            for eid, subject, path, s, e in rows]


def heldout_keys(conn: psycopg.Connection) -> frozenset[str]:
    """Split keys held out in either source: what no training-side artefact may be named by."""
    return frozenset(r[0] for r in conn.execute(
        "SELECT split_key FROM topic_splits WHERE split = 'heldout' UNION SELECT split_key FROM nave_splits WHERE split = 'heldout'"))


@dataclass(frozen=True)
class EvalQuery:
    query_id: str
    kind: str
    text: str
    expect_abstain: bool
    passages: tuple[Passage, ...]
    stance: str | None = None  # who is speaking, where the written set says
    wounds: tuple[tuple[int, int], ...] = ()  # the passages that would wound this reader


QUERY_SETS = {
    "heldout_topics": "source = 'openbible' AND split = 'heldout'",
    "curated_pastoral": "source = 'curated' AND kind = 'pastoral'",
    "curated_study": "source = 'curated' AND kind = 'study'",
    "curated_offtopic": "source = 'curated' AND kind = 'offtopic'",
    "nave_heldout": "source = 'naves' AND split = 'heldout'",
    "dev_sentences": "source = 'dev'",
    "dev_harm": "source = 'dev_harm'",
}
# Subsets a decision rule reads (rules D and E ask pastoral hit@5 of the dev sentences): `citebible seeds` prints them,
# the evaluation table does not (their queries are already in a set of its own)
SUBSETS = {"dev_pastoral": "source = 'dev' AND kind = 'pastoral'",
           "dev_harm_pastoral": "source = 'dev_harm' AND kind = 'pastoral'"}


def eval_queries(conn: psycopg.Connection, query_set: str, limit: int | None = None) -> list[EvalQuery]:
    """Held-out evaluation queries of one set, with their graded passages."""
    where = QUERY_SETS.get(query_set) or SUBSETS.get(query_set)
    if where is None:
        raise ValueError(f"unknown query set {query_set!r}; known: {sorted({**QUERY_SETS, **SUBSETS})}")
    rows = conn.execute(
        sql.SQL(
            "SELECT q.query_id, q.kind, q.query, q.expect_abstain, coalesce(array_agg(ARRAY[p.start_id, p.end_id,"
            " p.grade] ORDER BY p.start_id) FILTER (WHERE p.query_id IS NOT NULL), '{{}}'), q.stance,"
            " coalesce((SELECT array_agg(ARRAY[w.start_id, w.end_id] ORDER BY w.start_id) FROM gold_wounds w"
            "  WHERE w.query_id = q.query_id), '{{}}')"
            " FROM gold_queries q LEFT JOIN gold_passages p USING (query_id)"
            " WHERE {} GROUP BY q.query_id ORDER BY q.query_id LIMIT %s"
        ).format(sql.SQL(where)),  # a whitelisted constant, never user text
        (limit,),
    ).fetchall()
    return [EvalQuery(qid, kind, text, abst, tuple(Passage(*p) for p in ps), stance, tuple(tuple(w) for w in ws))
            for qid, kind, text, abst, ps, stance, ws in rows]


HELDOUT_SETS = ("heldout_topics", "nave_heldout")  # no training query may share a key with, or nearly repeat, either


def heldout_texts(conn: psycopg.Connection) -> list[str]:
    """Both held-out sets' query texts: what the reranker's leakage guard keeps out of its training queries."""
    return [q.text for qs in HELDOUT_SETS for q in eval_queries(conn, qs)]
