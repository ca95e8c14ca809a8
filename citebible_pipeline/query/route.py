"""Stage 2a, route (pure): the query's nearest themes by cue similarity, and the human-vote prior of
the routed themes. Pastoral themes are compared through first-person cues ("someone I love died"),
topic themes through their names, so a reader's sentence reaches the need, not only its words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from citebible_pipeline.query.spans import SPAN, span_keys, span_sums
from citebible_pipeline.query.tuning import TUNING


@dataclass(frozen=True)
class ThemeIndex:
    """Everything routing needs, loaded once: cue vectors grouped by theme (contiguous rows)."""

    keys: list[str]
    kinds: list[str]
    names: list[str]
    rewrites: list[str]
    split_keys: list[str]
    cue_vectors: np.ndarray  # (n_cues, dims), unit norm, rows of one theme contiguous
    cue_starts: np.ndarray  # first cue row of each theme
    rewrite_vectors: np.ndarray  # (n_themes, dims)
    passages: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per theme: start ids, end ids, weights
    specificity: list[np.ndarray] | None = None  # per theme, aligned with its passages (specificity(); None: all 1)
    avoid: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # theme row -> the spans it lists as wounding its reader
    situation_vectors: np.ndarray | None = None  # (n, dims): judged reader sentences (themes/situations.py); None: not built
    situation_avoid: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)  # per situation: the spans wounding it

    @cached_property
    def position(self) -> dict[str, int]:
        """Theme key -> its row, made once (`keys.index` scans every key)."""
        return {k: i for i, k in enumerate(self.keys)}

    @cached_property
    def pastoral_mask(self) -> np.ndarray:
        return np.asarray(self.kinds) == "pastoral"


@dataclass(frozen=True)
class Routed:
    theme: int
    score: float
    weight: float  # share of the routing mass among the routed themes
    row: int = 0  # the row it scored best on: 0 the sentence, then its clauses (and any LLM need phrases)


_CLAUSE = re.compile(r"\s*(?:[,;.!?]+|\s(?:and|but|because|since|so|while|yet)\s)\s*", re.I)


def clauses(text: str) -> list[str]:
    """The parts of a sentence that may each carry a need ("My mother is dying | I'm angry at God");
    empty when the sentence is one clause. Routing scores each theme by its best part."""
    parts = [p.strip() for p in _CLAUSE.split(text) if p and p.strip()]
    parts = [p for p in parts if len(p.split()) >= TUNING.min_clause_words]
    return parts if len(parts) > 1 else []


def theme_scores(index: ThemeIndex, query: np.ndarray, pastoral: bool, exclude: frozenset[str] = frozenset()) -> np.ndarray:
    """(n_themes,) for one query vector, (n_themes, rows) for a matrix of the query and its clauses."""
    single = query.ndim == 1
    sims = index.cue_vectors @ np.atleast_2d(query).T
    scores = np.maximum.reduceat(sims, index.cue_starts, axis=0)
    if pastoral:
        scores = scores + TUNING.pastoral_bonus * index.pastoral_mask[:, None]
    if exclude:  # calibration and training leave a query's own topic (and its near duplicates) out
        scores[excluded(index.split_keys, exclude)] = -1.0
    return scores[:, 0] if single else scores


class SplitKeys(list):
    """The rows' split keys (themes, labels), built once and never changed, with the rows of each key: a training or
    calibration query leaves a key or two out of ~5,000 themes and ~21,000 labels several times a search, and reading
    every key each time was a quarter of a training pool's time (12 of 45 ms a query, 300 training queries)."""

    @cached_property
    def rows(self) -> dict[str, np.ndarray]:
        at: dict[str, list[int]] = {}
        for i, k in enumerate(self):
            at.setdefault(k, []).append(i)
        return {k: np.array(v, np.intp) for k, v in at.items()}


def excluded(split_keys: list[str], exclude: frozenset[str]) -> np.ndarray:
    """Which rows (themes, labels) a query leaves out by split key: its own and its near duplicates'."""
    keys = split_keys if isinstance(split_keys, SplitKeys) else SplitKeys(split_keys)
    out = np.zeros(len(keys), bool)
    for k in exclude:
        if (at := keys.rows.get(k)) is not None:
            out[at] = True
    return out


def route(index: ThemeIndex, query: np.ndarray, pastoral: bool, top: int = TUNING.top_themes, margin: float = TUNING.margin,
          exclude: frozenset[str] = frozenset()) -> list[Routed]:
    """Per row (the whole query, then each clause): the best themes within `margin` of that row's best,
    weighted by a softmax of similarity; each row holds an equal share of the routing mass, so a
    second need in the sentence is not drowned by the first."""
    scores = theme_scores(index, np.atleast_2d(query), pastoral, exclude)
    rows = stated(scores)
    n_rows = len(rows)
    best_score: dict[int, float] = {}
    best_row: dict[int, int] = {}
    mass: dict[int, float] = {}
    for r in rows:
        col = scores[:, r]
        order = np.argsort(-col)[:top]
        best = float(col[order[0]])
        keep = [int(i) for i in order if col[i] >= best - margin]
        w = np.exp((col[keep] - best) / TUNING.temperature)
        for i, x in zip(keep, w / w.sum()):
            if float(col[i]) > best_score.get(i, -np.inf):
                best_score[i], best_row[i] = float(col[i]), r
            mass[i] = mass.get(i, 0.0) + float(x) / n_rows
    ranked = sorted(mass, key=lambda i: (-mass[i], -best_score[i]))[:top]
    total = sum(mass[i] for i in ranked)
    return [Routed(i, best_score[i], mass[i] / total, best_row[i]) for i in ranked]


def nearest_needs(index: ThemeIndex, rows: np.ndarray, k: int, exclude: frozenset[str] = frozenset()) -> list[int]:
    """The k pastoral needs nearest any routing row, routed or not: a sentence routed to topic names still states a need."""
    best = np.where(index.pastoral_mask, theme_scores(index, np.atleast_2d(rows), False, exclude).max(axis=1), -np.inf)
    return [int(i) for i in np.argsort(-best)[:k] if np.isfinite(best[i])]


def held_out(index: ThemeIndex, key: str, exclude: frozenset[str]) -> bool:
    """Whether theme `key` is in the index and left out by its split key (training leaves a query's own theme out)."""
    return (i := index.position.get(key)) is not None and index.split_keys[i] in exclude


def with_cue(index: ThemeIndex, key: str, vecs: np.ndarray, exclude: frozenset[str] = frozenset()) -> np.ndarray:
    """The routing rows (the sentence, its clauses) and theme `key`'s cue nearest the sentence, a row of its own as a
    clause stating that need would be; unchanged when the theme is not in the index or is left out (training)."""
    if (i := index.position.get(key)) is None or held_out(index, key, exclude):
        return vecs
    end = index.cue_starts[i + 1] if i + 1 < len(index.cue_starts) else len(index.cue_vectors)
    cues = index.cue_vectors[index.cue_starts[i]:end]
    return np.vstack([vecs, cues[int(np.argmax(cues @ vecs[0]))]])


def stated(scores: np.ndarray) -> list[int]:
    """The rows (the whole sentence first, then its clauses) that state a need: the sentence always, a clause only
    when some theme is at least as close to it as the sentence's best theme is to the sentence. A clause that
    matches nothing better than the whole does ("now she's found out") states no need of its own, and an equal
    share of the routing mass would hand that share to whatever theme is nearest to a few words."""
    top = scores.max(axis=0)
    return [0] + [r for r in range(1, scores.shape[1]) if top[r] >= top[0]]


def clause_needs(index: ThemeIndex, vectors: np.ndarray, pastoral: bool, exclude: frozenset[str] = frozenset()
                 ) -> list[int]:
    """The best theme of each clause that states a need (`vectors`: the sentence, then its clauses), in order and
    without repeats: the needs a sentence states (stage 9)."""
    if len(vectors) < 3:
        return []
    scores = theme_scores(index, np.atleast_2d(vectors), pastoral, exclude)
    rows = stated(scores)[1:]
    return list(dict.fromkeys(int(np.argmax(scores[:, r])) for r in rows)) if len(rows) > 1 else []


def specificity(passages: list[tuple[np.ndarray, np.ndarray, np.ndarray]], power: float = TUNING.specificity_power,
                layers: Sequence[str] | None = None) -> list[np.ndarray]:
    """Per theme and passage: how specific the passage is to this theme rather than to everything, as a smoothed
    inverse theme frequency log(1 + N/df) / log(1 + N) (N themes, df = themes listing exactly this (start, end)), to
    `power`. A passage listed under one theme keeps 1; a hub listed under every theme keeps log 2 / log(1 + N). Popular
    passages still win where they are specific: the factor scales their vote share, it does not replace it.
    `layers` (a kind per theme): N and df count only the themes of the theme's own layer, so a passage under 15
    of the 30 pastoral needs is a hub among needs, however few of the 5,000 topic names list it."""
    if layers is not None:
        out: list[np.ndarray] = [np.ones(0)] * len(passages)
        for layer in dict.fromkeys(layers):
            rows = [i for i, k in enumerate(layers) if k == layer]
            for i, spec in zip(rows, specificity([passages[i] for i in rows], power)):
                out[i] = spec
        return out
    n = len(passages)
    if n == 0:
        return []
    keys = [span_keys(s, e) for s, e, _ in passages]
    uniq, df = np.unique(np.concatenate(keys), return_counts=True)
    idf = (np.log1p(n / df) / np.log1p(n)) ** power
    return [idf[np.searchsorted(uniq, k)] for k in keys]


def prior_scores(index: ThemeIndex, routed: list[Routed], specific: bool = True) -> dict[tuple[int, int], float]:
    """Passage -> sum over routed themes of routing weight x the passage's share of the theme's votes (x its
    specificity to that theme among its layer's themes when `specific` and the index has it)."""
    if not routed:
        return {}
    starts = np.concatenate([index.passages[r.theme][0] for r in routed])
    ends = np.concatenate([index.passages[r.theme][1] for r in routed])
    spec = index.specificity if specific else None
    weights = np.concatenate([index.passages[r.theme][2] * r.weight * (spec[r.theme] if spec is not None else 1.0)
                              for r in routed])
    keys, sums = span_sums(starts, ends, weights)
    return {(int(k // SPAN), int(k % SPAN)): float(w) for k, w in zip(keys, sums)}
