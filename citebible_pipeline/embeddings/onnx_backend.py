"""ONNX Runtime for the embedder: the offline sentence-transformers model exported once (torch's exporter,
then onnxruntime's BERT fusion) into a cache the project owns, never downloaded.

The cache folder's name carries the weights file's hash, the library versions and EXPORT_VERSION, so a new
model or library re-exports; `manifest.json` records the ONNX file's sha256 (checked on every load: a
changed file is exported again), the torch state-dict hash of the embedding space, and the largest
difference from torch on probe sentences measured at export. Only Transformer -> mean Pooling (-> Normalize)
models are exported (the MiniLM default, the tests' tiny model); anything else stays on torch.

Precision `int8` (README, "Twenty-third step"): the plain graph with its weight matrices quantized to int8 by
onnxruntime's dynamic quantization, per output channel, only the MatMuls whose second input is a weight (the attention
products stay fp32). About twice as fast on these CPUs; its vectors are not torch's (cosine ~0.993 on verses), so it
is a separate embedding space, its weights hash naming the recipe.

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
PRECISIONS = ("fp32", "int8")
# In the int8 space's weights hash and its export folder's name: a new recipe is a new space, exported again.
INT8_RECIPE = "onnxruntime-dynamic-int8-per-channel-constb-per-text-v1"
# The int8 graph's least cosine to torch on PROBES below which the export is refused. Measured 0.980 as the least
# over 3,000 real verses (0.993 on average); a quantization that broke a layer reads far below.
MIN_INT8_COSINE = 0.95


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
    precision: str = "fp32"  # manifests written before int8 existed are fp32
    min_cosine: float = 1.0  # against torch on PROBES, at export


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"unknown embedding precision {precision!r}; expected one of {PRECISIONS}")
    return precision


def export_dir(model_dir: Path, root: Path | None = None, precision: str = "fp32") -> Path:
    versions = json.dumps({**_lib_versions(), "export": EXPORT_VERSION, "opset": OPSET}, sort_keys=True)
    weights = _sha256(model_dir / "model.safetensors")[:16]
    tag = hashlib.sha256(versions.encode()).hexdigest()[:8]
    recipe = hashlib.sha256(INT8_RECIPE.encode()).hexdigest()[:8]
    suffix = "" if check_precision(precision) == "fp32" else f"-{precision}-{recipe}"
    return (root or cache_root()) / f"{model_dir.parent.name}-{model_dir.name}-{weights}-{tag}{suffix}"


def ensure_export(model_dir: Path, root: Path | None = None, precision: str = "fp32") -> tuple[Path, Manifest]:
    """The cached export for this model, these libraries and this precision, exported now if missing or damaged."""
    out = export_dir(model_dir, root, precision)
    manifest = _read_manifest(out)
    if manifest is not None:
        return out, manifest
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent))
    try:
        manifest = _export(model_dir, tmp, precision)
        if out.exists():  # damaged, or another process won the race: the newest complete export replaces it
            shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("exported %s to ONNX (%s) in %.1fs (fused=%s, max |diff| vs torch %.1e, least cosine %.4f): %s",
             model_dir.name, precision, manifest.export_seconds, manifest.fused, manifest.max_abs_diff,
             manifest.min_cosine, out)
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


def _export(model_dir: Path, tmp: Path, precision: str = "fp32") -> Manifest:
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
    weights = state_dict_sha256(st)
    if precision == "int8":
        best, diff, cosine = _quantize(raw, tmp / "int8.onnx", model_dir, max_len, reference)
        weights = hashlib.sha256(f"{weights}:{INT8_RECIPE}".encode()).hexdigest()
    else:
        best, diff, cosine = _fuse(raw, tmp / "fused.onnx", model_dir, max_len, reference, transformer.config)
    os.replace(best, tmp / "model.onnx")
    for path in tmp.glob("*.onnx"):
        if path.name != "model.onnx":
            path.unlink()
    manifest = Manifest(weights_sha256=weights, dims=dims, max_seq_length=max_len,
                        onnx_sha256=_sha256(tmp / "model.onnx"), fused=best.name == "fused.onnx", max_abs_diff=diff,
                        versions=_lib_versions(), export_seconds=round(time.perf_counter() - started, 2),
                        precision=precision, min_cosine=cosine)
    (tmp / "manifest.json").write_text(json.dumps(asdict(manifest), indent=1))
    return manifest


def _against(path: Path, model_dir: Path, max_len: int, reference: np.ndarray, per_text: bool = False
             ) -> tuple[float, float]:
    """(largest absolute difference, least cosine) of the graph's probe vectors from torch's."""
    got = OnnxEncoder(path, model_dir, max_len, device="cpu", per_text=per_text).encode(list(PROBES), 8)
    return float(np.abs(got - reference).max()), float((got * reference).sum(axis=1).min())


def _fuse(raw: Path, fused: Path, model_dir: Path, max_len: int, reference: np.ndarray, cfg) -> tuple[Path, float, float]:
    """fp32: onnxruntime's BERT fusion when it stays within MAX_EXPORT_DIFF of torch, else the plain graph."""
    try:
        from onnxruntime.transformers.optimizer import optimize_model

        optimize_model(str(raw), model_type="bert", num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size,
                       opt_level=1, use_gpu=False).save_model_to_file(str(fused))
    except Exception as exc:  # the fusion is an optimization: the plain graph is as exact
        log.warning("onnxruntime BERT fusion failed (%s); keeping the plain export", exc)
    diffs = {path: _against(path, model_dir, max_len, reference) for path in (fused, raw) if path.exists()}
    best = fused if diffs.get(fused, (1.0,))[0] <= MAX_EXPORT_DIFF else raw
    if diffs[best][0] > MAX_EXPORT_DIFF:
        raise RuntimeError(f"ONNX export of {model_dir} differs from torch by {diffs[best][0]:.2e} "
                           f"(> {MAX_EXPORT_DIFF}); use the torch backend")
    return best, *diffs[best]


def _quantize(raw: Path, out: Path, model_dir: Path, max_len: int, reference: np.ndarray) -> tuple[Path, float, float]:
    """int8: the plain graph's weight MatMuls quantized per output channel (the fused graph's attention op would be
    quantized whole, which measured far worse: cosine 0.958 on verses against 0.993)."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(raw), str(out), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"MatMulConstBOnly": True, "DefaultTensorType": TensorProto.FLOAT})
    diff, cosine = _against(out, model_dir, max_len, reference, per_text=True)
    if cosine < MIN_INT8_COSINE:
        raise RuntimeError(f"int8 ONNX export of {model_dir} reaches cosine {cosine:.4f} to torch on the probes "
                           f"(< {MIN_INT8_COSINE}); use precision fp32")
    return out, diff, cosine


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


# Tokens one call of the graph carries on CPU (padding included), its texts sorted by length. Measured on 2 cores, two
# single-threaded callers, fp32: 2,000 real verses 196/s at 16 a call (~500 tokens) against 162/s batched 64 on one
# two-threaded caller; 300 nine-verse windows 25/s two a call, 26/s alone, against 21/s. The vectors are the same
# to the bit either way (the graph's mean pooling never sees padding).
TOKENS_PER_CALL = 512


class OnnxEncoder:
    """Tokenize as sentence-transformers does (strip, truncate), run the graph on texts of like length, mean-pool over
    the attention mask, normalize.

    On CPU, `callers` threads (default: one per core) share one single-threaded session, each running a few texts of
    like length (at most TOKENS_PER_CALL tokens, at most `batch_size` texts): small products parallelize better across
    calls than inside one. With one caller (and always on CUDA) the session has every thread and a call carries
    `batch_size` texts, as before the twenty-third step (`benchmarks/bench_embeddings.py` (e) sets them side by side).

    `per_text` (the int8 graph): each text runs alone. Dynamic quantization scales a MatMul's activations over the
    whole call, so a batched text's vector depended on its neighbours (cosine down to 0.980 between batch 32 and
    alone, on 1,000 real verses): alone, a text has one vector, whether it is a verse in a build, a query served or
    the same query in the evaluation."""

    def __init__(self, onnx_path: Path, model_dir: Path, max_seq_length: int, device: str = "cpu",
                 threads: int | None = None, per_text: bool = False, callers: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        cores = threads or len(os.sched_getaffinity(0))
        providers = providers_for(device)
        self.callers = max(1, callers or cores) if providers == ["CPUExecutionProvider"] else 1
        self.per_text = per_text
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1 if self.callers > 1 else cores
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=providers)
        self.counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.counter.no_truncation()
        self.counter.no_padding()
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length)
        self.tokenizer.no_padding()  # each call pads its own texts to its longest
        pad = self.tokenizer.token_to_id("[PAD]")
        self.pad = 0 if pad is None else pad
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        encs = self.tokenizer.encode_batch([t.strip() for t in texts])
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))
        calls: list[list[int]] = []
        for i in order:
            last = calls[-1] if calls else None
            fits = last is not None and not self.per_text and len(last) < batch_size and (
                self.callers == 1 or (len(last) + 1) * len(encs[last[0]].ids) <= TOKENS_PER_CALL)
            if fits:
                last.append(i)
            else:
                calls.append([i])
        run = lambda idx: self._run([encs[i] for i in idx])  # noqa: E731
        if self.callers > 1 and len(calls) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(self.callers, len(calls)), thread_name_prefix="embed") as pool:
                vecs = list(pool.map(run, calls))
        else:
            vecs = [run(idx) for idx in calls]
        out = np.empty((len(texts), vecs[0].shape[1] if vecs else 0), np.float32)
        for idx, v in zip(calls, vecs):
            out[idx] = v
        return out

    def _run(self, encs: list) -> np.ndarray:
        width = max(len(e.ids) for e in encs)
        ids = np.full((len(encs), width), self.pad, np.int64)
        mask = np.zeros((len(encs), width), np.int64)
        types = np.zeros((len(encs), width), np.int64)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        m = mask[..., None].astype(np.float32)
        vec = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return (vec / np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)).astype(np.float32, copy=False)

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.counter.encode_batch(list(texts), add_special_tokens=False)]
