"""Pericopes from the BSB's section headings (pure; no database): each \\s1 heading opens a passage at
the next verse, which runs to the verse before the next heading of its book, so the passages cover every
verse of the 66 books exactly once, on the shared verse ids (they apply to the WEB text too). Verses
that one translation numbers and the other does not are listed, never given a wrong id."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from citebible_pipeline.bible.canon import PROTESTANT_BOOKS, Book, books, verse_id
from citebible_pipeline.bible.corpus import iter_usfm_files, parse_file
from citebible_pipeline.bible.references import format_id


@dataclass(frozen=True)
class Pericope:
    start_id: int
    end_id: int
    title: str
    parallels: str | None


@dataclass
class Versification:
    """Verse ids one side numbers and the other does not (the canon is the WEB's verse counts)."""

    source_only: list[int] = field(default_factory=list)
    canon_only: list[int] = field(default_factory=list)
    moved_starts: list[tuple[int, int]] = field(default_factory=list)  # (source id, canon id it now opens)


def canon_ids(book: Book) -> list[int]:
    return [verse_id(book.order, c, v) for c in range(1, book.chapters + 1) for v in range(1, book.verses_in(c) + 1)]


def build(headings: Iterable[tuple[int, str, str | None]], source_ids: Iterable[int]
          ) -> tuple[list[Pericope], Versification]:
    """(verse id, title, parallels) of each heading, and every verse id the source numbers -> pericopes
    over the canon's ids. A book whose first verse has no heading opens with a passage titled by the
    book's name; a heading on a verse the canon lacks opens at the canon's next verse of that book."""
    by_book: dict[int, list[tuple[int, str, str | None]]] = {}
    for vid, title, parallels in headings:
        by_book.setdefault(vid // 1_000_000, []).append((vid, title, parallels))
    seen = set(source_ids)
    report = Versification()
    out: list[Pericope] = []
    for book in books()[:PROTESTANT_BOOKS]:
        ids = canon_ids(book)
        canon = set(ids)
        report.canon_only += [v for v in ids if v not in seen]
        report.source_only += sorted(v for v in seen if v // 1_000_000 == book.order and v not in canon)
        starts: dict[int, tuple[str, str | None]] = {}
        for vid, title, parallels in sorted(by_book.get(book.order, [])):
            pos = bisect_left(ids, vid)
            if pos == len(ids):
                continue  # a heading after the canon's last verse opens nothing
            if ids[pos] != vid:
                report.moved_starts.append((vid, ids[pos]))
            starts.setdefault(ids[pos], (title, parallels))
        if ids[0] not in starts:
            starts[ids[0]] = (book.name, None)
        opened = sorted(starts)
        for i, s in enumerate(opened):
            end = ids[bisect_left(ids, opened[i + 1]) - 1] if i + 1 < len(opened) else ids[-1]
            out.append(Pericope(s, end, *starts[s]))
    return out, report


def from_archive(archive: Path, translation: str = "bsb") -> tuple[list[Pericope], Versification, int]:
    """Parse the archive's 66 books for their headings; also returns how many verses it numbers."""
    headings: list[tuple[int, str, str | None]] = []
    numbered: list[int] = []
    for name, book, data in iter_usfm_files(archive, translation=translation):
        for pv in parse_file(name, book, data):
            vid = verse_id(book.order, pv.chapter, pv.verse)
            numbered.extend(verse_id(book.order, pv.chapter, v) for v in range(pv.verse, pv.verse_end + 1))
            if pv.section:
                headings.append((vid, pv.section, pv.parallels))
    pericopes, report = build(headings, numbered)
    return pericopes, report, len(numbered)


def coverage_errors(pericopes: Sequence[Pericope]) -> list[str]:
    """Every canon verse in exactly one pericope, every range inside one book and ordered."""
    errors: list[str] = []
    ordered = sorted(pericopes, key=lambda p: p.start_id)
    ids = [v for b in books()[:PROTESTANT_BOOKS] for v in canon_ids(b)]
    cursor = 0
    for p in ordered:
        if p.end_id < p.start_id or p.start_id // 1_000_000 != p.end_id // 1_000_000 or not p.title.strip():
            errors.append(f"bad pericope {format_id(p.start_id)}-{format_id(p.end_id)} {p.title!r}")
            continue
        if cursor >= len(ids) or ids[cursor] != p.start_id:
            errors.append(f"{format_id(p.start_id)} does not start right after the previous pericope")
            cursor = bisect_left(ids, p.start_id)
        cursor = bisect_left(ids, p.end_id) + 1
    if cursor != len(ids):
        errors.append(f"the pericopes end at verse {cursor} of {len(ids)}")
    return errors
