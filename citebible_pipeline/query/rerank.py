"""Stage 7, rerank: pluggable. The default is the model learned from OpenBible's votes (rerank asset)
and stored in `reranker_models`: LightGBM lambdarank over query.features, or a cross-encoder fine-tuned
from the offline MiniLM. A hub name or local path of any sentence-transformers CrossEncoder works too.
CITEBIBLE_RERANKER picks one: features (default) | cross_encoder | none | <CrossEncoder name or path>."""

from __future__ import annotations

import io
import logging
import os
import tarfile
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import psycopg

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.query.features import FEATURES, PoolTables, RerankQuery, compute
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.models import EngineNotReady

log = logging.getLogger(__name__)
CE_INPUTS: tuple[str, ...] = ("query", "passage:best3_verses")  # what a stored cross-encoder was trained on
PASSAGE_VERSES = 3  # a chapter or long range is shown to a cross-encoder as its 3 verses nearest the query
KINDS = ("features", "cross_encoder")
ENV = "CITEBIBLE_RERANKER"


class RerankerError(EngineNotReady):
    """A stored reranker cannot serve: its row is missing, corrupt, or built for other code."""


class RerankerMismatch(RerankerError):
    """The stored model was trained on another feature list than this code computes."""


@dataclass(frozen=True)
class RerankInputs:
    """What a reranker may read besides the pool it is given: a translation's feature tables and verse rows
    (id -> (ref, text, vector)). The engine supplies them; a reranker never reaches into the engine."""

    tables: Callable[[str], PoolTables]
    verse_rows: Callable[[Sequence[int], str], dict[int, tuple[str, str, np.ndarray | None]]]


class Reranker:
    kind = "custom"
    model_id: int | None = None
    learned = False  # True: the model already weighs the human-vote prior, so the boost stage does not add it again

    def rerank(self, query: RerankQuery, cands: list[Candidate], inputs: RerankInputs) -> list[Candidate]:
        raise NotImplementedError


def apply(reranker: Reranker | None, query: RerankQuery, cands: list[Candidate], inputs: RerankInputs,
          blend: bool = True, k: int = 60) -> tuple[list[Candidate], bool]:
    """Stage 7 as served (the engine and training's validation both call it): the reranker's order, and on
    pastoral intent a learned order fused with the order it was given by reciprocal rank (`blend`). The learned
    model is trained mostly on topic names graded by votes that favour famous passages; a reader's stated need
    keeps the routed human judgments' order a say. Returns the order and whether it is learned."""
    if reranker is None:
        return cands, False
    given = {id(c): i for i, c in enumerate(cands)}
    out = reranker.rerank(query, cands, inputs)
    if not (blend and query.pastoral and reranker.learned and out):
        return out, reranker.learned
    fused = {id(c): 1.0 / (k + i + 1) + 1.0 / (k + given.get(id(c), len(out)) + 1) for i, c in enumerate(out)}
    top = max(fused.values())
    for c in out:
        c.score = fused[id(c)] / top
    # the sum is symmetric (learned 1st + given 6th = learned 6th + given 1st): a tie keeps the learned order, since
    # canonical position says nothing of the reader (rule T, README)
    return sorted(out, key=lambda c: -c.score), True


class FeatureReranker(Reranker):
    """LightGBM lambdarank over the pool's own signals; its scores become exp(s - max) so that the soft
    genre boost after it stays a nudge (x1.3 is +0.26 on the model's scale)."""

    kind = "features"
    learned = True

    def __init__(self, model_text: str, features: Sequence[str], tables: PoolTables, model_id: int | None = None) -> None:
        if tuple(features) != FEATURES:
            missing, extra = sorted(set(FEATURES) - set(features)), sorted(set(features) - set(FEATURES))
            raise RerankerMismatch(
                f"reranker model {model_id} was trained on {len(features)} features, this code computes {len(FEATURES)}"
                f" (missing from the model: {missing or 'none'}; unknown to this code: {extra or 'none'}; or another order):"
                " materialize reranker_model again")
        import lightgbm as lgb

        try:
            self.booster = lgb.Booster(model_str=model_text)
        except Exception as exc:  # LightGBMError on a corrupt text
            raise RerankerError(f"reranker model {model_id} does not load: {exc}") from exc
        if self.booster.num_feature() != len(FEATURES):
            raise RerankerMismatch(f"reranker model {model_id} expects {self.booster.num_feature()} features, "
                                   f"this code computes {len(FEATURES)}: materialize reranker_model again")
        self.tables = tables
        self.model_id = model_id
        self._lock = threading.Lock()

    def scores(self, X: np.ndarray) -> np.ndarray:
        with self._lock:
            return np.asarray(self.booster.predict(X, num_threads=1), np.float64)

    def rerank(self, query: RerankQuery, cands: list[Candidate], inputs: RerankInputs) -> list[Candidate]:
        if not cands:
            return cands
        tables = self.tables if query.translation == DEFAULT_TRANSLATION else inputs.tables(query.translation)
        raw = self.scores(compute(tables, query, cands))
        for c, s in zip(cands, np.exp(raw - raw.max())):
            c.score = float(s)
        return sorted(cands, key=lambda c: (-c.score, c.start))


def passage_texts(inputs: RerankInputs, query: RerankQuery, cands: Sequence[Candidate]) -> list[str]:
    """A cross-encoder's view of each candidate: a verse or short range whole, a chapter or long range as
    its PASSAGE_VERSES verses nearest the query, in reading order (one place for training and serving)."""
    ids = sorted({v for c in cands for v in range(c.start, c.end + 1)})
    rows = inputs.verse_rows(ids, query.translation)
    out = []
    for c in cands:
        body = [v for v in range(c.start, c.end + 1) if v in rows]
        if len(body) > PASSAGE_VERSES:
            with_vec = [v for v in body if rows[v][2] is not None]
            sims = np.array([float(rows[v][2] @ query.vector) for v in with_vec])
            body = sorted(with_vec[i] for i in np.argsort(-sims, kind="stable")[:PASSAGE_VERSES])
        out.append(" ".join(rows[v][1] for v in body))
    return out


class CrossEncoderReranker(Reranker):
    """score = (1 - mix) * fused / best_fused + mix * sigmoid(logit): a cross-encoder's raw logits are
    unbounded and must not swamp the fused score or the boosts applied after it."""

    kind = "cross_encoder"

    def __init__(self, model: str, *, mix: float = 0.5, max_length: int | None = None, device: str | None = None,
                 model_id: int | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import CrossEncoder  # never SentenceTransformer: that gives garbage

        self.model = CrossEncoder(model, device=device or _device(), max_length=max_length)
        self.mix = mix
        self.model_id = model_id
        self._lock = threading.Lock()

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        with self._lock:
            logits = np.asarray(self.model.predict([(query, t) for t in texts], activation_fn=None,
                                                   show_progress_bar=False, batch_size=64), np.float64)
        if logits.ndim > 1:  # a two-class head: the positive class
            logits = logits[:, -1]
        return 1.0 / (1.0 + np.exp(-logits))

    def rerank(self, query: RerankQuery, cands: list[Candidate], inputs: RerankInputs) -> list[Candidate]:
        if not cands:
            return cands
        ce = self.scores(query.text, passage_texts(inputs, query, cands))
        top = max(c.score for c in cands) or 1.0
        for c, s in zip(cands, ce):
            c.score = top * ((1 - self.mix) * c.score / top + self.mix * float(s))
        return sorted(cands, key=lambda c: (-c.score, c.start))


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def pack_dir(path: str) -> bytes:
    """A saved model folder as tar.gz bytes (how a fine-tuned cross-encoder lives in Postgres)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(path, arcname="model")
    return buf.getvalue()


def _unpack(blob: bytes, model_id: int) -> str:
    target = os.path.join(tempfile.gettempdir(), f"citebible-reranker-{os.getpid()}-{model_id}")
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            tar.extractall(target, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise RerankerError(f"reranker model {model_id}: the stored archive does not unpack: {exc}") from exc
    return os.path.join(target, "model")


def load_row(row: tuple, tables: PoolTables | None) -> Reranker:
    """A Reranker from a reranker_models row (id, kind, model, features); raises RerankerError."""
    model_id, kind, blob, features = row
    if kind == "features":
        if tables is None:
            raise RerankerError("the feature reranker needs the pool tables")
        try:
            text = bytes(blob).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RerankerError(f"reranker model {model_id} is not a LightGBM text model: {exc}") from exc
        return FeatureReranker(text, features, tables, model_id)
    if kind == "cross_encoder":
        if tuple(features) != CE_INPUTS:
            raise RerankerMismatch(f"cross-encoder {model_id} was trained on inputs {list(features)}, this code builds "
                                   f"{list(CE_INPUTS)}: materialize reranker_cross_encoder again")
        try:
            return CrossEncoderReranker(_unpack(bytes(blob), model_id), model_id=model_id)
        except RerankerError:
            raise
        except Exception as exc:  # a broken config or weights inside the archive
            raise RerankerError(f"cross-encoder {model_id} does not load: {exc}") from exc
    raise RerankerError(f"reranker model {model_id}: unknown kind {kind!r} (known: {', '.join(KINDS)})")


def fetch_row(conn: psycopg.Connection, *, kind: str | None = None, model_id: int | None = None) -> tuple | None:
    """The active row of a kind, or one row by id."""
    if model_id is not None:
        return conn.execute("SELECT id, kind, model, features FROM reranker_models WHERE id = %s", (model_id,)).fetchone()
    return conn.execute("SELECT id, kind, model, features FROM reranker_models WHERE is_active AND kind = %s",
                        (kind,)).fetchone()


def load_chosen(conn: psycopg.Connection, name: str | None, tables: Callable[[], PoolTables]) -> Reranker | None:
    """The reranker `name` chooses (None: CITEBIBLE_RERANKER): the stored model of a kind (none stored yet
    serves the fused order, with a warning; a stored one that cannot serve raises RerankerError), a
    CrossEncoder by name or path, or None for "none". `tables()` gives a feature model its pool tables."""
    which = choice(name)
    if which == "none":
        return None
    if which not in KINDS:
        return CrossEncoderReranker(which)
    row = fetch_row(conn, kind=which)
    if row is None:
        log.warning("no active %s reranker: materialize %s (serving the fused order)", which,
                    "reranker_model" if which == "features" else "reranker_cross_encoder")
        return None
    return load_row(row, tables() if row[1] == "features" else None)


def choice(value: str | None = None) -> str:
    """features | cross_encoder | none | a CrossEncoder name or path (from CITEBIBLE_RERANKER by default)."""
    return (value if value is not None else os.environ.get(ENV, "")).strip() or "features"
