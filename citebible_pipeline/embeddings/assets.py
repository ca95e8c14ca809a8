"""Dagster wiring: the embedder resource and the passage_embeddings asset with its checks."""

import time
from functools import lru_cache
from typing import Literal, Optional

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    Config,
    ConfigurableResource,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from citebible_pipeline.bible.assets import bible_chapters, pericopes
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.embeddings.build import build_passage_embeddings
from citebible_pipeline.embeddings.embedder import DEFAULT_MODEL, Embedder
from citebible_pipeline.embeddings.store import LEVELS, active_space, index_name
from citebible_pipeline.genre.assets import verse_genres
from citebible_pipeline.partitions import FIRST, translation_partitions
from citebible_pipeline.resources import PostgresResource


@lru_cache(maxsize=4)
def _embedder(model: str, device: str, batch_size: int, doc: Optional[str], query: Optional[str],
              backend: Optional[str], precision: Optional[str]) -> Embedder:
    return Embedder(model, device=device, batch_size=batch_size, document_prefix=doc, query_prefix=query,
                    backend=backend, precision=precision)


class EmbedderResource(ConfigurableResource):
    """A sentence-transformers model by name or local path; prefixes from the registry unless set."""

    model: str = Field(default=DEFAULT_MODEL, description="model id or local path (default: the offline MiniLM package)")
    device: str = Field(default="auto", description="cpu or cuda (a GPU worker is this setting); auto: CUDA when "
                        "torch sees one, else cpu (the onnx backend runs cpu unless cuda is named)")
    batch_size: int = Field(default=64, description="most texts per forward pass (on CPU the onnx backend also holds "
                            "a pass to 512 tokens, one single-threaded caller per core; a GPU worker takes more, e.g. "
                            "256: dagster_home/cluster/embed_on_gpu.yaml)")
    backend: Optional[str] = Field(default=None, description="onnx (ONNX Runtime over a cached export of the same "
                                   "weights) or torch; None: CITEBIBLE_EMBED_BACKEND, else onnx")
    precision: Optional[str] = Field(default=None, description="fp32 or int8 (onnx only: the weight matrices quantized, "
                                     "about twice as fast on CPU, a separate embedding space); None: "
                                     "CITEBIBLE_EMBED_PRECISION, else the default (README, twenty-third step)")
    document_prefix: Optional[str] = Field(default=None, description="override the registry's document prefix")
    query_prefix: Optional[str] = Field(default=None, description="override the registry's query prefix")

    def get(self) -> Embedder:
        return _embedder(self.model, self.device, self.batch_size, self.document_prefix, self.query_prefix, self.backend,
                         self.precision)


class EmbeddingConfig(Config):
    hnsw_m: int = 16
    hnsw_ef_construction: int = 200  # with ef_search 200: recall@50 0.983 vs exact (benchmarks/bench_embeddings.py)
    # Measured (README, "Level vectors"; again in the twenty-first step, four seeds): deriving chapters saves ~200 s of
    # a build but lowered the dev sentences' hit@5 (0.689 -> 0.653), so chapters are encoded; pericopes are derived
    # while their level is off by default (encoding them, ~200 s, scored better with the level on: set `encode` when
    # you turn it on).
    chapter_vectors: Literal["encode", "derive"] = Field(
        default="encode", description="encode a chapter's text in windows of whole verses, or derive its vector "
        "from its verses' vectors (the re-normalized mean)")
    pericope_vectors: Literal["encode", "derive"] = Field(default="derive", description="the same choice for pericopes")
    books: list[str] = Field(default_factory=list, description="only these books (USFM codes), for a quick trial "
                             "of a translation; empty: all (the check expects all)")


@asset(
    deps=[bible_chapters, verse_genres, pericopes],
    partitions_def=translation_partitions,
    op_tags=FIRST,
    group_name="embeddings",
    kinds={"postgres", "pgvector"},
    code_version="2",
    description="One translation's verse, chapter and pericope vectors in one pgvector table (one embedding space, "
    "encoded on ONNX Runtime or torch per the embedder resource, "
    "document prefix applied; a level's vector encoded from windows of whole verses or derived from its verses' "
    "vectors, per config), a tsvector for full text, HNSW per level and translation. Incremental.",
)
def passage_embeddings(
    context: AssetExecutionContext, config: EmbeddingConfig, postgres: PostgresResource, embedder: EmbedderResource
) -> MaterializeResult:
    emb = embedder.get()
    last = [time.perf_counter(), 0]
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        elapsed = time.perf_counter() - started
        rate = done / elapsed if elapsed else 0.0
        if done == total or time.perf_counter() - last[0] > 10:
            context.log.info(f"embedded {done:,}/{total:,} texts ({rate:,.0f}/s, ETA {(total - done) / rate if rate else 0:,.0f}s)")
            last[0] = time.perf_counter()

    key = context.partition_key
    with postgres.partition_writer("passage_embeddings", key) as conn:
        report = build_passage_embeddings(
            conn, emb, translation=key, books=config.books, chapter_vectors=config.chapter_vectors,
            pericope_vectors=config.pericope_vectors, activate_space=key == DEFAULT_TRANSLATION,
            hnsw_m=config.hnsw_m, ef_construction=config.hnsw_ef_construction, progress=progress)
    space = emb.space
    context.log.info(f"{key}: {report.embedded_now:,} passages embedded, {report.reused:,} unchanged, in "
                     f"{report.total_seconds:.1f}s")
    return MaterializeResult(
        metadata={
            "translation": key,
            "books": MetadataValue.json(config.books or "all"),
            "chapter_vectors": config.chapter_vectors,
            "pericope_vectors": config.pericope_vectors,
            "embed_seconds": round(report.embed_seconds, 1),
            "verse_rows": report.verse_rows,
            "chapter_rows": report.chapter_rows,
            "pericope_rows": report.pericope_rows,
            "embedded_now": report.embedded_now,
            "unchanged": report.reused,
            "removed": report.removed,
            "texts_per_second": round(report.texts_encoded / report.embed_seconds, 1) if report.embed_seconds else 0.0,
            "multi_window_chapters": report.multi_window_chapters,
            "max_windows": report.max_windows,
            "model": space.model_id,
            "embedder": MetadataValue.json(emb.describe()),  # backend (onnx | torch), device, the ONNX file's checksum
            "batch_size": emb.batch_size,
            "dims": space.dims,
            "document_prefix": repr(space.document_prefix),
            "query_prefix": repr(space.query_prefix),
            "space": MetadataValue.json({"id": report.space_id, "key": report.space_key,
                                         "weights_sha256": space.weights_sha256[:16]}),
            "indexes_created": MetadataValue.json(report.indexes_created),
            "seconds": round(report.total_seconds, 1),
        }
    )


@asset_check(asset=passage_embeddings, blocking=True, partitions_def=translation_partitions,
             description="One row per verse with text, per chapter and per pericope of the translation, in the active "
             "space; dims match; unit norm; HNSW present per level.")
def passage_embeddings_complete(context: AssetCheckExecutionContext, postgres: PostgresResource) -> AssetCheckResult:
    key = context.partition_key
    with postgres.connect() as conn:
        active = active_space(conn)
        if active is None:
            return AssetCheckResult(passed=False, metadata={"error": "no active embedding space"})
        sid, space = active
        counts = dict(conn.execute(
            "SELECT level, count(*) FROM passage_embeddings WHERE space_id = %s AND translation = %s GROUP BY level",
            (sid, key)).fetchall())
        expected_verses = conn.execute("SELECT count(*) FROM verses WHERE translation = %s AND NOT is_empty",
                                       (key,)).fetchone()[0]
        expected_chapters = conn.execute("SELECT count(*) FROM chapters WHERE translation = %s", (key,)).fetchone()[0]
        bad_dims = conn.execute(
            "SELECT count(*) FROM passage_embeddings WHERE space_id = %s AND translation = %s"
            " AND vector_dims(embedding) <> %s", (sid, key, space.dims)).fetchone()[0]
        norm_min, norm_max = conn.execute(
            "SELECT min(vector_norm(embedding)), max(vector_norm(embedding)) FROM passage_embeddings WHERE space_id = %s"
            " AND translation = %s", (sid, key)).fetchone()
        indexes = [conn.execute("SELECT to_regclass(%s)", (index_name(sid, lv, key),)).fetchone()[0] for lv in LEVELS]
        pericopes_missing = conn.execute(
            "SELECT count(*) FROM pericopes p WHERE NOT EXISTS (SELECT 1 FROM passage_embeddings e WHERE e.space_id = %s"
            " AND e.translation = %s AND e.level = 'pericope' AND e.id BETWEEN p.start_id AND p.end_id) AND EXISTS"
            " (SELECT 1 FROM verses v WHERE v.translation = %s AND NOT v.is_empty AND v.id BETWEEN p.start_id AND p.end_id)",
            (sid, key, key)).fetchone()[0]
    passed = (counts.get("verse") == expected_verses and counts.get("chapter") == expected_chapters and bad_dims == 0
              and pericopes_missing == 0
              and norm_min is not None and abs(norm_min - 1) < 1e-3 and abs(norm_max - 1) < 1e-3 and all(indexes))
    return AssetCheckResult(
        passed=passed,
        metadata={"verse_rows": counts.get("verse", 0), "expected_verse_rows": expected_verses,
                  "chapter_rows": counts.get("chapter", 0), "expected_chapter_rows": expected_chapters,
                  "pericope_rows": counts.get("pericope", 0), "pericopes_without_a_row": pericopes_missing,
                  "dims": space.dims, "wrong_dims": bad_dims, "norm_min": float(norm_min or 0), "norm_max": float(norm_max or 0),
                  "hnsw_indexes": MetadataValue.json([str(i) for i in indexes])},
    )


embedding_assets = [passage_embeddings]
embedding_checks = [passage_embeddings_complete]
