"""Evidence for routing (SearchOptions.route_evidence): what a theme lists, not only what it is called. Routing reads a
theme's name or cues, so one shared noun decides it ("I'm furious with God for letting my sister get cancer at thirty"
-> "god caring for widows"); with the switch a theme's score for a row is the mean of that score and the row's best
cosine to a verse of the theme's best passages (down to the `depth`-th weight x specificity and its ties, the passages
`lists.need_candidates` chooses among), so a theme routes when both its name and its passages fit the words."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from citebible_pipeline.query.features import PoolTables, segments
from citebible_pipeline.query.lists import down_to, need_weights
from citebible_pipeline.query.route import ThemeIndex

_CACHE: dict[tuple[int, int, int], tuple[ThemeIndex, PoolTables, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}


def verse_rows(themes: ThemeIndex, verse_ids: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(verse rows of every theme's best passages, concatenated; each theme's first position; which themes have any)."""
    rows, firsts, has = [], [], np.zeros(len(themes.passages), bool)
    at = 0
    for t, (starts, ends, _) in enumerate(themes.passages):
        firsts.append(at)
        if not len(starts):
            continue
        keep = down_to(need_weights(themes, t), depth)
        lo = np.searchsorted(verse_ids, starts[keep])
        hi = np.searchsorted(verse_ids, ends[keep], side="right")
        mine = np.unique(segments(lo, hi)[0])
        if len(mine):
            rows.append(mine)
            has[t] = True
            at += len(mine)
    return (np.concatenate(rows) if rows else np.zeros(0, np.intp)), np.asarray(firsts, np.intp), has


def scorer(themes: ThemeIndex, tables: PoolTables, depth: int) -> Callable[[np.ndarray], np.ndarray]:
    """rows (R, d) -> (n_themes, R): each theme's evidence for each row (0 where it lists no verse with a vector)."""
    key = (id(themes), id(tables), depth)
    if key not in _CACHE:  # made once per snapshot and translation; the objects are held so their ids stay theirs
        _CACHE.clear()
        _CACHE[key] = (themes, tables, verse_rows(themes, tables.verse_ids, depth))
    flat, firsts, has = _CACHE[key][2]

    columns = tables.exact_levels["verse"].columns  # the product exact retrieval makes (retrieve.Level: about twice
    # as fast as the rows times the vectors)

    def evidence(vectors: np.ndarray) -> np.ndarray:
        sims = np.atleast_2d(vectors).astype(np.float32) @ columns  # (R, n_verses)
        out = np.zeros((len(themes.passages), sims.shape[0]), np.float32)
        if len(flat):
            out[has] = np.maximum.reduceat(sims[:, flat], firsts[has], axis=1).T
        return out

    return evidence
