"""passage_voice's reads and writes: the corpus it classifies (verses, genres, vectors, training-side Nave's labels)
and the one table it replaces atomically."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import psycopg

from citebible_pipeline.bible.canon import span_verses
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.db.load import replace_rows
from citebible_pipeline.embeddings.store import active_space
from citebible_pipeline.gold.access import training_nave_passages
from citebible_pipeline.voice.features import VerseInput
from citebible_pipeline.voice.model import Label, codes, per_class

NAVE_SPAN = 30  # verses: a Nave's listing longer than this (a whole chapter or story) says little of each verse (rule)


def corpus(conn: psycopg.Connection) -> tuple[list[VerseInput], dict[int, np.ndarray], dict[int, list[str]], int]:
    """The WEB's verses with text and genre, their vectors in the active space, and the training-side Nave's labels
    listing each (through gold.access: held-out entries never reach a feature)."""
    active = active_space(conn)
    if active is None:
        raise RuntimeError("no active embedding space: materialize passage_embeddings first")
    space_id, space = active
    rows = conn.execute(
        "SELECT v.id, v.text, g.genre FROM verses v JOIN verse_genres g ON g.id = v.id AND g.translation = v.translation"
        " WHERE v.translation = %s AND v.text <> '' ORDER BY v.id", (DEFAULT_TRANSLATION,)).fetchall()
    if not rows:
        raise RuntimeError("no WEB verses with genres: materialize bible_verses and verse_genres (web) first")
    vectors = {vid: np.asarray(e.to_numpy(), np.float32) for vid, e in conn.cursor(binary=True).execute(
        "SELECT id, embedding FROM passage_embeddings WHERE space_id = %s AND level = 'verse' AND translation = %s",
        (space_id, DEFAULT_TRANSLATION))}
    labels: dict[int, list[str]] = {}
    for p in training_nave_passages(conn):
        if span_verses(p.start_id, p.end_id) <= NAVE_SPAN:
            for vid in range(p.start_id, p.end_id + 1):  # ids past a chapter's end simply match no verse
                labels.setdefault(vid, []).append(p.text)
    return [VerseInput(*r) for r in rows], vectors, labels, space.dims


def write_voice(conn: psycopg.Connection,
                rows: Iterable[tuple[int, str, float, float, float, bool, str | None, str | None]]) -> int:
    """(id, voice, probability, harsh, grave, orders, hand label, hand second label) for every verse, in one
    transaction."""
    stats = replace_rows(conn, "passage_voice", ("id", "voice", "probability", "harsh", "grave", "orders", "hand",
                                                 "hand_also"),
                         ("integer", "text", "real", "real", "real", "boolean", "text", "text"), rows)
    return stats.inserted


def heldout_table(conn: psycopg.Connection, held: Sequence[Label]) -> dict[str, dict]:
    """The model's voice against the held-out hand labels, per class (model.per_class)."""
    got = dict(conn.execute("SELECT id, voice FROM passage_voice WHERE id = ANY(%s)", ([lab.id for lab in held],)).fetchall())
    kept = [lab for lab in held if lab.id in got]
    return per_class(codes([lab.label for lab in kept]), codes([got[lab.id] for lab in kept]),
                     codes([lab.also for lab in kept]))
