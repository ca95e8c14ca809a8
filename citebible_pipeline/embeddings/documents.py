"""Verse, chapter and pericope documents (pure): chapters as windows of whole consecutive verses to
encode, pericopes as the verses whose vectors their own is derived from."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

from citebible_pipeline.bible.references import format_range


@dataclass(frozen=True, slots=True)
class VerseInput:
    id: int
    book_order: int
    book: str
    book_name: str
    chapter: int
    verse: int
    verse_end: int
    ref: str
    testament: str
    text: str
    genre: str


@dataclass(frozen=True, slots=True)
class PassageDoc:
    level: str
    id: int
    book_order: int
    book: str
    book_name: str
    chapter: int
    verse_start: int
    verse_end: int
    ref: str
    testament: str
    genre: str
    text: str
    windows: tuple[str, ...]  # what is embedded (one for a verse)


def fit_windows(texts: Sequence[str], token_counts: Sequence[int], budget: int) -> list[str]:
    """Greedy windows of consecutive whole verses within `budget` tokens (a verse longer than the
    budget is its own window and gets truncated by the model, the only case where text is cut)."""
    windows: list[list[str]] = []
    used = budget + 1
    for text, n in zip(texts, token_counts):
        if used + n > budget:
            windows.append([])
            used = 0
        windows[-1].append(text)
        used += n
    return [" ".join(w) for w in windows]


VECTOR_MODES = ("encode", "derive")
DERIVED = "derive"  # windows[0] of a document whose vector is the re-normalized mean of its verses' vectors


def level_windows(mode: str, texts: Sequence[str], token_counts: Sequence[int], budget: int, title: str = "") -> tuple[str, ...]:
    """What a container level embeds: `encode` its text in windows of whole verses, or `derive` its vector
    from its verses' (the marker, then the verse texts, so the content hash still follows the text)."""
    if mode == "derive":
        return (DERIVED, title, *texts)
    if mode == "encode":
        return tuple(fit_windows(texts, token_counts, budget))
    raise ValueError(f"a level's vectors are made by one of {VECTOR_MODES}, not {mode!r}")


def build_documents(verses: Sequence[VerseInput], token_counts: Sequence[int], budget: int,
                    chapters: dict[int, tuple[str, int, int]], chapter_mode: str = "encode") -> list[PassageDoc]:
    """Verse docs (footnote-only verses have no text and are skipped) and one doc per chapter.

    `chapters` maps a chapter id (bbccc000) to (ref, verse_start, verse_end) from the chapters table.
    """
    docs: list[PassageDoc] = []
    counted = [(v, n) for v, n in zip(verses, token_counts) if v.text]
    for v, _n in counted:
        docs.append(PassageDoc("verse", v.id, v.book_order, v.book, v.book_name, v.chapter, v.verse, v.verse_end,
                               v.ref, v.testament, v.genre, v.text, (v.text,)))
    for (order, chapter), group in groupby(counted, key=lambda x: (x[0].book_order, x[0].chapter)):
        items = list(group)
        vs = [v for v, _ in items]
        genre = Counter(v.genre for v in vs).most_common(1)[0][0]
        cid = order * 1_000_000 + chapter * 1_000
        ref, first, last = chapters[cid]  # from the chapters table: the full verse range
        windows = level_windows(chapter_mode, [v.text for v in vs], [n for _, n in items], budget)
        docs.append(PassageDoc("chapter", cid, order, vs[0].book, vs[0].book_name, chapter, first, last, ref,
                               vs[0].testament, genre, " ".join(v.text for v in vs), windows))
    return docs


def pericope_documents(verses: Sequence[VerseInput], pericopes: Sequence[tuple[int, int, str]], mode: str = "derive",
                       token_counts: dict[int, int] | None = None, budget: int = 0) -> list[PassageDoc]:
    """One doc per pericope (start id, end id, title), split where one runs over a chapter boundary (the
    BSB has one), so that every row lies in one chapter like the other levels; the id is its first verse."""
    by_chapter: dict[int, list[VerseInput]] = {}
    for v in verses:
        if v.text:
            by_chapter.setdefault(v.id // 1000, []).append(v)
    docs: list[PassageDoc] = []
    for start, end, title in pericopes:
        for chapter_key in range(start // 1000, end // 1000 + 1):
            vs = [v for v in by_chapter.get(chapter_key, []) if start <= v.id <= end]
            if not vs:
                continue
            genre = Counter(v.genre for v in vs).most_common(1)[0][0]
            first, last = vs[0], vs[-1]
            ref = format_range(first.id, last.id - last.verse + last.verse_end)
            docs.append(PassageDoc("pericope", first.id, first.book_order, first.book, first.book_name, first.chapter,
                                   first.verse, last.verse_end, ref, first.testament, genre,
                                   " ".join(v.text for v in vs),
                                   level_windows(mode, [v.text for v in vs], [(token_counts or {}).get(v.id, 0) for v in vs],
                                                 budget, title)))
    return docs


def content_hash(space_key: str, prefix: str, doc: PassageDoc) -> str:
    h = hashlib.sha256(f"{space_key}\x1f{prefix}\x1f".encode())
    h.update("\x1e".join(doc.windows).encode())
    return h.hexdigest()
