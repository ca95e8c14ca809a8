"""Stage 8, boost (pure): the final order mixes the fused rank score with the human-vote prior, then a
soft genre weight on pastoral intent (multiplicative, never x0) and a testament hint."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from citebible_pipeline.bible.canon import book_of
from citebible_pipeline.query import duty
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.models import SearchOptions
from citebible_pipeline.query.tuning import TUNING


def learned_boosts(kinds: Sequence[str], passages: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                   genres: Mapping[int, str], power: float = TUNING.learned_boost_power) -> dict[str, float]:
    """Genre weights as the training side shows them (SearchOptions.genre_weights 'learned'): a genre's lift is its
    share of the pastoral needs' human-judged passage weight over its share of the other themes' (a passage counts by
    its first verse's genre, as a candidate does), taken to `power` so it stays a soft factor. The set table
    (genre_boosts) was written by hand; this one is read from the votes and Nave's listings."""
    need: dict[str, float] = defaultdict(float)
    rest: dict[str, float] = defaultdict(float)
    for kind, (starts, _ends, weights) in zip(kinds, passages):
        side = need if kind == "pastoral" else rest
        for start, w in zip(starts.tolist(), weights.tolist()):
            if (genre := genres.get(start)) is not None:
                side[genre] += w
    total_need, total_rest = sum(need.values()), sum(rest.values())
    if not total_need or not total_rest:
        return {}
    return {g: ((need.get(g, 0.0) / total_need) / (w / total_rest)) ** power for g, w in rest.items() if w > 0}


def final_scores(cands: Sequence[Candidate], *, use_prior: bool, genre_boosts: Mapping[str, float] | None,
                 testament: str | None, testament_of) -> list[Candidate]:
    """Rescore in place (score becomes the final score) and return best first."""
    if not cands:
        return []
    top = max(c.score for c in cands) or 1.0
    top_prior = max(c.prior for c in cands) or 1.0
    for c in cands:
        s = c.score / top
        if use_prior:
            s += TUNING.prior_weight * c.prior / top_prior
        if genre_boosts and c.genre:
            s *= max(TUNING.min_genre_boost, genre_boosts.get(c.genre, 1.0))
        if testament and testament_of(c.start) == testament:
            s *= TUNING.testament_boost
        c.score = s
    return sorted(cands, key=lambda c: -c.score)  # stable: passages left equal keep the order they came in (rule T)


def served(cands: list[Candidate], o: SearchOptions, data, *, learned: bool, pastoral: bool,
           testament: str | None) -> list[Candidate]:
    """Stage 8 as served (the engine, and training measuring a reranker as served; `data`: the EngineData searched, not
    imported here, as startup imports this module):
    the prior is added only where no learned reranker already weighed it; the genre boost only where `pastoral`
    (intent, or SearchOptions.genre_scope)."""
    weights = data.boosts if o.genre_weights == "set" else data.learned_boosts
    out = final_scores(cands, use_prior=o.prior and not learned, genre_boosts=weights if (o.boost and pastoral) else None,
                       testament=testament if o.boost else None, testament_of=lambda vid: book_of(vid).testament)
    return duty.weigh(out, data.duties, data.duty_lift) if o.duty_labels and o.boost and pastoral else out
