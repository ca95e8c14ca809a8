"""The reranker's label features (pure): which of the human labels nearest the sentence (and its step-back rewrites)
in meaning list a passage overlapping each candidate (query.labels.nearest gives their spans). Document expansion as
label vectors (issue 22, item 5): a sentence meets a passage through what readers and Nave's called it."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from citebible_pipeline.query.spans import runs_touching, sorted_runs


def label_features(X: np.ndarray, col: Mapping[str, int], sentence: tuple | None, rewrites: tuple | None,
                   starts: np.ndarray, ends: np.ndarray) -> None:
    """Fill the label_* columns from the sentence's nearest labels and the rw_label_* columns from its rewrites'
    (either None: those columns stay 0)."""
    if sentence is not None:
        _sentence(X, col, sentence, starts, ends)
    if rewrites is not None and len(rewrites[0]):
        s, e, sims, block, _ = rewrites
        covers = _covers(s, e, block, starts, ends)
        found = covers.any(axis=1)
        X[found, col["rw_label_cos_max"]] = sims[_firsts(block)][covers[found].argmax(axis=1)]
        X[:, col["rw_label_count"]] = np.log1p(covers.sum(axis=1))


LABEL_TOP = 3  # label_cos_top3 averages the nearest three labels listing the candidate


def _sentence(X: np.ndarray, col: Mapping[str, int], spans: tuple, starts: np.ndarray, ends: np.ndarray) -> None:
    """Which of the sentence's nearest labels list a passage overlapping the candidate: the nearest one's cosine (also
    against the sentence's nearest label, and that label's rank), the mean of the nearest three, how many (log1p),
    and the share of all the labels touching it that are near (a hub listed under thousands of labels meets many near
    labels by its fame alone). The spans come grouped by label, nearest label first."""
    s, e, sims, block, runs = spans
    if len(s) == 0:
        return
    covers = _covers(s, e, block, starts, ends)
    label_sims = sims[_firsts(block)]
    any_ = covers.any(axis=1)
    X[any_, col["label_cos_max"]] = label_sims[covers[any_].argmax(axis=1)]
    top = covers & (np.cumsum(covers, axis=1) <= LABEL_TOP)
    X[any_, col["label_cos_top3"]] = (top[any_] * label_sims).sum(axis=1) / top[any_].sum(axis=1)
    # the same read against the sentence's nearest label: a topic name meets its lexical variants at 0.9, a reader's
    # sentence its best label at 0.6, and the learned order should carry from the first to the second
    X[any_, col["label_cos_rel"]] = X[any_, col["label_cos_max"]] / max(float(label_sims[0]), 1e-6)
    X[any_, col["label_near_rank"]] = 1.0 / (1.0 + covers[any_].argmax(axis=1))
    count = covers.sum(axis=1)
    X[:, col["label_count"]] = np.log1p(count)
    # specificity of the match: the near labels' runs touching the candidate against every label's, counted alike for a
    # verse and a chapter (a chapter touches every label of any of its verses, and so do the near ones)
    near = runs_touching(sorted_runs(s, e, block), starts, ends)
    X[:, col["label_share"]] = near / np.maximum(runs_touching(runs, starts, ends), 1)


def _covers(s: np.ndarray, e: np.ndarray, block: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(candidates, labels): which labels (their spans grouped in blocks, nearest first) list a passage overlapping
    each candidate."""
    overlap = (s[None, :] <= ends[:, None]) & (e[None, :] >= starts[:, None])
    return np.logical_or.reduceat(overlap, _firsts(block), axis=1)


def _firsts(block: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
