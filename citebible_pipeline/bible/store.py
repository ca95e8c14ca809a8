"""Writers for the corpus tables (books, verses, chapters): one place that knows their columns."""

from __future__ import annotations

from collections.abc import Iterable

import psycopg
from psycopg import sql

from citebible_pipeline.bible.canon import books
from citebible_pipeline.bible.corpus import (
    CHAPTER_COLUMNS,
    CHAPTER_TYPES,
    TRANSLATION,
    VERSE_COLUMNS,
    VERSE_TYPES,
    ChapterRow,
    VerseRow,
)
from citebible_pipeline.bible.pericopes import Pericope
from citebible_pipeline.db.load import LoadStats, replace_rows

BOOK_COLUMNS = ("book_order", "usfm", "osis", "name", "testament", "default_genre", "chapter_count", "verse_count")
BOOK_TYPES = ("smallint", "text", "text", "text", "text", "text", "smallint", "integer")
THIS_TRANSLATION = (sql.SQL("translation = %s"), (TRANSLATION,))


def write_books(conn: psycopg.Connection) -> LoadStats:
    return replace_rows(conn, "books", BOOK_COLUMNS, BOOK_TYPES, (
        (b.order, b.usfm, b.osis, b.name, b.testament, b.genre, b.chapters, b.verse_count) for b in books()))


def write_verses(conn: psycopg.Connection, rows: Iterable[VerseRow]) -> LoadStats:
    return replace_rows(conn, "verses", VERSE_COLUMNS, VERSE_TYPES, (r.as_tuple() for r in rows), *THIS_TRANSLATION)


def write_chapters(conn: psycopg.Connection, chapters: Iterable[ChapterRow]) -> LoadStats:
    return replace_rows(conn, "chapters", CHAPTER_COLUMNS, CHAPTER_TYPES, (c.as_tuple() for c in chapters),
                        *THIS_TRANSLATION)


def write_pericopes(conn: psycopg.Connection, pericopes: Iterable[Pericope], source: str) -> LoadStats:
    return replace_rows(conn, "pericopes", ("start_id", "end_id", "title", "parallels", "source"),
                        ("integer", "integer", "text", "text", "text"),
                        ((p.start_id, p.end_id, p.title, p.parallels, source) for p in pericopes))
