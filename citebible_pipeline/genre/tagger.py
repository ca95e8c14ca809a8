"""Genre belongs to the verse: book default -> curated range (narrowest wins) -> verse-level signals.

Signals: red letters (share of the verse inside \\wj) split the Gospels into teaching and narrative;
lexical genealogy and census patterns; USFM poetry lines inside OT narrative or law (songs, oracles).
Every tag records which rule decided it (`genre_source`), so a wrong tag can be traced.
"""

from __future__ import annotations

import bisect
import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from psycopg import sql

from citebible_pipeline.bible.canon import by_order, split_id
from citebible_pipeline.bible.references import parse_reference
from citebible_pipeline.db.load import replace_rows

GENRES = (
    "psalm", "wisdom", "poetry", "prophecy", "apocalyptic", "gospel_narrative", "gospel_teaching", "epistle",
    "narrative", "law", "ceremonial_law", "genealogy", "census_list",
)
DEFAULT_BOOSTS: dict[str, float] = {
    "psalm": 1.30,
    "wisdom": 1.15, "gospel_teaching": 1.15, "epistle": 1.15,
    "narrative": 1.00, "gospel_narrative": 1.00, "prophecy": 1.00, "poetry": 1.00, "law": 1.00, "apocalyptic": 1.00,
    "genealogy": 0.70, "census_list": 0.70, "ceremonial_law": 0.70,
}
GOSPELS = {"MAT", "MRK", "LUK", "JHN"}
RED_LETTER_SHARE = 0.5

_GENEALOGY = re.compile(
    r"\bbecame the father of\b|\b(?:sons|children) of [A-Z][\w-]+(?: were)?: [A-Z]|(?:\bthe son of [A-Z][\w-]+,? ){3}"
)
_CENSUS = re.compile(
    r"\b(?:were|was) (?:counted|numbered)\b.*\b(?:thousand|hundred)\b"
    r"|^(?:The )?(?:children|sons|men) of [A-Z][\w-]+[,:] [a-z-]+ (?:thousand|hundred)"
)
_SIGNAL_TARGETS = {"narrative", "law", "gospel_narrative"}


@dataclass(frozen=True, slots=True)
class VerseFeatures:
    id: int
    text: str
    is_poetry: bool
    words_of_jesus: float


@dataclass(frozen=True, slots=True)
class GenreTag:
    id: int
    genre: str
    source: str


@dataclass(frozen=True, slots=True)
class Override:
    start: int
    end: int
    genre: str
    note: str


def load_overrides(text: str | None = None) -> list[Override]:
    """Parse the curated ranges (package data `overrides.csv` unless `text` is given)."""
    if text is None:
        text = resources.files("citebible_pipeline.genre").joinpath("overrides.csv").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    out = []
    for n, row in enumerate(csv.DictReader(lines), start=2):
        if row["genre"] not in GENRES:
            raise ValueError(f"overrides.csv row {n}: unknown genre {row['genre']!r} (known: {', '.join(GENRES)})")
        ref = parse_reference(row["range"])
        out.append(Override(ref.start_id, ref.end_id, row["genre"], row["note"]))
    return out


class _RangeIndex:
    def __init__(self, overrides: list[Override]):
        self.items = sorted(overrides, key=lambda o: o.start)
        self.starts = [o.start for o in self.items]

    def lookup(self, vid: int) -> Override | None:
        best = None
        for o in self.items[: bisect.bisect_right(self.starts, vid)]:
            if o.start <= vid <= o.end and (best is None or o.end - o.start < best.end - best.start):
                best = o
        return best


@cache
def _default_index() -> _RangeIndex:
    return _RangeIndex(load_overrides())


def tag_verse(v: VerseFeatures, index: _RangeIndex | None = None) -> GenreTag:
    index = index or _default_index()
    book = by_order(split_id(v.id)[0])
    genre, source = book.genre, "book_default"
    curated = index.lookup(v.id)
    if curated:
        genre, source = curated.genre, f"curated_range:{curated.note}"
    if book.usfm in GOSPELS and genre == "gospel_narrative" and v.words_of_jesus >= RED_LETTER_SHARE:
        return GenreTag(v.id, "gospel_teaching", "signal:words_of_jesus")
    if genre in _SIGNAL_TARGETS:
        if _GENEALOGY.search(v.text):
            return GenreTag(v.id, "genealogy", "signal:genealogy_pattern")
        if _CENSUS.search(v.text):
            return GenreTag(v.id, "census_list", "signal:census_pattern")
        if v.is_poetry and book.genre in _SIGNAL_TARGETS and book.testament == "OT":
            return GenreTag(v.id, "poetry", "signal:poetry_lines")
    return GenreTag(v.id, genre, source)


def tag_verses(verses: Iterable[VerseFeatures], overrides: list[Override] | None = None) -> list[GenreTag]:
    index = _RangeIndex(overrides) if overrides is not None else _default_index()
    return [tag_verse(v, index) for v in verses]


def write_genres(conn, tags: Iterable[GenreTag], boosts: Mapping[str, float] | None, translation: str) -> None:
    """Replace one translation's tags, and the boost table when given, together in one transaction."""
    with conn.transaction():
        if boosts is not None:
            replace_rows(conn, "genre_boosts", ("genre", "weight"), ("text", "real"), sorted(boosts.items()))
        replace_rows(conn, "verse_genres", ("translation", "id", "genre", "genre_source"),
                     ("text", "integer", "text", "text"), ((translation, t.id, t.genre, t.source) for t in tags),
                     sql.SQL("translation = %s"), (translation,))


def validate_boosts(boosts: Mapping[str, float]) -> dict[str, float]:
    """Every genre weighted, every weight > 0 (a boost never hides a verse)."""
    merged = {**DEFAULT_BOOSTS, **boosts}
    unknown = set(merged) - set(GENRES)
    if unknown:
        raise ValueError(f"boosts for unknown genres: {sorted(unknown)}")
    bad = {g: w for g, w in merged.items() if not w > 0}
    if bad:
        raise ValueError(f"genre boosts must be > 0 (never x0): {bad}")
    return merged
