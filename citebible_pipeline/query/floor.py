"""Stage 9, floor (pure): a logistic model over retrieval signals says whether anything fits. It is
calibrated (themes/calibrate.py) on training-side topic queries (should answer, each with its own topic left out of the
vocabulary) and on everyday non-Bible questions written for it (should abstain); never on the curated
off-topic queries. Topic similarity alone cannot decide it (OpenBible has a topic "pizza")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from citebible_pipeline.query.text import FLOOR_STOP, LETTERS, plural_base

FEATURES = ("dense_verse", "dense_chapter", "theme", "fulltext", "pastoral", "lexicon")

def lexicon(texts: Iterable[str]) -> frozenset[str]:
    """The words of the Bible text (lower case, a plural s dropped)."""
    return frozenset(plural_base(w) for t in texts for w in LETTERS.findall(t.lower()))


def lexicon_coverage(query: str, words: frozenset[str]) -> float:
    """Share of the query's content words the Bible itself uses: questions about routers, recipes or
    stock prices are mostly words scripture never says, whatever an embedding makes of them."""
    content = [plural_base(w) for w in LETTERS.findall(query.lower()) if w not in FLOOR_STOP and len(w) > 2]
    return sum(w in words for w in content) / len(content) if content else 0.0


@dataclass(frozen=True)
class Floor:
    features: tuple[str, ...]
    coef: np.ndarray
    intercept: float
    threshold: float

    def probability(self, signals: dict[str, float]) -> float:
        x = np.array([signals[f] for f in self.features], dtype=np.float64)
        return float(1.0 / (1.0 + np.exp(-(x @ self.coef + self.intercept))))

    def abstains(self, signals: dict[str, float]) -> bool:
        return self.probability(signals) < self.threshold
