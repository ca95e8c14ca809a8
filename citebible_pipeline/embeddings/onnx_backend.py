"""ONNX Runtime for the embedder: the offline sentence-transformers model exported once (torch's exporter,
then onnxruntime's BERT fusion) into a cache the project owns, never downloaded.

The cache folder's name carries the weights file's hash, the library versions and EXPORT_VERSION, so a new
model or library re-exports; `manifest.json` records the ONNX file's sha256 (checked on every load: a
changed file is exported again), the torch state-dict hash of the embedding space, and the largest
difference from torch on probe sentences measured at export. Only Transformer -> mean Pooling (-> Normalize)
models are exported (the MiniLM default, the tests' tiny model); anything else stays on torch.

Why not optimum: `optimum-onnx` pins transformers < 4.58 and sentence-transformers 6 needs transformers 5.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
EXPORT_VERSION = 1  # bump when the export code changes what it writes
OPSET = 17
MAX_EXPORT_DIFF = 1e-4  # a fused graph further than this from torch on the probes is discarded for the plain one
PROBES = ("In the beginning, God created the heavens and the earth.", "Jesus wept.",
          "I feel like God is far away and my prayers hit the ceiling.",
          "Yahweh is near to those who have a broken heart, and saves those who have a crushed spirit.")
_LIBS = ("torch", "onnxruntime", "transformers", "sentence-transformers", "tokenizers")


def cache_root() -> Path:
    from citebible_pipeline.db.embedded import dagster_home

    return Path(os.environ.get("CITEBIBLE_ONNX_CACHE") or dagster_home() / "cache" / "onnx")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _lib_versions() -> dict[str, str]:
    out = {}
    for lib in _LIBS:
        try:
            out[lib] = version(lib)
        except PackageNotFoundError:
            out[lib] = "-"
    return out


def unsupported_reason(model_dir: Path) -> str | None:
    """Why this model folder cannot run on the ONNX path (None: it can)."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((model_dir / "modules.json").read_text())]
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError, KeyError) as exc:
        return f"not a sentence-transformers folder with a pooling config ({exc})"
    if modules not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return f"modules {modules} are not Transformer -> Pooling (-> Normalize)"
    if not pooling.get("pooling_mode_mean_tokens") or sum(bool(v) for k, v in pooling.items() if k.startswith("pooling_mode")) != 1:
        return "pooling is not mean pooling alone"
    if not (model_dir / "tokenizer.json").exists() or not (model_dir / "model.safetensors").exists():
        return "no tokenizer.json or model.safetensors"
    return None


def state_dict_sha256(model) -> str:
    """The embedding space's weights hash (the same for both backends: taken from the torch weights)."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Manifest:
    weights_sha256: str
    dims: int
    max_seq_length: int
    onnx_sha256: str
    fused: bool
    max_abs_diff: float  # against torch on PROBES, at export
    versions: dict[str, str]
    export_seconds: float


def export_dir(model_dir: Path, root: Path | None = None) -> Path:
    versions = json.dumps({**_lib_versions(), "export": EXPORT_VERSION, "opset": OPSET}, sort_keys=True)
    weights = _sha256(model_dir / "model.safetensors")[:16]
    tag = hashlib.sha256(versions.encode()).hexdigest()[:8]
    return (root or cache_root()) / f"{model_dir.parent.name}-{model_dir.name}-{weights}-{tag}"


def ensure_export(model_dir: Path, root: Path | None = None) -> tuple[Path, Manifest]:
    """The cached export for this model and these libraries, exported now if missing or damaged."""
    out = export_dir(model_dir, root)
    manifest = _read_manifest(out)
    if manifest is not None:
        return out, manifest
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent))
    try:
        manifest = _export(model_dir, tmp)
        if out.exists():  # damaged, or another process won the race: the newest complete export replaces it
            shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("exported %s to ONNX in %.1fs (fused=%s, max |diff| vs torch %.1e): %s", model_dir.name,
             manifest.export_seconds, manifest.fused, manifest.max_abs_diff, out)
    return out, manifest


def _read_manifest(out: Path) -> Manifest | None:
    try:
        manifest = Manifest(**json.loads((out / "manifest.json").read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if not (out / "model.onnx").exists() or _sha256(out / "model.onnx") != manifest.onnx_sha256:
        log.warning("ONNX cache %s does not match its manifest: exporting again", out)
        return None
    return manifest


def _export(model_dir: Path, tmp: Path) -> Manifest:
    import torch
    from sentence_transformers import SentenceTransformer

    started = time.perf_counter()
    # eager attention exports the pattern onnxruntime's BERT fusion recognizes (sdpa does not fuse)
    st = SentenceTransformer(str(model_dir), device="cpu", model_kwargs={"attn_implementation": "eager"})
    transformer = st[0].auto_model.eval()

    class _Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer  # a submodule: its weights export as initializers

        def forward(self, input_ids, attention_mask, token_type_ids):  # keyword call: transformers 5 reordered
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).last_hidden_state

    sample = st.tokenizer(list(PROBES[:2]), padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    raw = tmp / "raw.onnx"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on constant shapes; the probes below check the numbers
        torch.onnx.export(_Encoder().eval(), tuple(sample[n] for n in names), str(raw), input_names=names,
                          output_names=["last_hidden_state"], opset_version=OPSET, dynamo=False,
                          dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]})
    reference = st.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
    dims, max_len = int(reference.shape[1]), int(st.max_seq_length)
    fused = tmp / "fused.onnx"
    try:
        from onnxruntime.transformers.optimizer import optimize_model

        cfg = transformer.config
        optimize_model(str(raw), model_type="bert", num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size,
                       opt_level=1, use_gpu=False).save_model_to_file(str(fused))
    except Exception as exc:  # the fusion is an optimization: the plain graph is as exact
        log.warning("onnxruntime BERT fusion failed (%s); keeping the plain export", exc)
    diffs = {}
    for path in (fused, raw):
        if path.exists():
            got = OnnxEncoder(path, model_dir, max_len, device="cpu").encode(list(PROBES), 8)
            diffs[path] = float(np.abs(got - reference).max())
    best = fused if diffs.get(fused, 1.0) <= MAX_EXPORT_DIFF else raw
    if diffs[best] > MAX_EXPORT_DIFF:
        raise RuntimeError(f"ONNX export of {model_dir} differs from torch by {diffs[best]:.2e} "
                           f"(> {MAX_EXPORT_DIFF}); use the torch backend")
    os.replace(best, tmp / "model.onnx")
    for path in (raw, fused):
        path.unlink(missing_ok=True)
    manifest = Manifest(weights_sha256=state_dict_sha256(st), dims=dims, max_seq_length=max_len,
                        onnx_sha256=_sha256(tmp / "model.onnx"), fused=best == fused, max_abs_diff=diffs[best],
                        versions=_lib_versions(), export_seconds=round(time.perf_counter() - started, 2))
    (tmp / "manifest.json").write_text(json.dumps(asdict(manifest), indent=1))
    return manifest


def providers_for(device: str) -> list[str]:
    import onnxruntime as ort

    if device in ("cpu", "auto"):
        return ["CPUExecutionProvider"]
    if device == "cuda":
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise RuntimeError("device 'cuda' asked for, but this onnxruntime has no CUDAExecutionProvider "
                               "(install onnxruntime-gpu, or use backend 'torch' or device 'cpu')")
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    raise ValueError(f"unknown device {device!r} (cpu, cuda, auto)")


class OnnxEncoder:
    """Tokenize as sentence-transformers does (strip, truncate, pad to the longest), run the graph, mean-pool
    over the attention mask, normalize."""

    def __init__(self, onnx_path: Path, model_dir: Path, max_seq_length: int, device: str = "cpu",
                 threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or len(os.sched_getaffinity(0))
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=providers_for(device))
        self.counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.counter.no_truncation()
        self.counter.no_padding()
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length)
        pad = self.tokenizer.token_to_id("[PAD]")
        self.tokenizer.enable_padding(pad_id=0 if pad is None else pad, pad_token="[PAD]")
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out: np.ndarray | None = None
        for start in range(0, len(texts), batch_size):
            idx = order[start: start + batch_size]
            enc = self.tokenizer.encode_batch([texts[i].strip() for i in idx])
            feed = {"input_ids": np.array([e.ids for e in enc], np.int64),
                    "attention_mask": np.array([e.attention_mask for e in enc], np.int64),
                    "token_type_ids": np.array([e.type_ids for e in enc], np.int64)}
            hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            mask = feed["attention_mask"][..., None].astype(np.float32)
            vec = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            vec /= np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)
            if out is None:
                out = np.empty((len(texts), vec.shape[1]), np.float32)
            out[idx] = vec
        return out

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.counter.encode_batch(list(texts), add_special_tokens=False)]
