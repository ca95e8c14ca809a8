"""Stage 8b, diversify (pure): maximal marginal relevance over the top of a pastoral answer (Carbonell and
Goldstein, 1998). A reader's need has several sides (grief, anger at God, fear of what comes); the ranking's top
five are often five variations of one side, and the same famous variation answers many readers. MMR picks the
top one by one, each the candidate that is most relevant less most like one already picked, so a second
passage on worry yields to the best passage on something else the sentence needs. xQuAD (Santos, Macdonald and Ounis,
2010) reads the sides as the routed needs themselves: each next passage the most relevant plus the routing weight of
the needs it serves that no chosen passage serves yet."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from citebible_pipeline.query.features import PoolTables, candidate_vectors
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.models import SearchOptions
from citebible_pipeline.query.slots import SERVES, Need
from citebible_pipeline.query.tuning import TUNING


def _greedy(cands: list[Candidate], k: int, depth: int, gain: Callable[[np.ndarray, int], np.ndarray]) -> list[Candidate]:
    """The first `k` of the first `depth` chosen one by one, as MMR and xQuAD choose: the first stays first; each next
    is the unchosen one with the highest `gain(rel, last)` (rel: score over the best score; last: the one chosen just
    before, so the gain can update what the chosen already cover); the unchosen keep their order after the chosen and
    the rest are untouched."""
    n = min(depth, len(cands))
    scores = np.fromiter((c.score for c in cands[:n]), np.float64, n)
    rel = scores / (scores.max() or 1.0)
    chosen, left = [0], np.ones(n, bool)
    left[0] = False
    while len(chosen) < min(k, n):
        pick = int(np.argmax(np.where(left, gain(rel, chosen[-1]), -np.inf)))
        chosen.append(pick)
        left[pick] = False
    return [cands[i] for i in chosen + [i for i in range(n) if left[i]]] + cands[n:]


def mmr(cands: list[Candidate], vectors: np.ndarray, k: int, depth: int, lam: float) -> list[Candidate]:
    """Reorder the first `depth` candidates so the first `k` are chosen by MMR: relevance is the score over the best
    score, likeness the cosine of the candidates' unit vectors (`vectors`, aligned with `cands`; a zero row is like
    nothing). The first stays first; the unchosen keep their order after the chosen; the rest are untouched."""
    n = min(depth, len(cands))
    if n <= 2 or k < 2:
        return cands
    sims = np.asarray(vectors[:n], np.float64) @ np.asarray(vectors[:n], np.float64).T
    closest = np.full(n, -np.inf)  # each candidate's likeness to the nearest chosen one

    def gain(rel: np.ndarray, last: int) -> np.ndarray:
        np.maximum(closest, sims[last], out=closest)
        return lam * rel - (1 - lam) * closest

    return _greedy(cands, k, depth, gain)


def diversify(cands: list[Candidate], tables: PoolTables, k: int = TUNING.slot_k, depth: int = TUNING.slot_depth,
              lam: float = TUNING.mmr_lambda) -> list[Candidate]:
    """MMR over the top `depth` by the candidates' own vectors (the reranker's verse and chapter tables)."""
    return mmr(cands, candidate_vectors(tables, cands[:depth]), k, depth, lam)


def xquad(cands: list[Candidate], needs: Sequence[tuple[float, Need]], serves: Callable[[Candidate, Need], bool],
          k: int = TUNING.slot_k, depth: int = TUNING.slot_depth, lam: float = TUNING.mmr_lambda) -> list[Candidate]:
    """Reorder the first `depth` so the first `k` are chosen by xQuAD over `needs` ((routing weight, need) pairs):
    gain = (1 - lam) x score over the best score + lam x the weight of the needs the candidate serves (`serves`, binary:
    the votes' fame stays out) that no chosen candidate serves yet. The first stays first; the unchosen keep their
    order after the chosen; the rest are untouched. Fewer than two needs: unchanged."""
    n = min(depth, len(cands))
    if n <= 2 or k < 2 or len(needs) < 2:
        return cands
    weights = np.array([w for w, _ in needs], np.float64)
    served = np.array([[serves(c, need) for _, need in needs] for c in cands[:n]], np.float64)  # P(d|a), n x needs
    open_ = np.ones(len(needs))  # prod over the chosen of (1 - P(d'|a))

    def gain(rel: np.ndarray, last: int) -> np.ndarray:
        np.multiply(open_, 1.0 - served[last], out=open_)
        return (1 - lam) * rel + lam * (served @ (weights * open_))

    return _greedy(cands, k, depth, gain)


def stage(cands: list[Candidate], o: SearchOptions, pastoral: bool, tables: Callable[[], PoolTables],
          needs: Callable[[], list[tuple[float, Need]]]) -> list[Candidate]:
    """Stage 8b as the engine runs it, on pastoral intent: MMR (`o.diversify`), then xQuAD over the routed needs
    (`o.xquad`); both measured and left off (README), so the default returns `cands` as they are."""
    if not pastoral:
        return cands
    cands = diversify(cands, tables()) if o.diversify else cands
    return xquad(cands, needs(), SERVES[o.slot_serve]) if o.xquad else cands
