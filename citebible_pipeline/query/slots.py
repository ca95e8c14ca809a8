"""Stage 9, needs (pure): every stated need answered. When the sentence's clauses route to different themes
("My mother is dying | I'm angry at God"), the top k carries the best candidate of each need, as RAG-Fusion
keeps each sub-query's list in play, but only a candidate the ranking already placed within `depth` (relevance
to the whole sentence first); a single-need sentence is unchanged."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from citebible_pipeline.bible.canon import span_verses
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.spans import runs_of

Need = tuple[np.ndarray, np.ndarray]  # start ids, end ids of the passages a theme lists


def serves(c: Candidate, need: Need) -> bool:
    """At least half of the candidate's verses lie within passages the need lists: a need lists hundreds of passages,
    so a chapter overlaps one of them almost always (mere overlap was measured and left off: docs/decisions.md)."""
    starts, ends = need
    hit = (starts <= c.end) & (ends >= c.start)
    if not hit.any():
        return False
    lo, hi = runs_of(np.maximum(starts[hit], c.start), np.minimum(ends[hit], c.end), np.zeros(int(hit.sum()), np.int64))
    covered = sum(span_verses(a, b) for a, b in zip(lo.tolist(), hi.tolist()))  # the overlaps merged, counted in verses
    return 2 * covered >= span_verses(c.start, c.end)


def fill(cands: list[Candidate], needs: Sequence[Need], k: int, depth: int) -> list[Candidate]:
    """Reorder so each need with a candidate within `depth` has one in the top k. The promoted candidate takes
    the last top slot; the candidate it displaces is the lowest-ranked one that is not the only one serving an
    already-served need, never the first. Fewer than two needs: unchanged."""
    if len(needs) < 2 or len(cands) <= k:
        return cands
    order = list(cands)
    for need in needs:
        top = order[:k]
        if any(serves(c, need) for c in top):
            continue
        found = next((i for i in range(k, min(depth, len(order))) if serves(order[i], need)), None)
        if found is None:
            continue
        victim = next((j for j in range(k - 1, 0, -1) if _replaceable(top, j, needs)), None)
        if victim is None:
            continue
        promoted, displaced = order[found], top[victim]
        rest = [c for i, c in enumerate(order) if i >= k and i != found]
        order = [c for j, c in enumerate(top) if j != victim] + [promoted] + [displaced] + rest
    return order


def _replaceable(top: list[Candidate], j: int, needs: Sequence[Need]) -> bool:
    """Removing top[j] leaves every need the top already serves still served."""
    others = top[:j] + top[j + 1:]
    return all(any(serves(c, n) for c in others) for n in needs if serves(top[j], n))
