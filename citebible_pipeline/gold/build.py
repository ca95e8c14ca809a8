"""Build the gold set: OpenBible topics (topic name = query, voted passages = graded relevance) and Nave's
sub-entries (label = query, listed passages = grade 1), each split into held-out and training, plus the
written sets: the curated queries and the development reader sentences (never training data)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources

import psycopg
import yaml
from pydantic import BaseModel, field_validator, model_validator

from citebible_pipeline.bible.references import parse_reference
from citebible_pipeline.db.load import replace_rows
from citebible_pipeline.gold.nave_set import nave_gold
from citebible_pipeline.gold.split import side, split_key

MIN_PASSAGES = 5
KINDS = ("pastoral", "study", "offtopic")
STANCES = ("sufferer", "doer", "helper", "seeker")  # who is speaking (query.models.Analysis.stance)


class CuratedQuery(BaseModel):
    id: str
    kind: str
    query: str
    rationale: str
    relevant: dict[str, int]
    stance: str | None = None  # who is speaking (STANCES); the written sets with harm judgments say
    category: str | None = None  # the situation a harm sentence was written for (dev_harm.yaml)
    wounds: dict[str, str] = {}  # reference -> why it would wound this reader

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        return v

    @model_validator(mode="after")
    def _passages(self) -> CuratedQuery:
        if (self.kind == "offtopic") != (not self.relevant):
            raise ValueError(f"{self.id}: off-topic queries have no passages, others need some")
        for ref, grade in self.relevant.items():
            parse_reference(ref)  # raises ReferenceError naming the bad reference
            if grade not in (1, 2, 3):
                raise ValueError(f"{self.id}: grade of {ref} must be 1-3, got {grade}")
        if self.stance is not None and self.stance not in STANCES:
            raise ValueError(f"{self.id}: stance must be one of {STANCES}, got {self.stance!r}")
        served = [(s, e) for s, e, _ in self.passages()]
        for ref, why in self.wounds.items():
            r = parse_reference(ref)
            if not why.strip():
                raise ValueError(f"{self.id}: wound {ref} needs a reason")
            if any(r.start_id <= e and s <= r.end_id for s, e in served):
                raise ValueError(f"{self.id}: {ref} is listed both as serving and as wounding this reader")
        return self

    def wound_spans(self) -> list[tuple[int, int, str]]:
        return [(r.start_id, r.end_id, why) for ref, why in self.wounds.items() for r in [parse_reference(ref)]]

    def passages(self) -> list[tuple[int, int, int]]:
        out = {}
        for ref, grade in self.relevant.items():
            r = parse_reference(ref)
            out[(r.start_id, r.end_id)] = max(grade, out.get((r.start_id, r.end_id), 0))
        return [(s, e, g) for (s, e), g in out.items()]


def load_curated(text: str | None = None, name: str = "curated.yaml") -> list[CuratedQuery]:
    """A set of written queries (`curated.yaml`, or `dev_sentences.yaml` with name=) as validated models."""
    if text is None:
        text = resources.files("citebible_pipeline.gold").joinpath(name).read_text(encoding="utf-8")
    items = [CuratedQuery(**raw) for raw in yaml.safe_load(text)]
    ids = [q.id for q in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: duplicate query ids")
    return items


def load_dev_sentences() -> list[CuratedQuery]:
    return load_curated(name="dev_sentences.yaml")


def load_dev_harm() -> list[CuratedQuery]:
    """The development sentences written where harm is likely (issue 63), a set of their own."""
    return load_curated(name="dev_harm.yaml")


def grade(votes: int | None, max_votes: int, score: int | None, max_score: int) -> int:
    """1-3 from the share of the topic's best votes or score (whichever export rates it higher)."""
    g = 0
    if votes is not None and max_votes > 0:
        g = max(g, math.ceil(3 * votes / max_votes))
    if score is not None and max_score > 0:
        g = max(g, math.ceil(3 * score / max_score))
    return min(3, max(1, g))


@dataclass
class GoldStats:
    topics: int
    heldout_topics: int
    gold_topics: int
    gold_heldout: int
    curated: int
    passages: int
    nave_queries: int = 0
    nave_heldout: int = 0
    nave_entries: int = 0
    dev_sentences: int = 0
    dev_harm: int = 0
    wounds: int = 0


def build_gold(conn: psycopg.Connection) -> GoldStats:
    topics = conn.execute("SELECT id, name FROM topics ORDER BY id").fetchall()
    if not topics:
        raise RuntimeError("no topics loaded: materialize topic_verses first")
    splits = {tid: (split_key(name), side(name)) for tid, name in topics}
    names = dict(topics)
    rows = conn.execute("SELECT topic_id, start_id, end_id, votes, score FROM topic_verses ORDER BY topic_id, start_id").fetchall()
    by_topic: dict[int, list[tuple]] = {}
    for r in rows:
        by_topic.setdefault(r[0], []).append(r)
    queries, passages, wounds = [], [], []
    for tid, items in by_topic.items():
        if len(items) < MIN_PASSAGES:
            continue
        maxv = max((r[3] or 0) for r in items)
        maxs = max((r[4] or 0) for r in items)
        qid = f"topic:{tid}"
        queries.append((qid, "openbible", "topic", splits[tid][1], names[tid], False, None, None))
        passages.extend((qid, r[1], r[2], grade(r[3], maxv, r[4], maxs)) for r in items)
    for source, written in (("curated", load_curated()), ("dev", load_dev_sentences()), ("dev_harm", load_dev_harm())):
        for q in written:
            qid = f"{source}:{q.id}"
            queries.append((qid, source, q.kind, "heldout", q.query, q.kind == "offtopic", q.rationale, q.stance))
            passages.extend((qid, s, e, g) for s, e, g in q.passages())
            wounds.extend({(s, e): (qid, s, e, why) for s, e, why in q.wound_spans()}.values())
    naves = nave_gold(conn)
    queries.extend(naves.queries)
    passages.extend(naves.passages)
    with conn.transaction():
        replace_rows(conn, "topic_splits", ("topic_id", "split_key", "split"), ("bigint", "text", "text"),
                     ((tid, k, s) for tid, (k, s) in splits.items()))
        replace_rows(conn, "nave_splits", ("topic_id", "split_key", "split"), ("bigint", "text", "text"), naves.splits)
        replace_rows(conn, "gold_queries", ("query_id", "source", "kind", "split", "query", "expect_abstain", "rationale",
                                            "stance"), ("text", "text", "text", "text", "text", "boolean", "text", "text"), queries)
        replace_rows(conn, "gold_passages", ("query_id", "start_id", "end_id", "grade"),
                     ("text", "integer", "integer", "smallint"), passages)
        replace_rows(conn, "gold_wounds", ("query_id", "start_id", "end_id", "reason"),
                     ("text", "integer", "integer", "text"), wounds)
    topic_q = [q for q in queries if q[1] == "openbible"]
    return GoldStats(
        topics=len(topics), heldout_topics=sum(1 for k, s in splits.values() if s == "heldout"),
        gold_topics=len(topic_q), gold_heldout=sum(1 for q in topic_q if q[3] == "heldout"),
        curated=sum(1 for q in queries if q[1] == "curated"), passages=len(passages),
        nave_queries=len(naves.queries), nave_heldout=sum(1 for q in naves.queries if q[3] == "heldout"),
        nave_entries=len(naves.splits), dev_sentences=sum(1 for q in queries if q[1] == "dev"),
        dev_harm=sum(1 for q in queries if q[1] == "dev_harm"), wounds=len(wounds),
    )
