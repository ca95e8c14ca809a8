"""The verse-function classifier (pure): the mean of a multinomial logistic regression and a LightGBM classifier over
`features.matrix`, trained on the hand-labelled training part, harsh functions assigned only where the mean is sure
enough. The trees see what the linear model cannot (a judgement oracle's words and its passage together): beside the
regression alone, out-of-fold macro F1 0.668 -> 0.661 and judgement is assigned from probability 0.80 (held out: 10
verses, all right) where the regression never was sure enough (decisions).

A harsh function (judgement, violence, rebuke, law) hides a passage from a suffering reader, so a wrong harsh tag
hides a good verse: each harsh class has a threshold, the lowest probability at which the model's out-of-fold
predictions on the training part are right often enough that even the one-sided 95 % lower bound of their precision
(Wilson) reaches the issue's 0.90. Below it the verse takes its best gentle function.

Two models of this kind are trained (`name`): the function model on the stratified sample, which gives each verse its
gentle function, the harsh and grave sums and the order flag the harm stage reads; and the harsh model on that sample
plus verses drawn where violence and rebuke are likely, which alone names a harsh function (a harsh-rich sample moves
the gentle boundary, decisions)."""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

CLASSES = ("comfort", "lament", "praise", "instruction", "command", "rebuke", "judgement", "violence", "law",
           "narrative", "list")
HARSH = ("rebuke", "judgement", "violence", "law")  # what a sufferer or a helper is not shown first (query.harm)
GRAVE = ("judgement", "violence")  # what a reader who did the wrong is not shown first: the way back, not damnation
# what a sufferer or a helper is shown only a few of (query.harm: TUNING.directive_cap): orders about the reader's own
# conduct (confess, reconcile, forgive, stay, be content) beside every invitation to come, cast and trust
DIRECTIVE = ("command", "instruction")
TARGET_PRECISION = 0.90  # the floor, met by the lower bound below (module docstring)
Z = 1.645  # one-sided 95 %: a point estimate over a few predictions is no evidence (decisions: 0.92 on 3 was not)
C_GRID = (0.03, 0.1, 0.3, 1.0)  # regularization tried by out-of-fold macro F1 on the training part (rule)
# The trees: set before measuring, small leaves and a third of the columns each tree, as for a few thousand rows of
# about a thousand columns; not tuned (decisions, fifth and sixth increments).
TREE_PARAMS = {"objective": "multiclass", "n_estimators": 300, "learning_rate": 0.05, "num_leaves": 15,
               "min_child_samples": 10, "colsample_bytree": 0.3, "subsample": 0.8, "subsample_freq": 1,
               "reg_lambda": 1.0, "n_jobs": 2, "verbose": -1, "random_state": 0}
THRESHOLD_GRID = tuple(np.round(np.arange(0.30, 0.96, 0.05), 2))
FOLDS = 5


@dataclass(frozen=True)
class Label:
    id: int
    ref: str
    label: str
    also: str
    split: str  # training | heldout: a quarter held out by a hash of the verse id
    note: str


def heldout(vid: int) -> bool:
    """The held-out quarter: stable across machines (sha256 of the id), never chosen by looking at a verse."""
    return int(hashlib.sha256(str(vid).encode()).hexdigest()[:8], 16) % 100 < 25


def sample(labels: Sequence[Label], n: int) -> list[Label]:
    """n of the labels (all when n is 0 or more than there are), drawn by a hash of the verse id apart from the split's:
    stable across machines, never chosen by looking at a verse. The tests train on a sample (`VoiceConfig`)."""
    if n <= 0 or n >= len(labels):
        return list(labels)
    return sorted(labels, key=lambda lab: hashlib.sha256(f"sample {lab.id}".encode()).hexdigest())[:n]


STRATIFIED = "labels.csv"  # verses read one by one, stratified by book and genre: the function model's labels
# verses drawn where an earlier model read violence or rebuke (and battle words it read gently), read under one guide
# (docs/voice_probe/GUIDE.md; held-out ones by three readers, the majority kept): they train the harsh model only,
# since a harsh-rich sample moves the gentle classes' boundary and with it the order cap (decisions, tenth increment)
HARSH_DRAWN = "labels_harsh.csv"


def load_labels(text: str | None = None, name: str = STRATIFIED) -> list[Label]:
    """A hand-labelled sample (voice/`name`); a bad row raises naming its file and line."""
    text = text if text is not None else resources.files("citebible_pipeline.voice").joinpath(name).read_text("utf-8")
    out = []
    for line, row in enumerate(csv.DictReader(text.splitlines()), start=2):
        if row["label"] not in CLASSES or (row["also"] and row["also"] not in CLASSES):
            raise ValueError(f"voice/{name} line {line}: unknown label {row['label']!r} / {row['also']!r}")
        vid = int(row["id"])
        if row["split"] != ("heldout" if heldout(vid) else "training"):
            raise ValueError(f"voice/{name} line {line}: {row['ref']} is on the wrong side of the split")
        out.append(Label(vid, row["ref"], row["label"], row["also"], row["split"], row["note"]))
    if len({lab.id for lab in out}) != len(out):
        raise ValueError(f"voice/{name}: a verse is labelled twice")
    return out


@dataclass
class VoiceModel:
    classes: tuple[str, ...]
    pipeline: object  # sklearn Pipeline (scaler + logistic regression)
    trees: object  # lightgbm LGBMClassifier
    thresholds: dict[str, float]  # harsh class -> least probability to assign it (> 1: never)
    c: float
    cv: dict = field(default_factory=dict)  # out-of-fold figures on the training part

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        """(n, len(CLASSES)) in CLASSES order: the two models' mean."""
        linear = _ordered(self.pipeline, self.pipeline.predict_proba(X))
        return (linear + _ordered(self.trees, self.trees.predict_proba(X))) / 2

    def assign(self, P: np.ndarray) -> np.ndarray:
        return assign(P, self.thresholds)


def assign(P: np.ndarray, thresholds: dict[str, float]) -> np.ndarray:
    """Class index per row: the most probable class, but a harsh class only at or above its threshold (else the most
    probable gentle class)."""
    best = P.argmax(axis=1)
    limits = np.array([thresholds.get(c, 0.0) for c in CLASSES])
    sure = P[np.arange(len(P)), best] >= limits[best]
    return np.where(sure, best, _best_gentle(P))


def _best_gentle(P: np.ndarray) -> np.ndarray:
    """Per row, the index of the most probable class that is not harsh."""
    return np.where(np.array([c not in HARSH for c in CLASSES]), P, -1.0).argmax(axis=1)


def name(P: np.ndarray, Q: np.ndarray, harsh_thresholds: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Class index and its probability per verse: a harsh function where the harsh model (probabilities Q) is sure of
    it by its own thresholds, else the function model's (P) most probable gentle function."""
    by_harsh = assign(Q, harsh_thresholds)
    harsh = np.isin(by_harsh, [CLASSES.index(c) for c in HARSH])
    voice = np.where(harsh, by_harsh, _best_gentle(P))
    rows = np.arange(len(P))
    return voice, np.where(harsh, Q[rows, voice], P[rows, voice])


def orders(P: np.ndarray, thresholds: dict[str, float]) -> np.ndarray:
    """Whether the function model reads each verse as an order (DIRECTIVE): the order cap's reading, which the harsh
    model never moves."""
    return np.isin(assign(P, thresholds), [CLASSES.index(c) for c in DIRECTIVE])


def _fit(X: np.ndarray, y: np.ndarray, c: float, seed: int = 0):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000, random_state=seed)).fit(X, y)


def _fit_trees(X: np.ndarray, y: np.ndarray):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(**TREE_PARAMS).fit(X, y)


def _oof(X: np.ndarray, y: np.ndarray, fit) -> np.ndarray:
    """Out-of-fold probabilities (CLASSES order) of `fit(X, y)` on the training part, folds stratified and seeded."""
    from sklearn.model_selection import StratifiedKFold

    P = np.zeros((len(y), len(CLASSES)))
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=0)
    for train, test in folds.split(X, y):
        m = fit(X[train], y[train])
        P[test] = _ordered(m, m.predict_proba(X[test]))
    return P


def _ordered(model, p: np.ndarray) -> np.ndarray:
    """A fitted model's probabilities as (n, len(CLASSES)) columns in CLASSES order (a class its rows lacked: 0)."""
    seen = list(model.classes_)  # class indices
    return np.column_stack([p[:, seen.index(k)] if k in seen else np.zeros(len(p)) for k in range(len(CLASSES))])


def lower_bound(right: int, n: int, z: float = Z) -> float:
    """Wilson's lower confidence bound of a proportion (0 for no trials)."""
    if n == 0:
        return 0.0
    p = right / n
    centre, spread = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre - spread) / (1 + z * z / n))


def thresholds_for(P: np.ndarray, y: np.ndarray, also: np.ndarray) -> dict[str, float]:
    """Per harsh class the lowest grid threshold whose out-of-fold precision (right: the reader's label or second
    label) has its lower bound at TARGET_PRECISION or above (1.01, never assigned, if none does)."""
    out = {}
    best = P.argmax(axis=1)
    for c in HARSH:
        k = CLASSES.index(c)
        out[c] = 1.01
        for t in THRESHOLD_GRID:
            hit = (best == k) & (P[:, k] >= t)
            if lower_bound(int(((y[hit] == k) | (also[hit] == k)).sum()), int(hit.sum())) >= TARGET_PRECISION:
                out[c] = float(t)
                break
    return out


def codes(labels: Sequence[str]) -> np.ndarray:
    """CLASSES indices; -1 for an empty label (no second label)."""
    return np.array([CLASSES.index(lab) if lab else -1 for lab in labels])


def train(X: np.ndarray, labels: Sequence[str], also: Sequence[str]) -> VoiceModel:
    """The regression's C by its out-of-fold macro F1; thresholds from the out-of-fold mean of that regression and the
    trees (same folds); then both fit on every training row. Deterministic: the same rows give the same model."""
    y, y_also = codes(labels), codes(also)
    scores = {}
    for c in C_GRID:
        P = _oof(X, y, lambda a, b, c=c: _fit(a, b, c))
        scores[c] = (macro_f1(y, P.argmax(axis=1)), P)
    c = max(C_GRID, key=lambda k: (scores[k][0], -k))
    P = (scores[c][1] + _oof(X, y, _fit_trees)) / 2
    th = thresholds_for(P, y, y_also)
    oof = per_class(y, assign(P, th), y_also)
    return VoiceModel(CLASSES, _fit(X, y, c), _fit_trees(X, y), th, c,
                      {"c_grid_macro_f1": {str(k): round(v[0], 4) for k, v in scores.items()},
                       "mean_macro_f1": round(macro_f1(y, P.argmax(axis=1)), 4), "out_of_fold": oof})


def macro_f1(y: np.ndarray, pred: np.ndarray) -> float:
    table = per_class(y, pred)
    return float(np.mean([r["f1"] for r in table.values() if r["support"]]))


def per_class(y: np.ndarray, pred: np.ndarray, also: np.ndarray | None = None) -> dict[str, dict]:
    """class -> support, predicted, precision (None: never predicted; a prediction is right when it is the reader's
    label or second label), recall (of the readers' labels), f1."""
    out = {}
    also = np.full(len(y), -1) if also is None else also
    for k, c in enumerate(CLASSES):
        npred, sup = int((pred == k).sum()), int((y == k).sum())
        right, found = int(((pred == k) & ((y == k) | (also == k))).sum()), int(((pred == k) & (y == k)).sum())
        p = right / npred if npred else None
        r = found / sup if sup else None
        f1 = 2 * p * r / (p + r) if p and r else 0.0
        out[c] = {"support": sup, "predicted": npred, "precision": None if p is None else round(p, 3),
                  "recall": None if r is None else round(r, 3), "f1": round(f1, 3)}
    return out
