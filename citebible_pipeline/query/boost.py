"""Stage 8, boost (pure): the final order mixes the fused rank score with the human-vote prior, then a
soft genre weight on pastoral intent (multiplicative, never x0) and a testament hint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citebible_pipeline.bible.canon import book_of
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.query.variant import Variant


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


def served(cands: list[Candidate], v: Variant, boosts: Mapping[str, float], *, learned: bool, pastoral: bool,
           testament: str | None) -> list[Candidate]:
    """Stage 8 as served (the engine, and training measuring a reranker as served): the prior is added only where no
    learned reranker already weighed it; the genre boost (`boosts`, the set table genre_boosts) only on pastoral
    intent."""
    return final_scores(cands, use_prior=v.prior and not learned, genre_boosts=boosts if (v.boost and pastoral) else None,
                        testament=testament if v.boost else None, testament_of=lambda vid: book_of(vid).testament)
