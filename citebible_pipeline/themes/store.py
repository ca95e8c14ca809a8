"""query_themes, theme_cues, theme_passages, passage_labels and label_vectors, and the judged situations: written together
in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg
from pgvector import Vector

from citebible_pipeline.db.load import copy_rows
from citebible_pipeline.themes.labels import Label
from citebible_pipeline.themes.situations import Situation
from citebible_pipeline.themes.vocabulary import Theme


def write_themes(conn: psycopg.Connection, themes: Sequence[Theme], space_id: int, cue_vectors: np.ndarray,
                 labels: Sequence[Label] = (), label_vectors: np.ndarray | None = None,
                 situations: Sequence[Situation] = (), situation_vectors: np.ndarray | None = None) -> dict[str, int]:
    """Replace the vocabulary, the passages' labels (document expansion) and the judged situations. `cue_vectors`
    holds one row per cue, in theme then cue order; `label_vectors` one row per label, in `labels` order (None: no
    label vectors); `situation_vectors` one row per situation."""
    cues = [(i, cue) for i, t in enumerate(themes, start=1) for cue in dict.fromkeys(t.cues)]
    if len(cues) != len(cue_vectors):
        raise ValueError(f"{len(cues)} cues but {len(cue_vectors)} vectors")
    if label_vectors is not None and len(label_vectors) != len(labels):
        raise ValueError(f"{len(labels)} labels but {len(label_vectors)} label vectors")
    if len(situations) != (0 if situation_vectors is None else len(situation_vectors)):
        raise ValueError(f"{len(situations)} situations but vectors for {0 if situation_vectors is None else len(situation_vectors)}")
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("DELETE FROM situations")  # cascades to their vectors and spans
        cur.execute("DELETE FROM label_vectors")
        cur.execute("DELETE FROM passage_labels")
        cur.execute("DELETE FROM theme_passages")
        cur.execute("DELETE FROM theme_avoid")
        cur.execute("DELETE FROM theme_cues")
        cur.execute("DELETE FROM query_themes")
        copy_rows(cur, "query_themes", ("id", "kind", "key", "name", "rewrite", "split_key"),
                  ("integer", "text", "text", "text", "text", "text"),
                  ((i, t.kind, t.key, t.name, t.rewrite, t.split_key) for i, t in enumerate(themes, start=1)))
        copy_rows(cur, "theme_cues", ("theme_id", "space_id", "cue", "embedding"), ("integer", "integer", "text", "vector"),
                  ((i, space_id, cue, Vector(v)) for (i, cue), v in zip(cues, cue_vectors)))
        n = copy_rows(cur, "theme_passages", ("theme_id", "start_id", "end_id", "weight"),
                      ("integer", "integer", "integer", "real"),
                      ((i, s, e, w) for i, t in enumerate(themes, start=1) for (s, e), w in t.passages.items()))
        copy_rows(cur, "theme_avoid", ("theme_id", "start_id", "end_id", "reason"), ("integer", "integer", "integer", "text"),
                  ((i, s, e, why) for i, t in enumerate(themes, start=1) for s, e, why in dict.fromkeys(t.avoid)))
        m = copy_rows(cur, "passage_labels", ("label_id", "source", "label", "split_key", "start_id", "end_id", "weight"),
                      ("integer", "text", "text", "text", "integer", "integer", "real"),
                      ((i, lab.source, lab.text, lab.split_key, s, e, w) for i, lab in enumerate(labels, start=1)
                       for (s, e), w in lab.passages.items()))
        if label_vectors is not None:
            copy_rows(cur, "label_vectors", ("label_id", "space_id", "embedding"), ("integer", "integer", "vector"),
                      ((i, space_id, Vector(v)) for i, v in enumerate(label_vectors, start=1)))
        copy_rows(cur, "situations", ("id", "need", "sentence"), ("integer", "text", "text"),
                  ((i, s.need, s.sentence) for i, s in enumerate(situations, start=1)))
        if situation_vectors is not None:
            copy_rows(cur, "situation_vectors", ("situation_id", "space_id", "embedding"), ("integer", "integer", "vector"),
                      ((i, space_id, Vector(v)) for i, v in enumerate(situation_vectors, start=1)))
        k = copy_rows(cur, "situation_avoid", ("situation_id", "start_id", "end_id", "reason"),
                      ("integer", "integer", "integer", "text"),
                      ((i, a, b, why) for i, s in enumerate(situations, start=1) for a, b, why in s.avoid))
    return {"themes": len(themes), "cues": len(cues), "passages": n, "labels": len(labels), "labelled_passages": m,
            "label_vectors": 0 if label_vectors is None else len(label_vectors), "situations": len(situations),
            "situation_wounds": k}


def unique_cues(themes: Sequence[Theme]) -> list[str]:
    """The cue texts to embed, in the order write_themes expects."""
    return [cue for t in themes for cue in dict.fromkeys(t.cues)]
