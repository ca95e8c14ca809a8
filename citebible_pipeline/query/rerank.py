"""Stage 7, rerank: pluggable. A sentence-transformers CrossEncoder when one is configured (hub name
or local path), its logits squashed to (0, 1) before they are mixed with the fused score. Without one,
the fused score plus the boosts decides (the learned offline reranker is a separate stage)."""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

import numpy as np

from citebible_pipeline.query.fuse import Candidate

if TYPE_CHECKING:
    from citebible_pipeline.query.engine import Engine

log = logging.getLogger(__name__)


class Reranker:
    def rerank(self, engine: Engine, query: str, cands: list[Candidate]) -> list[Candidate]:
        raise NotImplementedError


class CrossEncoderReranker(Reranker):
    """score = (1 - mix) * fused / best_fused + mix * sigmoid(logit): a cross-encoder's raw logits are
    unbounded and must not swamp the fused score or the boosts applied after it."""

    def __init__(self, model: str, *, mix: float = 0.5, max_chars: int = 1200, device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import CrossEncoder  # never SentenceTransformer: that gives garbage

        self.model = CrossEncoder(model, device=device)
        self.mix = mix
        self.max_chars = max_chars
        self._lock = threading.Lock()

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        with self._lock:
            logits = np.asarray(self.model.predict([(query, t[: self.max_chars]) for t in texts],
                                                   activation_fn=None, show_progress_bar=False), np.float64)
        if logits.ndim > 1:  # a two-class head: the positive class
            logits = logits[:, -1]
        return 1.0 / (1.0 + np.exp(-logits))

    def rerank(self, engine: Engine, query: str, cands: list[Candidate]) -> list[Candidate]:
        if not cands:
            return cands
        from citebible_pipeline.query.retrieve import verse_rows

        ids = sorted({v for c in cands for v in range(c.start, c.end + 1)})
        with engine.pool.connection() as conn:
            rows = verse_rows(conn, engine.space_id, ids)
        texts = [" ".join(rows[v][1] for v in range(c.start, c.end + 1) if v in rows) for c in cands]
        ce = self.scores(query, texts)
        top = max(c.score for c in cands) or 1.0
        for c, s in zip(cands, ce):
            c.score = top * ((1 - self.mix) * c.score / top + self.mix * float(s))
        return sorted(cands, key=lambda c: (-c.score, c.start))


def from_env() -> Reranker | None:
    """CITEBIBLE_RERANKER=<CrossEncoder name or path> turns the cross-encoder stage on."""
    name = os.environ.get("CITEBIBLE_RERANKER")
    return CrossEncoderReranker(name) if name else None
