"""The canon as data: 66 books (plus the WEB's deuterocanon, orders 67-81) with codes, names,
abbreviations, testament, default genre and per-chapter verse counts of the WEB.

Everything that parses, validates or formats a reference reads it from here.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

PROTESTANT_BOOKS = 66


@dataclass(frozen=True, slots=True)
class Book:
    order: int
    usfm: str
    osis: str
    name: str
    testament: str  # OT, NT, DC
    genre: str  # default genre of the book
    abbreviations: tuple[str, ...]
    chapter_verses: tuple[int, ...]  # WEB verse count of each chapter

    @property
    def chapters(self) -> int:
        return len(self.chapter_verses)

    @property
    def verse_count(self) -> int:
        return sum(self.chapter_verses)

    def verses_in(self, chapter: int) -> int:
        return self.chapter_verses[chapter - 1] if 1 <= chapter <= self.chapters else 0

    def display(self, single_chapter: bool = True) -> str:
        """'Psalm 23' for one psalm, 'Psalms' for the book or a span of psalms."""
        return "Psalm" if self.usfm == "PSA" and single_chapter else self.name


def _key(name: str) -> str:
    return re.sub(r"[\s.]+", "", name).lower()


@cache
def books() -> tuple[Book, ...]:
    pkg = resources.files("citebible_pipeline.bible")
    verses = json.loads(pkg.joinpath("chapter_verses.json").read_text(encoding="utf-8"))
    rows = csv.DictReader(pkg.joinpath("books.csv").read_text(encoding="utf-8").splitlines())
    out = []
    for r in rows:
        out.append(
            Book(
                order=int(r["order"]), usfm=r["usfm"], osis=r["osis"], name=r["name"], testament=r["testament"],
                genre=r["genre"], abbreviations=tuple(a for a in r["abbreviations"].split(";") if a),
                chapter_verses=tuple(verses[r["usfm"]]),
            )
        )
    return tuple(out)


@cache
def _index() -> dict[str, Book]:
    idx: dict[str, Book] = {}
    for b in books():
        for name in (b.name, b.usfm, b.osis, *b.abbreviations):
            idx.setdefault(_key(name), b)
    return idx


def protestant_books() -> tuple[Book, ...]:
    return books()[:PROTESTANT_BOOKS]


def by_order(order: int) -> Book:
    if not 1 <= order <= len(books()):  # order 0 must not wrap around to the last book
        raise KeyError(f"no book with order {order} (1-{len(books())})")
    return books()[order - 1]


def by_usfm(code: str) -> Book:
    for b in books():
        if b.usfm == code.upper():
            return b
    raise KeyError(f"unknown USFM book code {code!r}")


def find_book(name: str) -> Book | None:
    """Book by full name, USFM/OSIS code or common abbreviation ('Ps', 'Jn', '1 Cor', 'Song')."""
    return _index().get(_key(name))


def verse_id(order: int, chapter: int, verse: int) -> int:
    """bbcccvvv, the id scheme of OpenBible's topic-votes file."""
    return order * 1_000_000 + chapter * 1_000 + verse


def split_id(vid: int) -> tuple[int, int, int]:
    return vid // 1_000_000, vid // 1_000 % 1_000, vid % 1_000


# The one place for bbcccvvv arithmetic besides verse_id/split_id (SQL that must do it in the database
# writes `id / 1000 * 1000` and says so).
def chapter_base(vid: int) -> int:
    """bbccc000: the chapter's own id (a chapter row's key; its verse 0)."""
    return vid // 1_000 * 1_000


def book_of(vid: int) -> Book:
    return by_order(vid // 1_000_000)


def verses_in_chapter_of(vid: int) -> int:
    """How many verses the WEB numbers in the chapter of `vid`."""
    order, chapter, _ = split_id(vid)
    return by_order(order).verses_in(chapter)


def span_verses(start: int, end: int) -> int:
    """How many WEB verses a bbcccvvv span covers, across chapters and books (verse 0, a chapter's own id, is none)."""
    (b1, c1, v1), (b2, c2, v2) = split_id(start), split_id(end)
    total = 0
    for order in range(b1, b2 + 1):
        book = by_order(order)
        first, last = (c1 if order == b1 else 1), (c2 if order == b2 else book.chapters)
        for ch in range(first, last + 1):
            n = book.verses_in(ch)
            lo = v1 if (order, ch) == (b1, c1) else 1
            hi = v2 if (order, ch) == (b2, c2) else n
            total += max(0, min(hi, n) - max(lo, 1) + 1)
    return total


@cache
def longest_chapter() -> int:
    """The most verses one chapter holds (Psalm 119's 176 in the WEB)."""
    return max(max(b.chapter_verses) for b in books())


ROM, JN3 = 45, 64


def to_web(order: int, chapter: int, verse: int) -> tuple[int, int, int]:
    """English (KJV/ESV) numbering -> the WEB's, where they differ (OpenBible and Nave's use the English)."""
    if order == ROM and chapter == 16 and 25 <= verse <= 27:
        return ROM, 14, verse - 1
    if order == JN3 and chapter == 1 and verse == 15:
        return JN3, 1, 14
    return order, chapter, verse
