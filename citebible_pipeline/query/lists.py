"""List building (pure): retrieval rows become weighted ranked lists for fusion, the human-vote prior and
the cross-references become lists of their own, candidates get their genre, and the floor's signals are read
off what retrieval saw. Every weight comes from `tuning.TUNING`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from citebible_pipeline.query.fuse import Candidate, RankedList
from citebible_pipeline.query.labels import LabelIndex, search
from citebible_pipeline.query.models import Analysis, SearchOptions
from citebible_pipeline.query.route import Routed, ThemeIndex
from citebible_pipeline.query.startup import EngineData
from citebible_pipeline.query.tuning import TUNING

_LEVEL_WEIGHT = {"chapter": TUNING.chapter_weight, "pericope": TUNING.pericope_weight}


def retrieval_lists(rows, variants, o: SearchOptions) -> list[RankedList]:
    """One list per (variant, retriever, level); `variants` are (Rewrite, theme row), the original first."""
    grouped: dict[tuple[int, str, str], list] = {}
    for v, retriever, level, s, e, sim in rows:
        grouped.setdefault((v, retriever, level), []).append((s, e, level, sim))
    out = []
    for (v, retriever, level), items in grouped.items():
        if retriever == "fulltext":
            if not o.hybrid:
                continue
            weight = TUNING.fulltext_weight
        else:
            if (level == "chapter" and not o.chapters) or (level == "pericope" and not o.pericopes):
                continue
            weight = variants[v][0].weight * _LEVEL_WEIGHT.get(level, 1.0)
        items.sort(key=lambda x: (-x[3], x[0]))
        out.append(RankedList(variants[v][0].source if v else "original", retriever, level, weight, items))
    return out


def prior_list(prior: dict[tuple[int, int], float], pool: int,
               cosines: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> RankedList:
    """The prior's best `pool` passages as a list. A need's Nave's entries list their passages unweighted, so a routed
    need ties a hundred passages at one weight; `cosines` (the query's cosine to a span's best verse) tells the tied
    ones apart, as it does for a need's own candidates. Without it ties go in canonical order, and a lament need's
    list began Genesis 32:11, Genesis 43:14, Exodus 17:4 whatever the sentence said."""
    keys = np.array(list(prior), np.int64).reshape(-1, 2)
    values = np.fromiter(prior.values(), np.float64, len(prior))
    w = np.round(values, 6)
    keep = down_to(w, pool) if cosines is not None else np.arange(len(w))
    cos = cosines(keys[keep, 0], keys[keep, 1]) if cosines is not None and len(keep) else np.zeros(len(keep))
    order = keep[np.lexsort((keys[keep, 1], keys[keep, 0], -cos, -w[keep]))][:pool]
    return RankedList("prior", "prior", "passage", TUNING.prior_list_weight,
                      [(int(s), int(e), "range" if e > s else "verse", float(values[i])) for i, (s, e) in zip(order, keys[order])])


def need_weights(themes: ThemeIndex, theme: int) -> np.ndarray:
    """A theme's passage weights x their specificity, rounded so equal weights tie: the order its best passages are
    chosen in (need_candidates; evidence.verse_rows reads the same passages)."""
    spec = themes.specificity[theme] if themes.specificity is not None else 1.0
    return np.round(themes.passages[theme][2] * spec, 6)


def down_to(w: np.ndarray, depth: int) -> np.ndarray:
    """The rows down to the depth-th best weight and its ties: only they can be chosen, so only they need a cosine."""
    return np.flatnonzero(w >= np.partition(w, len(w) - depth)[len(w) - depth]) if len(w) > depth else np.arange(len(w))


def label_lists(index: LabelIndex, text: str, o: SearchOptions, exclude: frozenset[str]) -> list[RankedList]:
    """Document expansion's passages (query.labels.search) as a list of their own; none when `o.labels` is off or
    no label shares a word with the query."""
    items = search(index, text, limit=o.pool, exclude=exclude) if o.labels else []
    return [RankedList("labels", "labels", "passage", TUNING.label_weight,
                       [(s, e, "range" if e > s else "verse", w) for s, e, w in items])] if items else []


def need_candidates(themes: ThemeIndex, routed: Sequence[Routed], prior: dict[tuple[int, int], float],
                    cosines: Callable[[np.ndarray, np.ndarray], np.ndarray], depth: int,
                    have: set[tuple[int, int]], order: str = "fused",
                    row_cosines: Callable[[int], Callable[[np.ndarray, np.ndarray], np.ndarray]] | None = None
                    ) -> list[Candidate]:
    """Recall for every routed need (RAG-Fusion keeps each sub-query's list in play): each routed theme's `depth` best
    passages join the pool when fusion left them out. They come unscored, after the fused pool, for the reranker to
    judge. `order` "weight": best by the theme's own weight x specificity, equal weights told apart by `cosines` (the
    query's cosine to their best verse: a Nave's entry lists its passages unweighted); "fused": that order and the
    cosine order fused by reciprocal rank (k = TUNING.rrf_k), so the theme says what belongs to the need and the
    sentence which of them fits this reader. `row_cosines` (SearchOptions.need_cosine "row"): each theme's cosines to
    the row it routed best from (`Routed.row`: the clause or need phrase that stated it) instead of the sentence's."""
    out: dict[tuple[int, int], Candidate] = {}
    for r in routed:
        starts, ends, _ = themes.passages[r.theme]
        if not len(starts):
            continue
        w = need_weights(themes, r.theme)
        cos = row_cosines(r.row) if row_cosines is not None else cosines
        for rank, i in enumerate(_need_order(starts, ends, w, cos, depth, order), start=1):
            key = (int(starts[i]), int(ends[i]))
            if key in have:
                continue
            c = out.get(key)
            if c is None:
                c = out[key] = Candidate(key[0], key[1], "range" if key[1] > key[0] else "verse", prior=prior.get(key, 0.0))
            c.hits.append(("prior", "need", "passage", rank))
    return list(out.values())


def _need_order(starts: np.ndarray, ends: np.ndarray, w: np.ndarray, cosines: Callable[[np.ndarray, np.ndarray], np.ndarray],
                depth: int, order: str) -> np.ndarray:
    if order == "weight":
        keep = down_to(w, depth)
        return keep[np.lexsort((starts[keep], -cosines(starts[keep], ends[keep]), -w[keep]))][:depth]
    cos = cosines(starts, ends)
    by_weight, by_cos = np.empty(len(w)), np.empty(len(w))
    by_weight[np.lexsort((starts, -cos, -w))] = np.arange(len(w))
    by_cos[np.lexsort((starts, -cos))] = np.arange(len(w))
    k = TUNING.rrf_k
    return np.lexsort((starts, -(1.0 / (k + 1 + by_weight) + 1.0 / (k + 1 + by_cos))))[:depth]


def crossref_list(refs: Sequence[tuple[int, int, int, int]]) -> RankedList | None:
    """(span index, to_start, to_end, votes) rows as a list, best-voted first; None when there are none."""
    items = [(s, e, "range" if e > s else "verse", float(v)) for _, s, e, v in sorted(refs, key=lambda r: -r[3])]
    return RankedList("crossref", "crossref", "verse", TUNING.crossref_weight, items) if items else None


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
