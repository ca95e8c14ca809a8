"""List building (pure): retrieval rows become weighted ranked lists for fusion, the human-vote prior and the
labels become lists of their own, every routed need adds its best passages, candidates get their genre, and the
floor's signals are read off what retrieval saw. Every weight comes from `tuning.TUNING`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from citebible_pipeline.query.fuse import Candidate, RankedList
from citebible_pipeline.query.labels import LabelIndex, search
from citebible_pipeline.query.models import Analysis
from citebible_pipeline.query.route import Routed, ThemeIndex
from citebible_pipeline.query.startup import EngineData
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.query.variant import Variant

_LEVEL_WEIGHT = {"chapter": TUNING.chapter_weight, "pericope": TUNING.pericope_weight}


def retrieval_lists(rows, variants, v: Variant, pericopes: bool) -> list[RankedList]:
    """One list per (variant, retriever, level); `variants` are (Rewrite, theme row), the original first."""
    grouped: dict[tuple[int, str, str], list] = {}
    for row, retriever, level, s, e, sim in rows:
        grouped.setdefault((row, retriever, level), []).append((s, e, level, sim))
    out = []
    for (row, retriever, level), items in grouped.items():
        if retriever == "fulltext":
            if not v.hybrid:
                continue
            weight = TUNING.fulltext_weight
        else:
            if (level == "chapter" and not v.chapters) or (level == "pericope" and not pericopes):
                continue
            weight = variants[row][0].weight * _LEVEL_WEIGHT.get(level, 1.0)
        items.sort(key=lambda x: (-x[3], x[0]))
        out.append(RankedList(variants[row][0].source if row else "original", retriever, level, weight, items))
    return out


def prior_list(prior: dict[tuple[int, int], float], pool: int) -> RankedList:
    """The prior's best `pool` passages as a list, equal weights in canonical order (ordering ties by the sentence's
    cosine was measured and left off: docs/decisions.md)."""
    keys = np.array(list(prior), np.int64).reshape(-1, 2)
    values = np.fromiter(prior.values(), np.float64, len(prior))
    order = np.lexsort((keys[:, 1], keys[:, 0], -np.round(values, 6)))[:pool]
    return RankedList("prior", "prior", "passage", TUNING.prior_list_weight,
                      [(int(s), int(e), "range" if e > s else "verse", float(values[i])) for i, (s, e) in zip(order, keys[order])])


def need_weights(themes: ThemeIndex, theme: int) -> np.ndarray:
    """A theme's passage weights x their specificity, rounded so equal weights tie: the order its best passages are
    chosen in (need_candidates)."""
    spec = themes.specificity[theme] if themes.specificity is not None else 1.0
    return np.round(themes.passages[theme][2] * spec, 6)


def label_lists(index: LabelIndex, text: str, exclude: frozenset[str]) -> list[RankedList]:
    """Document expansion's passages (query.labels.search) as a list of their own; none when no label shares a word
    with the query."""
    items = search(index, text, limit=TUNING.pool, exclude=exclude)
    return [RankedList("labels", "labels", "passage", TUNING.label_weight,
                       [(s, e, "range" if e > s else "verse", w) for s, e, w in items])] if items else []


def need_candidates(themes: ThemeIndex, routed: Sequence[Routed], prior: dict[tuple[int, int], float],
                    cosines: Callable[[np.ndarray, np.ndarray], np.ndarray], depth: int,
                    have: set[tuple[int, int]]) -> list[Candidate]:
    """Recall for every routed need (RAG-Fusion keeps each sub-query's list in play): each routed theme's `depth` best
    passages join the pool when fusion left them out. They come unscored, after the fused pool, for the reranker to
    judge. Best is the theme's own weight x specificity order and the sentence's cosine order (`cosines`: to a span's
    best verse) fused by reciprocal rank (k = TUNING.rrf_k): the theme says what belongs to the need and the sentence
    which of them fits this reader."""
    out: dict[tuple[int, int], Candidate] = {}
    for r in routed:
        starts, ends, _ = themes.passages[r.theme]
        if not len(starts):
            continue
        for rank, i in enumerate(_need_order(starts, ends, need_weights(themes, r.theme), cosines, depth), start=1):
            key = (int(starts[i]), int(ends[i]))
            if key in have:
                continue
            c = out.get(key)
            if c is None:
                c = out[key] = Candidate(key[0], key[1], "range" if key[1] > key[0] else "verse", prior=prior.get(key, 0.0))
            c.hits.append(("prior", "need", "passage", rank))
    return list(out.values())


def _need_order(starts: np.ndarray, ends: np.ndarray, w: np.ndarray, cosines: Callable[[np.ndarray, np.ndarray], np.ndarray],
                depth: int) -> np.ndarray:
    cos = cosines(starts, ends)
    by_weight, by_cos = np.empty(len(w)), np.empty(len(w))
    by_weight[np.lexsort((starts, -cos, -w))] = np.arange(len(w))
    by_cos[np.lexsort((starts, -cos))] = np.arange(len(w))
    k = TUNING.rrf_k
    return np.lexsort((starts, -(1.0 / (k + 1 + by_weight) + 1.0 / (k + 1 + by_cos))))[:depth]


def tag(cands: list[Candidate], data: EngineData) -> list[Candidate]:
    for c in cands:
        c.genre = data.chapter_genres.get(c.start) if c.level == "chapter" else data.genres.get(c.start)
    return cands


def floor_signals(rows, routed, analysis: Analysis) -> dict[str, float]:
    """The relevance floor's inputs (but `lexicon`, added by the caller): best original-query cosines, the best
    theme similarity, how many full-text hits (saturating at the full-text list's length), pastoral intent."""
    verse = max((r[5] for r in rows if r[0] == 0 and r[1] == "dense" and r[2] == "verse"), default=0.0)
    chapter = max((r[5] for r in rows if r[0] == 0 and r[1] == "dense" and r[2] == "chapter"), default=0.0)
    fts = sum(1 for r in rows if r[1] == "fulltext")
    return {"dense_verse": float(verse), "dense_chapter": float(chapter),
            "theme": max((r.score for r in routed), default=0.0),
            "fulltext": math.log1p(fts) / math.log1p(TUNING.fulltext_k), "pastoral": analysis.pastoral_score}
