"""The one reference parser and formatter.

Accepts human forms ("Ps 34:18", "Psalm 34:18-20", "1 Cor 13", "Jn 3:16", "Gen 1:1-2:3", "Jude 3"),
OSIS as OpenBible writes it ("Gen.1.1", "Rom.1.19-Rom.1.20") and bbcccvvv ids; validates against the
WEB's chapter and verse counts, so an impossible reference fails here with a clear message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citebible_pipeline.bible.canon import Book, by_order, find_book, split_id, verse_id


class ReferenceError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Reference:
    book: Book
    chapter: int
    verse: int | None  # None: whole chapter(s)
    end_chapter: int
    end_verse: int | None

    @property
    def start_id(self) -> int:
        return verse_id(self.book.order, self.chapter, self.verse or 1)

    @property
    def end_id(self) -> int:
        last = self.end_verse if self.end_verse is not None else self.book.verses_in(self.end_chapter)
        return verse_id(self.book.order, self.end_chapter, last)

    @property
    def is_chapter(self) -> bool:
        return self.verse is None

    def format(self) -> str:
        return format_range(self.start_id, self.end_id, whole_chapters=self.is_chapter)

    def __str__(self) -> str:
        return self.format()


_HUMAN = re.compile(
    r"^\s*(?P<book>(?:[1-4]|IV|I{1,3})?\s*[A-Za-z][A-Za-z .()]*?)\.?\s*"
    r"(?P<c1>\d+)(?:\s*[:.]\s*(?P<v1>\d+))?"
    r"(?:\s*[-\u2013\u2014]\s*(?:(?P<c2>\d+)\s*[:.]\s*)?(?P<v2>\d+))?\s*$"
)
_OSIS_ONE = re.compile(r"^([1-4]?[A-Za-z]+)\.(\d+)(?:\.(\d+))?$")


def parse_reference(text: str) -> Reference:
    """Parse any supported form; raise ReferenceError naming what is wrong."""
    raw = text.strip()
    if re.fullmatch(r"\d{7,8}", raw):
        return from_ids(int(raw))
    if re.fullmatch(r"\d{7,8}-\d{7,8}", raw):
        a, b = (int(x) for x in raw.split("-"))
        return from_ids(a, b)
    if "." in raw and _OSIS_ONE.match(raw.split("-")[0]):
        return parse_osis(raw)
    m = _HUMAN.match(raw)
    if not m:
        raise ReferenceError(f"not a Bible reference: {text!r}")
    book = find_book(m["book"])
    if book is None:
        raise ReferenceError(f"unknown book {m['book'].strip()!r} in {text!r}")
    c1, v1, c2, v2 = (int(m[g]) if m[g] else None for g in ("c1", "v1", "c2", "v2"))
    if book.chapters == 1 and v1 is None and c2 is None:
        # "Jude 3", "Obad 1-4": in a one-chapter book the number is a verse.
        return make_reference(book, 1, c1, 1, v2 if v2 is not None else c1, text)
    if v1 is None:  # "Gen 1", "Gen 1-3"
        if c2 is not None:
            raise ReferenceError(f"mixed chapter/verse range in {text!r}")
        return make_reference(book, c1, None, v2 if v2 is not None else c1, None, text)
    if c2 is None:
        return make_reference(book, c1, v1, c1, v2 if v2 is not None else v1, text)
    return make_reference(book, c1, v1, c2, v2, text)


_IN_TEXT = re.compile(
    r"(?<![\w:])((?:[1-3]|I{1,3})\s?[A-Za-z]{2,}\.?|[A-Za-z]{2,}\.?(?:\s(?:of\s)?[A-Za-z]{3,})?)\s+"
    r"(\d{1,3}(?:\s*[:.]\s*\d{1,3})?(?:\s*[-\u2013]\s*\d{1,3}(?:\s*[:.]\s*\d{1,3})?)?)(?![\w:])"
)


def looks_like_reference(text: str) -> bool:
    """True when the whole text is shaped like a reference to a known book ("John 99:1" is one, an
    invalid one; "who won the world cup in 2018" is not), so a caller can report a bad reference
    instead of searching for it."""
    m = _HUMAN.match(text)
    return bool(m) and find_book(m["book"]) is not None


def find_references(text: str) -> list[Reference]:
    """Valid references written inside free text ("what does Romans 8:28 mean?"), in order."""
    out: list[Reference] = []
    for m in _IN_TEXT.finditer(text):
        book = m[1]
        words = book.split()
        # "Song of Songs 2", "1 Cor 13"; a leading ordinary word ("in John 3") is tried off
        candidates = [book] + ([" ".join(words[1:])] if len(words) > 1 else [])
        for cand in candidates:
            if find_book(cand) is None:
                continue
            try:
                out.append(parse_reference(f"{cand} {m[2]}"))
            except ReferenceError:
                pass
            break
    return out


def parse_osis(text: str) -> Reference:
    """'Gen.1.1', 'Ps.23', 'Rom.1.19-Rom.1.20', 'Ps.33.6-Ps.33.9', 'Matt.5.3-7.29' (as OpenBible)."""
    head, _, tail = text.strip().partition("-")
    m = _OSIS_ONE.match(head)
    if not m:
        raise ReferenceError(f"not an OSIS reference: {text!r}")
    book = find_book(m[1])
    if book is None:
        raise ReferenceError(f"unknown OSIS book {m[1]!r} in {text!r}")
    c1, v1 = int(m[2]), int(m[3]) if m[3] else None
    if not tail:
        return make_reference(book, c1, v1, c1, v1, text)
    m2 = _OSIS_ONE.match(tail)
    if m2:
        if find_book(m2[1]) is not book:
            raise ReferenceError(f"range crosses books in {text!r}")
        return make_reference(book, c1, v1, int(m2[2]), int(m2[3]) if m2[3] else None, text)
    parts = tail.split(".")
    if all(p.isdigit() for p in parts) and 1 <= len(parts) <= 2:
        c2, v2 = (int(parts[0]), int(parts[1])) if len(parts) == 2 else (c1, int(parts[0]))
        return make_reference(book, c1, v1, c2, v2, text)
    raise ReferenceError(f"bad OSIS range end in {text!r}")


def from_ids(start: int, end: int | None = None) -> Reference:
    """A reference from bbcccvvv ids (end may be None: a single verse)."""
    b1, c1, v1 = split_id(start)
    b2, c2, v2 = split_id(end) if end else (b1, c1, v1)
    book = by_order_checked(b1, str(start))
    if b2 != b1:
        raise ReferenceError(f"id range {start}-{end} crosses books")
    return make_reference(book, c1, v1, c2, v2, f"{start}-{end}" if end else str(start))


def by_order_checked(order: int, text: str) -> Book:
    try:
        return by_order(order)
    except KeyError:
        raise ReferenceError(f"unknown book number {order} in {text!r}") from None


def make_reference(book: Book, c1: int, v1: int | None, c2: int, v2: int | None, text: str) -> Reference:
    """A reference validated against the WEB's chapter and verse counts (v1/v2 None: whole chapters);
    `text` is what the caller read, quoted in the error."""
    for c in (c1, c2):
        if not 1 <= c <= book.chapters:
            raise ReferenceError(f"{book.name} has {book.chapters} chapters; {c} is out of range in {text!r}")
    for c, v in ((c1, v1), (c2, v2)):
        if v is not None and not 1 <= v <= book.verses_in(c):
            raise ReferenceError(f"{book.display()} {c} has {book.verses_in(c)} verses; {v} is out of range in {text!r}")
    if (v1 is None) != (v2 is None):
        raise ReferenceError(f"mixed chapter/verse range in {text!r}")
    if (c2, v2 or 0) < (c1, v1 or 0):
        raise ReferenceError(f"range ends before it starts in {text!r}")
    return Reference(book, c1, v1, c2, v2)


def format_id(vid: int) -> str:
    """bbcccvvv -> 'Psalm 34:18'."""
    order, chapter, verse = split_id(vid)
    return f"{by_order(order).display()} {chapter}:{verse}"


def format_range(start: int, end: int, whole_chapters: bool = False) -> str:
    """'Psalm 34:18-20', 'Genesis 1:1-2:3', '1 Corinthians 13', 'Psalms 42-43'."""
    b1, c1, v1 = split_id(start)
    b2, c2, v2 = split_id(end)
    book = by_order(b1)
    if b2 != b1:
        return f"{format_id(start)}-{format_id(end)}"
    if whole_chapters or (v1 == 1 and v2 == book.verses_in(c2) and book.chapters > 1 and (c1 != c2 or v2 > 1)):
        return f"{book.display(c1 == c2)} {c1}" + ("" if c1 == c2 else f"-{c2}")
    if c1 == c2:
        return f"{book.display()} {c1}:{v1}" + ("" if v1 == v2 else f"-{v2}")
    return f"{book.display(False)} {c1}:{v1}-{c2}:{v2}"
