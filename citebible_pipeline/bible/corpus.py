"""Archive of USFM books -> verse and chapter rows (pure; no database)."""

from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from citebible_pipeline.bible.canon import (
    PROTESTANT_BOOKS,
    Book,
    by_order,
    by_usfm,
    verse_id,
)
from citebible_pipeline.bible.references import format_id, format_range
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION, translation as get_translation
from citebible_pipeline.bible.usfm import (
    ParsedVerse,
    UsfmError,
    decode_usfm,
    parse_usfm,
)

log = logging.getLogger(__name__)

VERSE_COLUMNS = (
    "translation", "id", "book_order", "usfm_book", "osis_book", "book_name", "chapter", "verse", "verse_end",
    "ref", "testament", "text", "is_empty", "is_poetry", "paragraph_start", "psalm_title", "footnotes", "strongs",
    "words_of_jesus",
)
VERSE_TYPES = (
    "text", "integer", "smallint", "text", "text", "text", "smallint", "smallint", "smallint",
    "text", "text", "text", "boolean", "boolean", "boolean", "text", "text[]", "text[]", "real",
)
CHAPTER_COLUMNS = (
    "translation", "id", "book_order", "usfm_book", "osis_book", "book_name", "chapter", "verse_start",
    "verse_end", "ref", "testament", "text", "verse_count",
)
CHAPTER_TYPES = (
    "text", "integer", "smallint", "text", "text", "text", "smallint", "smallint", "smallint", "text", "text",
    "text", "smallint",
)


@dataclass(frozen=True, slots=True)
class VerseRow:
    translation: str
    id: int
    book: Book
    chapter: int
    verse: int
    verse_end: int
    ref: str
    text: str
    is_poetry: bool
    paragraph_start: bool
    psalm_title: str | None
    footnotes: tuple[str, ...]
    strongs: tuple[str, ...]
    words_of_jesus: float

    def as_tuple(self) -> tuple:
        b = self.book
        return (
            self.translation, self.id, b.order, b.usfm, b.osis, b.name, self.chapter, self.verse, self.verse_end,
            self.ref, b.testament, self.text, self.text == "", self.is_poetry, self.paragraph_start,
            self.psalm_title, list(self.footnotes), list(self.strongs), self.words_of_jesus,
        )


@dataclass(frozen=True, slots=True)
class ChapterRow:
    translation: str
    id: int
    book: Book
    chapter: int
    verse_start: int
    verse_end: int
    ref: str
    text: str
    verse_count: int

    def as_tuple(self) -> tuple:
        b = self.book
        return (
            self.translation, self.id, b.order, b.usfm, b.osis, b.name, self.chapter, self.verse_start, self.verse_end,
            self.ref, b.testament, self.text, self.verse_count,
        )


def iter_usfm_files(archive: Path, include_deuterocanon: bool = False, translation: str = DEFAULT_TRANSLATION
                    ) -> Iterator[tuple[str, Book, bytes]]:
    """(member name, book, bytes) for each canonical book in the zip, in canon order."""
    pattern = get_translation(translation).file_pattern
    with zipfile.ZipFile(archive) as zf:
        found: list[tuple[Book, str]] = []
        for name in zf.namelist():
            m = pattern.search(name)
            if not m:
                continue
            try:
                book = by_usfm(m.group(1))
            except KeyError:
                continue  # front matter, glossary
            if book.order > PROTESTANT_BOOKS and not include_deuterocanon:
                continue
            found.append((book, name))
        for book, name in sorted(found, key=lambda x: x[0].order):
            yield name, book, zf.read(name)


def parse_file(name: str, book: Book, data: bytes) -> Iterator[ParsedVerse]:
    """The verses of one book file; its \\id must agree with the file name. A file with no \\id line at
    all (the BSB's Ecclesiastes) takes the book from its name, with a warning."""
    text = decode_usfm(data, name)
    has_id = re.search(r"^\\id\s", text, re.MULTILINE) is not None
    if not has_id:
        log.warning("%s: no \\id line; the book is taken from the file name (%s)", name, book.usfm)
    for pv in parse_usfm(text, name, book=None if has_id else book.usfm):
        if pv.book != book.usfm:
            raise UsfmError(name, 1, f"\\id says {pv.book} but the file name says {book.usfm}")
        yield pv


def parse_book(name: str, book: Book, data: bytes, translation: str = DEFAULT_TRANSLATION) -> list[VerseRow]:
    return [_verse_row(book, pv, name, translation) for pv in parse_file(name, book, data)]


def _verse_row(book: Book, pv: ParsedVerse, source: str, translation: str) -> VerseRow:
    vid = verse_id(book.order, pv.chapter, pv.verse)
    ref = format_id(vid) if pv.verse_end == pv.verse else format_range(vid, verse_id(book.order, pv.chapter, pv.verse_end))
    if pv.chapter > book.chapters or pv.verse_end > book.verses_in(pv.chapter):
        # a verse the translation numbers past the canon keeps its own id only when its config lists it
        if vid not in get_translation(translation).beyond_canon:
            raise UsfmError(source, pv.line, f"{book.usfm} {pv.chapter}:{pv.verse} is outside the canon's verse counts")
    return VerseRow(
        translation, vid, book, pv.chapter, pv.verse, pv.verse_end, ref, pv.text, pv.is_poetry, pv.paragraph_start,
        pv.psalm_title, tuple(pv.footnotes), tuple(pv.strongs), pv.words_of_jesus,
    )


def build_verses(archive: Path, include_deuterocanon: bool = False, translation: str = DEFAULT_TRANSLATION
                 ) -> list[VerseRow]:
    rows: list[VerseRow] = []
    for name, book, data in iter_usfm_files(archive, include_deuterocanon, translation):
        rows.extend(parse_book(name, book, data, translation))
    return rows


def build_chapters(verses: Iterable[tuple[int, int, int, int, str]], translation: str = DEFAULT_TRANSLATION
                   ) -> list[ChapterRow]:
    """(book order, chapter, verse, verse_end, text) in canon order -> one row per chapter.

    Footnote-only verses count toward the chapter's verses but add no text.
    """
    out: list[ChapterRow] = []
    for (order, chapter), group in groupby(verses, key=lambda v: (v[0], v[1])):
        rows = list(group)
        book = by_order(order)
        first, last = rows[0][2], max(r[3] for r in rows)
        ref = format_range(verse_id(order, chapter, first), verse_id(order, chapter, last), whole_chapters=True)
        text = " ".join(r[4] for r in rows if r[4])
        out.append(ChapterRow(translation, verse_id(order, chapter, 0), book, chapter, first, last, ref, text, len(rows)))
    return out
