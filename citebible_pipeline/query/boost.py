"""Stage 8, boost (pure): the final order mixes the fused rank score with the human-vote prior, then a
soft genre weight on pastoral intent (multiplicative, never x0) and a testament hint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citebible_pipeline.query.fuse import Candidate

PRIOR_WEIGHT = 0.6  # final = fused/best_fused + PRIOR_WEIGHT * prior/best_prior
TESTAMENT_BOOST = 1.1


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
            s += PRIOR_WEIGHT * c.prior / top_prior
        if genre_boosts and c.genre:
            s *= max(0.05, genre_boosts.get(c.genre, 1.0))
        if testament and testament_of(c.start) == testament:
            s *= TESTAMENT_BOOST
        c.score = s
    return sorted(cands, key=lambda c: (-c.score, c.start))
