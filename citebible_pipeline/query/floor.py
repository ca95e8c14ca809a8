"""Stage 9, floor (pure): a logistic model over retrieval signals says whether anything fits. It is
calibrated on training-side topic queries (should answer, each with its own topic left out of the
vocabulary) and on everyday non-Bible questions written for it (should abstain); never on the curated
off-topic queries. Topic similarity alone cannot decide it (OpenBible has a topic "pizza")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from citebible_pipeline.query.text import FLOOR_STOP, LETTERS, plural_base
from citebible_pipeline.query.tuning import TUNING

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


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, iters: int = 3000, lr: float = 0.5
                 ) -> tuple[np.ndarray, float]:
    """Class-balanced L2 logistic regression by gradient descent (a few hundred rows, five features)."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    w_pos = 0.5 / max(1, y.sum())
    w_neg = 0.5 / max(1, (1 - y).sum())
    sw = np.where(y == 1, w_pos, w_neg)
    coef = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(x @ coef + b)))
        g = sw * (p - y)
        coef -= lr * (x.T @ g + l2 * coef)
        b -= lr * g.sum()
    return coef, float(b)


def calibrate(pos: Sequence[dict[str, float]], neg: Sequence[dict[str, float]], max_false_abstain: float = TUNING.max_false_abstain
              ) -> tuple[Floor, dict]:
    """Fit, then set the threshold as high as it can go while at most `max_false_abstain` of the
    answerable queries abstain (answering is the costly side to lose)."""
    if len(pos) < 10 or len(neg) < 10:
        raise ValueError(f"calibration needs >= 10 queries on each side, got {len(pos)} and {len(neg)}")
    x = np.array([[s[f] for f in FEATURES] for s in (*pos, *neg)])
    y = np.array([1] * len(pos) + [0] * len(neg))
    coef, b = fit_logistic(x, y)
    p = 1.0 / (1.0 + np.exp(-(x @ coef + b)))
    p_pos = np.sort(p[: len(pos)])
    threshold = float(p_pos[int(np.floor(max_false_abstain * len(pos)))])
    floor = Floor(FEATURES, coef, b, threshold)
    metrics = {
        "answerable": len(pos), "everyday": len(neg), "threshold": round(threshold, 4),
        "answerable_abstained": round(float((p[: len(pos)] < threshold).mean()), 4),
        "everyday_abstained": round(float((p[len(pos):] < threshold).mean()), 4),
        "coef": dict(zip(FEATURES, (round(float(c), 4) for c in coef))), "intercept": round(b, 4),
    }
    return floor, metrics
