"""Verse and chapter documents to embed (pure): chapters as windows of whole consecutive verses."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby


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


def build_documents(verses: Sequence[VerseInput], token_counts: Sequence[int], budget: int,
                    chapters: dict[int, tuple[str, int, int]]) -> list[PassageDoc]:
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
        windows = fit_windows([v.text for v in vs], [n for _, n in items], budget)
        docs.append(PassageDoc("chapter", cid, order, vs[0].book, vs[0].book_name, chapter, first, last, ref,
                               vs[0].testament, genre, " ".join(v.text for v in vs), tuple(windows)))
    return docs


def content_hash(space_key: str, prefix: str, doc: PassageDoc) -> str:
    h = hashlib.sha256(f"{space_key}\x1f{prefix}\x1f".encode())
    h.update("\x1e".join(doc.windows).encode())
    return h.hexdigest()
