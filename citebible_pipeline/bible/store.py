"""Writers for the corpus tables (books, verses, chapters): one place that knows their columns."""

from __future__ import annotations

from collections.abc import Iterable

import psycopg
from psycopg import sql

from citebible_pipeline.bible.canon import books
from citebible_pipeline.bible.corpus import (
    CHAPTER_COLUMNS,
    CHAPTER_TYPES,
    VERSE_COLUMNS,
    VERSE_TYPES,
    ChapterRow,
    VerseRow,
)
from citebible_pipeline.bible.pericopes import Pericope
from citebible_pipeline.db.load import LoadStats, copy_rows, replace_rows

BOOK_COLUMNS = ("book_order", "usfm", "osis", "name", "testament", "default_genre", "chapter_count", "verse_count")
BOOK_TYPES = ("smallint", "text", "text", "text", "text", "text", "smallint", "integer")


def _translation(key: str) -> tuple[sql.Composable, tuple[str]]:
    return sql.SQL("translation = %s"), (key,)


def write_books(conn: psycopg.Connection) -> int:
    """Upsert the canon's books: every partition writes the same rows, so two at once must not conflict
    (a delete-and-insert would make the second fail on the first's new keys)."""
    updates = sql.SQL(", ").join(sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(c)) for c in BOOK_COLUMNS[1:])
    changed = sql.SQL(" OR ").join(sql.SQL("b.{0} IS DISTINCT FROM EXCLUDED.{0}").format(sql.Identifier(c))
                                   for c in BOOK_COLUMNS[1:])
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE _stage_books (LIKE books) ON COMMIT DROP")
        copy_rows(cur, "_stage_books", BOOK_COLUMNS, BOOK_TYPES, (
            (b.order, b.usfm, b.osis, b.name, b.testament, b.genre, b.chapters, b.verse_count) for b in books()))
        cur.execute(sql.SQL("INSERT INTO books AS b SELECT * FROM _stage_books ORDER BY book_order"
                            " ON CONFLICT (book_order) DO UPDATE SET {} WHERE {}").format(updates, changed))
        return cur.rowcount


def write_verses(conn: psycopg.Connection, rows: Iterable[VerseRow], translation: str) -> LoadStats:
    return replace_rows(conn, "verses", VERSE_COLUMNS, VERSE_TYPES, (r.as_tuple() for r in rows), *_translation(translation))


def write_chapters(conn: psycopg.Connection, chapters: Iterable[ChapterRow], translation: str) -> LoadStats:
    return replace_rows(conn, "chapters", CHAPTER_COLUMNS, CHAPTER_TYPES, (c.as_tuple() for c in chapters),
                        *_translation(translation))


def write_pericopes(conn: psycopg.Connection, pericopes: Iterable[Pericope], source: str) -> LoadStats:
    return replace_rows(conn, "pericopes", ("start_id", "end_id", "title", "parallels", "source"),
                        ("integer", "integer", "text", "text", "text"),
                        ((p.start_id, p.end_id, p.title, p.parallels, source) for p in pericopes))
