"""Spans as arrays (pure): packed (start, end) keys, and how many lists (themes, labels) cover each verse, so routing's
specificity and the label features count a passage by its verses without a loop over them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SPAN = 1_000_000_000  # verse ids are below it: one int64 key per (start, end)


def span_keys(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    return starts * SPAN + ends


def span_sums(starts: np.ndarray, ends: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The summed weight of each distinct (start, end): packed keys (span_keys, ascending) and their sums."""
    keys, inverse = np.unique(span_keys(starts, ends), return_inverse=True)
    return keys, np.bincount(inverse, weights=weights)


Coverage = tuple[np.ndarray, list[np.ndarray]]  # segment cuts along the verse ids, sparse table of the max coverage


def flatten(passages: Sequence[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every list's spans (themes', labels') end to end: starts, ends, and the list each span came from."""
    empty = np.zeros(0, np.int64)
    return (np.concatenate([p[0] for p in passages] + [empty]), np.concatenate([p[1] for p in passages] + [empty]),
            np.repeat(np.arange(len(passages)), [len(p[0]) for p in passages]))


def coverage_table(passages: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Coverage:
    """How many of the lists (themes, labels) cover each stretch of verse ids (coverage_of)."""
    return coverage_of(*flatten(passages))


def runs_of(starts: np.ndarray, ends: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each group's spans (a list's spans share a group) merged into disjoint runs (first id, last id): one sort, the
    groups kept apart by an offset, so a list counts once per verse."""
    if len(starts) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    offset = np.asarray(groups, np.int64) * SPAN
    s, e = np.asarray(starts, np.int64) + offset, np.asarray(ends, np.int64) + offset
    order = np.argsort(s, kind="stable")
    s, reach = s[order], np.maximum.accumulate(e[order])
    first = np.flatnonzero(np.r_[True, s[1:] > reach[:-1]])
    return s[first] - offset[order][first], np.maximum.reduceat(reach, first) - offset[order][first]


def sorted_runs(starts: np.ndarray, ends: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """runs_of, its first ids and last ids each sorted on its own: the shape runs_touching searches."""
    lo, hi = runs_of(starts, ends, groups)
    return np.sort(lo), np.sort(hi)


def runs_touching(runs: tuple[np.ndarray, np.ndarray], starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many runs overlap each span [start, end]: those beginning by its end, less those over before its start.
    `runs`: the runs' first ids and last ids, each sorted on its own (binary searches)."""
    lo, hi = runs
    return np.searchsorted(lo, ends, "right") - np.searchsorted(hi, starts, "left")


def coverage_of(starts: np.ndarray, ends: np.ndarray, groups: np.ndarray) -> Coverage:
    """How many groups cover each stretch of verse ids: their runs (runs_of) counted along the ids (a sweep), and a
    sparse table over the counts for range maxima (span_max)."""
    if len(starts) == 0:
        return np.zeros(0, np.int64), [np.zeros(0, np.int64)]
    lo, hi = runs_of(starts, ends, groups)
    hi = hi + 1
    cuts, inverse = np.unique(np.concatenate([lo, hi]), return_inverse=True)
    cover = np.cumsum(np.bincount(inverse, weights=np.r_[np.ones(len(lo)), -np.ones(len(hi))], minlength=len(cuts)))
    table = [np.rint(cover).astype(np.int64)]  # table[j][i]: the max over cover[i : i + 2**j]
    while 2 ** len(table) <= len(cover):
        prev, w = table[-1], 2 ** (len(table) - 1)
        table.append(np.maximum(prev[:-w], prev[w:]))
    return cuts, table


def span_max(coverage: Coverage, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The most lists covering any one verse of each span (0 for a span no list covers)."""
    cuts, table = coverage
    df = np.zeros(len(starts), np.int64)
    if not len(cuts):
        return df
    i = np.searchsorted(cuts, starts, "right") - 1  # the coverage segment holding each span's first id
    j = np.searchsorted(cuts, ends, "right") - 1
    inside = j >= 0
    i = np.maximum(i, 0)
    level = np.floor(np.log2(np.maximum(j - i + 1, 1))).astype(np.int64)
    for lv in np.unique(level[inside]):
        m = inside & (level == lv)
        df[m] = np.maximum(table[lv][i[m]], table[lv][j[m] - 2 ** lv + 1])
    return df
