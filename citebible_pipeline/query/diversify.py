"""Stage 8b, diversify (pure): maximal marginal relevance over the top of a pastoral answer (Carbonell and
Goldstein, 1998). A reader's need has several sides (grief, anger at God, fear of what comes); the ranking's top
five are often five variations of one side, and the same famous variation answers many readers. MMR picks the
top one by one, each the candidate that is most relevant less most like one already picked, so a second
passage on worry yields to the best passage on something else the sentence needs."""

from __future__ import annotations

import numpy as np

from citebible_pipeline.query.features import PoolTables, candidate_vectors
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.tuning import TUNING


def mmr(cands: list[Candidate], vectors: np.ndarray, k: int, depth: int, lam: float) -> list[Candidate]:
    """Reorder the first `depth` candidates so the first `k` are chosen by MMR: relevance is the score over the best
    score, likeness the cosine of the candidates' unit vectors (`vectors`, aligned with `cands`; a zero row is like
    nothing). The first stays first; the unchosen keep their order after the chosen; the rest are untouched."""
    n = min(depth, len(cands))
    if n <= 2 or k < 2:
        return cands
    scores = np.fromiter((c.score for c in cands[:n]), np.float64, n)
    rel = scores / (scores.max() or 1.0)
    sims = np.asarray(vectors[:n], np.float64) @ np.asarray(vectors[:n], np.float64).T
    chosen = [0]
    closest = sims[0].copy()  # each candidate's likeness to the nearest chosen one
    left = np.ones(n, bool)
    left[0] = False
    while len(chosen) < min(k, n):
        gain = np.where(left, lam * rel - (1 - lam) * closest, -np.inf)
        pick = int(np.argmax(gain))
        chosen.append(pick)
        left[pick] = False
        closest = np.maximum(closest, sims[pick])
    rest = [i for i in range(n) if left[i]]
    return [cands[i] for i in chosen + rest] + cands[n:]


def diversify(cands: list[Candidate], tables: PoolTables, k: int = TUNING.slot_k, depth: int = TUNING.slot_depth,
              lam: float = TUNING.mmr_lambda) -> list[Candidate]:
    """MMR over the top `depth` by the candidates' own vectors (the reranker's verse and chapter tables)."""
    return mmr(cands, candidate_vectors(tables, cands[:depth]), k, depth, lam)
