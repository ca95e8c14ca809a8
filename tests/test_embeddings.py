"""Embedder, prefixes, windows, incremental builds and space checks (tiny local model + real verses)."""

import numpy as np
import pytest

from citebible_pipeline.db import connect
from citebible_pipeline.embeddings.build import build_passage_embeddings
from citebible_pipeline.embeddings.documents import fit_windows
from citebible_pipeline.embeddings.embedder import (
    Embedder,
    SpaceMismatchError,
    check_space,
)
from citebible_pipeline.embeddings.prefixes import prefixes_for
from citebible_pipeline.embeddings.store import active_space, dense_search
from tests.embedfixtures import build_tiny_model, load_subset


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    return Embedder()


def test_prefix_registry():
    assert prefixes_for("nomic-ai/nomic-embed-text-v1.5") == ("search_document: ", "search_query: ")
    assert prefixes_for("intfloat/e5-small-v2") == ("passage: ", "query: ")
    assert prefixes_for("intfloat/multilingual-e5-base") == ("passage: ", "query: ")
    assert prefixes_for("BAAI/bge-small-en-v1.5") == ("", "Represent this sentence for searching relevant passages: ")
    assert prefixes_for("sentence-transformers/all-MiniLM-L6-v2") == ("", "")
    assert prefixes_for("sentence-transformers/all-mpnet-base-v2") == ("", "")


def test_prefixes_are_really_applied(tiny_model):
    emb = Embedder(tiny_model, device="cpu", precision="fp32", document_prefix="passage: ", query_prefix="query: ")
    texts = ["Jesus wept.", "Yahweh is my shepherd; I shall lack nothing."]
    raw = emb.model
    docs = emb.encode_documents(texts)
    np.testing.assert_allclose(docs, raw.encode(["passage: " + t for t in texts], normalize_embeddings=True), atol=1e-6)
    np.testing.assert_allclose(emb.encode_queries(texts), raw.encode(["query: " + t for t in texts], normalize_embeddings=True), atol=1e-6)
    assert np.abs(docs - raw.encode(texts, normalize_embeddings=True)).max() > 1e-3  # the prefix changed something
    assert emb.space.document_prefix == "passage: " and emb.space.dims == 32


def test_default_model_is_384d_unit_norm(minilm):
    vecs = minilm.encode_documents(["In the beginning, God created the heavens and the earth.", "Jesus wept."])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert minilm.space.dims == 384 and minilm.space.max_seq_length == 256
    assert (minilm.document_prefix, minilm.query_prefix) == ("", "")


def test_fit_windows_keeps_whole_verses_in_order():
    texts = [f"v{i}" for i in range(10)]
    counts = [30, 30, 30, 100, 5, 5, 120, 200, 10, 10]
    windows = fit_windows(texts, counts, budget=100)
    assert windows == ["v0 v1 v2", "v3", "v4 v5", "v6", "v7", "v8 v9"]
    assert " ".join(windows) == " ".join(texts)


def test_long_real_chapter_is_windowed_within_the_budget(minilm):
    from citebible_pipeline.bible.corpus import build_verses
    from tests.embedfixtures import ARCHIVE

    ps119 = [v.text for v in build_verses(ARCHIVE) if v.book.usfm == "PSA" and v.chapter == 119]
    budget = minilm.window_budget()
    windows = fit_windows(ps119, minilm.token_counts(ps119), budget)
    assert len(windows) > 10
    assert all(n <= budget for n in minilm.token_counts(windows))
    assert " ".join(windows) == " ".join(ps119)


def test_incremental_build_space_swap_and_mismatch(db_url, tiny_model):
    n_verses = load_subset(db_url)
    emb = Embedder(tiny_model, device="cpu", document_prefix="passage: ", query_prefix="query: ")
    with connect(db_url) as conn:
        first = build_passage_embeddings(conn, emb)
        assert first.verse_rows == n_verses and first.chapter_rows == 4 + 1 + 1 + 1 + 1  # Ruth 1-4, Jude, Ps 23, Ps 119, John 11
        assert first.embedded_now == first.verse_rows + first.chapter_rows
        assert first.multi_window_chapters >= 1  # Ps 119 exceeds 64 tokens many times over
        again = build_passage_embeddings(conn, emb)
        assert again.embedded_now == 0 and again.written == 0 and again.removed == 0

        conn.execute("UPDATE verses SET text = text || ' (edited)' WHERE ref = 'Ruth 1:16'")
        conn.commit()
        edited = build_passage_embeddings(conn, emb)
        assert edited.embedded_now == 2  # the verse and its chapter

        sid, stored = active_space(conn)
        check_space(stored, emb.space)
        other = Embedder(tiny_model, device="cpu", document_prefix="", query_prefix="")
        with pytest.raises(SpaceMismatchError, match="document_prefix: index has 'passage: ', embedder has ''"):
            check_space(stored, other.space)

        swapped = build_passage_embeddings(conn, other)  # a new space, built then swapped in
        assert swapped.space_id != sid and swapped.spaces_dropped == 1
        assert swapped.embedded_now == swapped.verse_rows + swapped.chapter_rows
        assert active_space(conn)[0] == swapped.space_id
        assert conn.execute("SELECT count(DISTINCT space_id) FROM passage_embeddings").fetchone()[0] == 1
        q = other.encode_queries(["Where you go, I will go"])[0]
        hits = dense_search(conn, swapped.space_id, 32, "verse", q, k=5)
        assert len(hits) == 5 and all(-1.0 <= h[2] <= 1.0 for h in hits)
        assert conn.execute("SELECT count(*) FROM passage_embeddings WHERE tsv @@ plainto_tsquery('english', 'whither')"
                            ).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM passage_embeddings WHERE level = 'verse' AND "
                            "tsv @@ plainto_tsquery('english', 'shepherd')").fetchone()[0] >= 1


# The ONNX backend's tolerance: the largest absolute difference of any vector component from torch's.
# Measured 1.9e-07 on MiniLM (fp32 rounding); a backend further off than this is a different space.
ONNX_TOLERANCE = 1e-5


def test_onnx_and_torch_give_the_same_vectors_on_200_real_verses(tmp_path, monkeypatch):
    from tests.embedfixtures import ARCHIVE

    from citebible_pipeline.bible.corpus import build_verses

    monkeypatch.setenv("CITEBIBLE_ONNX_CACHE", str(tmp_path / "onnx"))
    verses = [v.text for v in build_verses(ARCHIVE) if v.text][::150][:200]
    assert len(verses) == 200
    onnx, torch = Embedder(backend="onnx", precision="fp32"), Embedder(backend="torch")
    a, b = onnx.encode_documents(verses), torch.encode_documents(verses)
    assert np.abs(a - b).max() <= ONNX_TOLERANCE
    assert onnx.space == torch.space  # one embedding space: the index built by either serves both
    assert onnx.token_counts(verses[:20]) == torch.token_counts(verses[:20])
    info = onnx.describe()
    assert info["backend"] == "onnx" and info["onnx_max_abs_diff_vs_torch"] <= ONNX_TOLERANCE


def test_one_caller_per_core_gives_the_batched_vectors_on_real_verses_and_windows(tmp_path, monkeypatch):
    """The twenty-third step's CPU layout (single-threaded callers, <= TOKENS_PER_CALL a call) changes the speed only."""
    import os
    from pathlib import Path

    from tests.embedfixtures import ARCHIVE

    from citebible_pipeline.bible.corpus import build_verses
    from citebible_pipeline.embeddings.embedder import resolve_model_path
    from citebible_pipeline.embeddings.onnx_backend import OnnxEncoder

    monkeypatch.setenv("CITEBIBLE_ONNX_CACHE", str(tmp_path / "onnx"))
    texts = [v.text for v in build_verses(ARCHIVE) if v.text]
    verses = texts[::97][:300]
    windows = [" ".join(texts[i:i + 9]) for i in range(0, 9 * 40, 9)]  # ~250 tokens each, truncated at 256
    emb = Embedder(backend="onnx", precision="fp32")
    now, info = emb._onnx
    assert now.callers == len(os.sched_getaffinity(0))
    before = OnnxEncoder(Path(info["path"]), Path(resolve_model_path(emb.model_id)), 256, callers=1)
    for xs in (verses, windows, verses[:1]):
        np.testing.assert_allclose(now.encode(xs, 64), before.encode(xs, 64), atol=1e-6)
    mixed = [*windows[:5], *verses[:50], ""]
    np.testing.assert_allclose(now.encode(mixed, 64), before.encode(mixed, 64), atol=1e-6)


# R28's int8 graph against fp32 on real verses: measured 0.980 least and 0.993 mean cosine on 3,000 verses. Below these
# bounds the quantization lost the space, not rounding.
INT8_LEAST_COSINE, INT8_MEAN_COSINE = 0.97, 0.985


def test_int8_is_a_separate_space_close_to_fp32_on_200_real_verses(tmp_path, monkeypatch):
    from tests.embedfixtures import ARCHIVE

    from citebible_pipeline.bible.corpus import build_verses

    monkeypatch.setenv("CITEBIBLE_ONNX_CACHE", str(tmp_path / "onnx"))
    verses = [v.text for v in build_verses(ARCHIVE) if v.text][::150][:200]
    int8, fp32 = Embedder(backend="onnx", precision="int8"), Embedder(backend="onnx", precision="fp32")
    a, b = int8.encode_documents(verses), fp32.encode_documents(verses)
    cosines = (a * b).sum(axis=1)
    assert cosines.min() >= INT8_LEAST_COSINE and cosines.mean() >= INT8_MEAN_COSINE
    assert not np.allclose(a, b, atol=ONNX_TOLERANCE)  # really quantized, not the fp32 graph under another name
    assert int8.space != fp32.space and int8.space.key != fp32.space.key
    with pytest.raises(SpaceMismatchError, match="weights_sha256"):
        check_space(fp32.space, int8.space)  # an fp32 index is never searched with int8 queries
    info = int8.describe()
    assert info["precision"] == "int8" and info["onnx_min_cosine_vs_torch"] >= INT8_LEAST_COSINE
    assert info["onnx_sha256"] != fp32.describe()["onnx_sha256"]
    with pytest.raises(ValueError, match="onnx backend's"):
        Embedder(backend="torch", precision="int8")
    monkeypatch.setenv("CITEBIBLE_EMBED_PRECISION", "int4")
    with pytest.raises(ValueError, match="CITEBIBLE_EMBED_PRECISION"):
        Embedder()


def test_onnx_export_is_cached_checked_and_redone_when_damaged(tiny_model, tmp_path, monkeypatch):
    from pathlib import Path

    from citebible_pipeline.embeddings.onnx_backend import ensure_export, export_dir

    monkeypatch.setenv("CITEBIBLE_ONNX_CACHE", str(tmp_path / "onnx"))
    folder, manifest = ensure_export(Path(tiny_model))
    assert folder == export_dir(Path(tiny_model)) and (folder / "model.onnx").exists()
    assert manifest.max_abs_diff <= ONNX_TOLERANCE
    again = Embedder(tiny_model, backend="onnx", precision="fp32", document_prefix="passage: ", query_prefix="query: ")
    texts = ["Jesus wept.", "Yahweh is my shepherd; I shall lack nothing."]
    np.testing.assert_allclose(again.encode_documents(texts), again.model.encode(["passage: " + t for t in texts],
                               normalize_embeddings=True), atol=ONNX_TOLERANCE)
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    assert ensure_export(Path(tiny_model))[0] == folder and (folder / "model.onnx").stat().st_mtime_ns == stamp
    (folder / "model.onnx").write_bytes(b"damaged")  # a checksum mismatch re-exports
    _, redone = ensure_export(Path(tiny_model))
    assert (folder / "model.onnx").stat().st_size > 1000 and redone.onnx_sha256 == manifest.onnx_sha256


def test_unknown_backend_and_unexportable_models_are_clear(tiny_model, monkeypatch):
    with pytest.raises(ValueError, match="unknown embedding backend"):
        Embedder(tiny_model, backend="tensorrt")
    monkeypatch.setenv("CITEBIBLE_EMBED_BACKEND", "bogus")
    with pytest.raises(ValueError, match="CITEBIBLE_EMBED_BACKEND"):
        Embedder(tiny_model)
    assert Embedder("some-org/not-a-local-folder", backend="onnx").backend == "torch"  # stays on torch, logged
