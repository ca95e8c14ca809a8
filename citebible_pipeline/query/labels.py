"""Document expansion (pure): a reader's words meet a passage through the human labels it is listed under on the
training side (OpenBible topic names, Nave's sub-entries; themes/labels.py builds them), doc2query-style. BM25 over
the label words picks the query's best labels; a passage scores the sum, over those labels, of the label's BM25
score x the passage's weight in it x its specificity (a smoothed inverse label frequency, route.specificity, so a
hub listed under thousands of labels is discounted as the specific prior discounts it). Lexical on purpose: the
terse labels ("afflictions and adversities: prayer in") share words with a sentence where raw embedding similarity
to them drifted (README, issue 22)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from citebible_pipeline.query.route import SplitKeys, excluded, specificity
from citebible_pipeline.query.spans import SPAN, flatten, sorted_runs, span_sums
from citebible_pipeline.query.text import label_terms
from citebible_pipeline.query.tuning import TUNING

Item = tuple[int, int, float]  # start id, end id, score


@dataclass(frozen=True)
class LabelIndex:
    """Loaded once: the label words' postings, each label's BM25 length norm, split key and passages."""

    texts: list[str]
    split_keys: list[str]
    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (label rows, term frequency)
    idf: dict[str, float]
    norm: np.ndarray  # per label: k1 * (1 - b + b * length / mean length)
    passages: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per label: starts, ends, weight x specificity
    vectors: np.ndarray | None = None  # (labels, dims) unit rows in the active space (label_vectors); None: not built

    def __len__(self) -> int:
        return len(self.texts)

    @cached_property
    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every label's spans end to end (spans.flatten: starts, ends, label of each) and where each label's begin
        (len + 1 offsets)."""
        starts, ends, groups = flatten(self.passages)
        return starts, ends, groups, np.r_[0, np.cumsum(np.bincount(groups, minlength=len(self.passages)))]

    @cached_property
    def columns(self) -> np.ndarray:
        """The label vectors as one contiguous (dims, labels) matrix: a few query vectors times it read it about twice
        as fast as the rows times them (retrieve.Level)."""
        return np.ascontiguousarray(self.vectors.T)

    @cached_property
    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every label's spans merged into runs, sorted (spans.sorted_runs): how many labels touch a passage at all, how
        famous it is among the labels, against which the labels near one sentence are counted (query.features)."""
        starts, ends, groups, _ = self.flat
        return sorted_runs(starts, ends, groups)


EMPTY = LabelIndex([], [], {}, {}, np.zeros(0), [])


def build_index(rows: Iterable[tuple[int, str, str, int, int, float]], k1: float = TUNING.bm25_k1,
                b: float = TUNING.bm25_b, vectors: np.ndarray | None = None) -> LabelIndex:
    """rows: (label id, label text, split key, start id, end id, weight), grouped by label id; `vectors`: one row per
    label in that order."""
    texts: list[str] = []
    keys: list[str] = []
    spans: list[list[list]] = []
    last = None
    for lid, text, key, s, e, w in rows:
        if lid != last:
            texts.append(text), keys.append(key), spans.append([[], [], []])
            last = lid
        spans[-1][0].append(s), spans[-1][1].append(e), spans[-1][2].append(w)
    if not texts:
        return EMPTY
    arrays = [(np.array(a, np.int64), np.array(c, np.int64), np.array(d, np.float64)) for a, c, d in spans]
    passages = [(s, e, w * spec) for (s, e, w), spec in zip(arrays, specificity(arrays))]
    terms = [label_terms(t) for t in texts]
    lengths = np.array([len(t) for t in terms], np.float64)
    norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1.0))
    post: dict[str, dict[int, int]] = defaultdict(dict)
    for row, ts in enumerate(terms):
        for t in ts:
            post[t][row] = post[t].get(row, 0) + 1
    n = len(texts)
    postings = {t: (np.fromiter(d.keys(), np.int64, len(d)), np.fromiter(d.values(), np.float64, len(d)))
                for t, d in post.items()}
    idf = {t: math.log(1 + (n - len(d) + 0.5) / (len(d) + 0.5)) for t, d in post.items()}
    if vectors is not None and len(vectors) != len(texts):
        raise ValueError(f"{len(texts)} labels but {len(vectors)} label vectors")
    return LabelIndex(texts, SplitKeys(keys), postings, idf, norm, passages, vectors)


def label_scores(index: LabelIndex, text: str, k1: float = TUNING.bm25_k1) -> np.ndarray:
    """BM25 of every label for the query's words (0 where none is shared)."""
    scores = np.zeros(len(index), np.float64)
    for t in set(label_terms(text)):
        if t in index.postings:
            rows, tf = index.postings[t]
            scores[rows] += index.idf[t] * tf * (k1 + 1) / (tf + index.norm[rows])
    return scores


def best_labels(index: LabelIndex, text: str, top: int = TUNING.label_top, exclude: frozenset[str] = frozenset()
                ) -> list[tuple[int, float]]:
    """(label row, BM25) of the query's `top` best labels sharing a word with it; labels whose split key is in
    `exclude` are left out (training leaves a query's own label out, as routing leaves its own theme out)."""
    if not len(index):
        return []
    scores = label_scores(index, text)
    if exclude:
        scores[excluded(index.split_keys, exclude)] = 0.0
    return [(int(i), float(scores[i])) for i in np.argsort(-scores, kind="stable")[:top] if scores[i] > 0]


def search(index: LabelIndex, text: str, top: int = TUNING.label_top, limit: int = 50,
           exclude: frozenset[str] = frozenset()) -> list[Item]:
    """The passages of the query's best labels (best_labels), best first, at most `limit`."""
    best = best_labels(index, text, top, exclude)
    if not best:
        return []
    uniq, sums = span_sums(np.concatenate([index.passages[i][0] for i, _ in best]),
                           np.concatenate([index.passages[i][1] for i, _ in best]),
                           np.concatenate([index.passages[i][2] * score for i, score in best]))
    order = np.lexsort((uniq, -sums))[:limit]
    return [(int(uniq[j] // SPAN), int(uniq[j] % SPAN), float(sums[j])) for j in order]


Spans = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple]  # starts, ends, cosine, label block (0 = the
# nearest label), and the index's runs (LabelIndex.runs)


def nearest(index: LabelIndex, query: np.ndarray, top: int = TUNING.label_vector_top,
            exclude: frozenset[str] = frozenset(), sims: np.ndarray | None = None) -> Spans | None:
    """The passages of the query's `top` nearest labels by cosine (the label vectors), nearest label first, each span
    with its label's cosine and block number; labels whose split key is in `exclude` are left out (training). None when
    the index has no vectors. The reranker reads them (query.features): a passage met through the meaning of the
    human labels it is listed under, where the words of the labels and the sentence differ. `query` may be several
    vectors (a label at its nearest one); `sims`: the labels' cosines, when the caller has them."""
    if index.vectors is None or not len(index) or not np.asarray(query).size:
        return None
    if sims is None:
        sims = np.asarray(query, np.float32) @ index.columns
        sims = sims.max(axis=0) if sims.ndim > 1 else sims
    sims = sims.copy()
    if exclude:
        sims[excluded(index.split_keys, exclude)] = -np.inf
    rows = np.argpartition(-sims, top - 1)[:top] if top < len(sims) else np.arange(len(sims))
    rows = rows[np.lexsort((rows, -sims[rows]))]  # nearest first, ties by label order
    rows = rows[np.isfinite(sims[rows])]
    starts, ends, _, offsets = index.flat
    lo, sizes = offsets[rows], offsets[rows + 1] - offsets[rows]
    at = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
    return (starts[at], ends[at], np.repeat(sims[rows].astype(np.float32), sizes), np.repeat(np.arange(len(rows)), sizes),
            index.runs)


def near_labels(index: LabelIndex, query: np.ndarray, rewrites: np.ndarray, exclude: frozenset[str] = frozenset()
                ) -> tuple[Spans | None, Spans | None]:
    """What the reranker's label features read: the sentence's nearest labels, and those nearest to any of its step-back
    rewrites (fewer: a rewrite names one need), so the need the rewrite reached can move the order too. One product
    of the label vectors with the sentence and its rewrites."""
    if index.vectors is None or not len(index):
        return None, None
    sims = np.vstack([np.asarray(query, np.float32)[None, :], np.asarray(rewrites, np.float32)]) @ index.columns
    return (nearest(index, query, TUNING.label_vector_top, exclude, sims[0]),
            nearest(index, rewrites, TUNING.label_rewrite_top, exclude, sims[1:].max(axis=0)) if len(rewrites) else None)
