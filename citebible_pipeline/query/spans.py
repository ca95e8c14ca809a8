"""Spans as arrays (pure): packed (start, end) keys and merged runs, so routing's specificity and the label features
count a passage by its verses without a loop over them."""

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


def flatten(passages: Sequence[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every list's spans (themes', labels') end to end: starts, ends, and the list each span came from."""
    empty = np.zeros(0, np.int64)
    return (np.concatenate([p[0] for p in passages] + [empty]), np.concatenate([p[1] for p in passages] + [empty]),
            np.repeat(np.arange(len(passages)), [len(p[0]) for p in passages]))


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
