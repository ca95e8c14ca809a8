"""Development queries from the training side only, for tuning without touching the evaluation:
training topic names (gold: the topic's own voted passages) and the pastoral cues (gold: the voted
passages of the theme's topics). Each query leaves its own theme (and near duplicates) out of routing,
so the prior cannot simply look its answer up."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from citebible_pipeline.gold.metrics import Passage
from citebible_pipeline.query.route import ThemeIndex
from citebible_pipeline.themes.vocabulary import load_pastoral

SEED = 11


@dataclass(frozen=True)
class DevQuery:
    text: str
    exclude: str  # split key left out of routing
    kind: str  # topic | pastoral
    passages: tuple[Passage, ...]


def _gold(index: ThemeIndex, row: int) -> tuple[Passage, ...]:
    starts, ends, weights = index.passages[row]
    return tuple(Passage(int(s), int(e), min(3, max(1, math.ceil(3 * float(w))))) for s, e, w in zip(starts, ends, weights))


def dev_queries(index: ThemeIndex, topics: int = 300, min_passages: int = 5, seed: int = SEED) -> list[DevQuery]:
    rows = [i for i, k in enumerate(index.kinds) if k == "topic" and len(index.passages[i][0]) >= min_passages]
    out = [DevQuery(index.names[i], index.split_keys[i], "topic", _gold(index, i))
           for i in random.Random(seed).sample(rows, min(topics, len(rows)))]
    by_key = {k: i for i, k in enumerate(index.keys)}
    for t in load_pastoral():
        row = by_key.get(f"pastoral:{t.id}")
        if row is not None and len(index.passages[row][0]):
            out += [DevQuery(cue, f"pastoral:{t.id}", "pastoral", _gold(index, row)) for cue in t.cues]
    return out
