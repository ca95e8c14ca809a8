"""Stage 4, fuse (pure): weighted reciprocal rank fusion (k=60) that keeps provenance."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from citebible_pipeline.query.tuning import TUNING



@dataclass
class Candidate:
    start: int
    end: int
    level: str  # verse | range | chapter
    score: float = 0.0
    prior: float = 0.0  # human-vote prior of the passage for this query (0 when no routed theme voted it)
    dense: float = 0.0  # best cosine any dense retriever saw
    hits: list[tuple[str, str, str, int]] = field(default_factory=list)  # (variant, retriever, level, rank)
    genre: str | None = None
    pin: int | None = None  # the verse shown first, where the do-no-harm stage chose it for this reader (harm.Voices.pin_for)

    @property
    def key(self) -> tuple[int, int]:
        return (self.start, self.end)

    def copy(self) -> Candidate:
        """An independent copy (its own provenance list): the stages after fusion rescore in place."""
        return Candidate(self.start, self.end, self.level, self.score, self.prior, self.dense, list(self.hits), self.genre,
                         self.pin)


@dataclass(frozen=True)
class RankedList:
    """One retriever's ranking for one query variant: items are (start, end, level, similarity)."""

    variant: str
    retriever: str
    level: str
    weight: float
    items: Sequence[tuple[int, int, str, float]]


def fuse(lists: Iterable[RankedList], k: int = TUNING.rrf_k, prior: dict[tuple[int, int], float] | None = None) -> list[Candidate]:
    """Sum of weight / (k + rank) over every list a candidate appears in, best first (ties by id)."""
    pool: dict[tuple[int, int], Candidate] = {}
    for lst in lists:
        if lst.weight <= 0:
            continue
        for rank, (start, end, level, sim) in enumerate(lst.items, start=1):
            c = pool.get((start, end))
            if c is None:
                c = pool[(start, end)] = Candidate(start, end, level)
            c.score += lst.weight / (k + rank)
            c.hits.append((lst.variant, lst.retriever, lst.level, rank))
            if lst.retriever == "dense":
                c.dense = max(c.dense, sim)
    for key, c in pool.items():
        c.prior = (prior or {}).get(key, 0.0)
    return sorted(pool.values(), key=lambda c: (-c.score, c.start, c.end))


RETRIEVERS = ("dense", "fulltext", "labels")  # lists that search the text or its labels; the prior and cross-references
# are judgments of routed themes and of other candidates


def admit(fused: list[Candidate], pool: int, depth: int) -> list[Candidate]:
    """The pool after fusion: the fused top `pool`, and every candidate a retrieval list ranked within its own top
    `depth`, in fused order. Recall first: a prior list weighted 2 fills a 50-slot pool by itself (its 60th passage
    outscores any other list's first), so without this a rewrite's or the query's own best hit never reaches the
    reranker that could judge it."""
    if depth <= 0:
        return fused[:pool]
    return [c for i, c in enumerate(fused)
            if i < pool or any(h[1] in RETRIEVERS and h[3] <= depth for h in c.hits)]
