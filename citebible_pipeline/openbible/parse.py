"""Parse OpenBible's TSV exports into rows of WEB verse ids (pure; no database).

Rules (documented in README, tested):
- The header must be the one OpenBible publishes; a changed format fails the whole file.
- Versification onto the WEB: Rom 16:25-27 -> Rom 14:24-26, 3 John 1:15 -> 3 John 1:14.
- A line with a missing column, a non-integer vote or score, or a reference that does not resolve is
  a counted reject (kept in the report with its line number), never silently dropped; the caller
  fails the load when rejects exceed 0.1 %.
- A range whose ends lie in different books (2Chr.36.22-Ezra.1.3, 18 rows) is kept as the id range
  from its first to its last verse; both ends are validated.
- A range that ends in Rom 16:25-27 but starts in Rom 16 (Rom.16.1-Rom.16.27) ends at the WEB's last
  verse of Rom 16 instead: the doxology moved to 14:24-26, the rest of the range did not.
- Negative votes are real down-votes and are kept.
- Rows that collide after remapping (same key) are merged: votes summed, best score kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from citebible_pipeline.bible.canon import by_order, find_book, split_id, to_web, verse_id
from citebible_pipeline.bible.references import ReferenceError

CROSS_REFS_HEADER = ("From Verse", "To Verse", "Votes")
TOPIC_VOTES_HEADER = ("Topic", "Start Verse ID", "End Verse ID", "Votes")
TOPIC_SCORES_HEADER = ("Topic", "OSIS", "Quality Score (based on percentage of votes for the passage)")
MAX_REJECT_SHARE = 0.001


class FormatError(ValueError):
    """The file is not the format we know (header changed): nothing from it is loaded."""


@dataclass
class Reject:
    line: int
    reason: str
    text: str


@dataclass
class ParseReport:
    source: str
    lines: int = 0
    rejects: list[Reject] = field(default_factory=list)
    remapped: int = 0
    merged: int = 0
    cross_book_ranges: int = 0

    @property
    def reject_share(self) -> float:
        return len(self.rejects) / self.lines if self.lines else 0.0

    def check(self) -> None:
        if self.reject_share > MAX_REJECT_SHARE:
            sample = "; ".join(f"line {r.line}: {r.reason}" for r in self.rejects[:5])
            raise ValueError(f"{self.source}: {len(self.rejects)} of {self.lines} lines rejected "
                             f"({self.reject_share:.3%} > {MAX_REJECT_SHARE:.1%}); first: {sample}")


def _checked_id(order: int, chapter: int, verse: int, text: str) -> tuple[int, bool]:
    mapped = to_web(order, chapter, verse)
    book = by_order(mapped[0]) if 1 <= mapped[0] <= 66 else None
    if book is None or not 1 <= mapped[2] <= book.verses_in(mapped[1]):
        raise ReferenceError(f"no such verse in the WEB: {text!r}")
    return verse_id(*mapped), mapped != (order, chapter, verse)


_OSIS_VERSE = re.compile(r"^([1-3]?[A-Za-z]+)\.(\d+)\.(\d+)$")


@lru_cache(maxsize=65536)
def osis_verse(text: str) -> tuple[int, bool]:
    """'Gen.1.1' -> (WEB verse id, remapped?)."""
    m = _OSIS_VERSE.match(text)
    book = find_book(m.group(1)) if m else None
    if book is None or book.order > 66:
        raise ReferenceError(f"bad OSIS reference {text!r}")
    return _checked_id(book.order, int(m.group(2)), int(m.group(3)), text)


def _range_end(start: int, end: int, end_remapped: bool, original_end: tuple[int, int, int], text: str) -> int:
    if end < start and end_remapped:
        order, chapter, _ = original_end
        end = verse_id(order, chapter, by_order(order).verses_in(chapter))
    if end < start:
        raise ReferenceError(f"range ends before it starts: {text!r}")
    return end


def osis_range(text: str) -> tuple[int, int, bool, bool]:
    """'Ps.33.6-Ps.33.9' or 'Gen.1.1' -> (start id, end id, remapped?, crosses books?)."""
    head, _, tail = text.partition("-")
    start, r1 = osis_verse(head)
    if not tail:
        return start, start, r1, False
    end, r2 = osis_verse(tail)
    m = _OSIS_VERSE.match(tail)
    end = _range_end(start, end, r2, (find_book(m.group(1)).order, int(m.group(2)), int(m.group(3))), text)
    return start, end, r1 or r2, split_id(start)[0] != split_id(end)[0]


def id_verse(text: str) -> tuple[int, bool]:
    """'45016027' -> (WEB id, remapped?)."""
    if not re.fullmatch(r"\d{7,8}", text):
        raise ReferenceError(f"bad verse id {text!r}")
    return _checked_id(*split_id(int(text)), text)


def _check_header(first: str, expected: tuple[str, ...], source: str) -> None:
    cols = tuple(first.rstrip("\r\n").split("\t"))
    if cols[: len(expected)] != expected:
        raise FormatError(f"{source}: unexpected header {first.strip()[:120]!r}; expected columns {expected}")


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} is not an integer: {text!r}") from None


def _parse_rows(lines: Iterable[str], header: tuple[str, ...], ncols: int, source: str,
                parse_row: Callable[[list[str]], tuple[tuple, int, bool, bool]],
                merge: Callable[[int, int], int]) -> tuple[dict[tuple, int], ParseReport]:
    """The loop every export shares: header check, counted rejects, merged duplicate keys.

    `parse_row(columns)` returns (key, value, remapped?, crosses books?) or raises ValueError/ReferenceError.
    """
    it = iter(lines)
    _check_header(next(it, ""), header, source)
    rep = ParseReport(source)
    rows: dict[tuple, int] = {}
    for n, line in enumerate(it, start=2):
        if not line.strip():
            continue
        rep.lines += 1
        parts = line.rstrip("\r\n").split("\t")
        try:
            if len(parts) != ncols:
                raise ValueError(f"expected {ncols} columns, found {len(parts)}")
            key, value, remapped, cross = parse_row(parts)
        except (ValueError, ReferenceError) as exc:
            rep.rejects.append(Reject(n, str(exc), line.strip()[:200]))
            continue
        rep.remapped += remapped
        rep.cross_book_ranges += cross
        if key in rows:
            rep.merged += 1
            rows[key] = merge(rows[key], value)
        else:
            rows[key] = value
    return rows, rep


def _sum(a: int, b: int) -> int:
    return a + b


def parse_cross_refs(lines: Iterable[str], source: str) -> tuple[dict[tuple[int, int, int], int], ParseReport]:
    """{(from id, to start, to end): votes}, report."""

    def row(parts: list[str]) -> tuple[tuple, int, bool, bool]:
        src, r0 = osis_verse(parts[0])
        start, end, r1, cross = osis_range(parts[1])
        return (src, start, end), _int(parts[2], "votes"), r0 or r1, cross

    return _parse_rows(lines, CROSS_REFS_HEADER, 3, source, row, _sum)


def normalize_topic(name: str) -> str:
    return " ".join(name.lower().split())


def _topic(name: str, names: dict[str, str]) -> str:
    topic = normalize_topic(name)
    if not topic:
        raise ValueError("empty topic")
    names.setdefault(topic, name.strip())
    return topic


def parse_topic_votes(lines: Iterable[str], source: str) -> tuple[dict[tuple[str, int, int], int], dict[str, str], ParseReport]:
    """{(topic, start, end): votes}, {normalized: display name}, report."""
    names: dict[str, str] = {}

    def row(parts: list[str]) -> tuple[tuple, int, bool, bool]:
        start, r1 = id_verse(parts[1])
        end, r2 = id_verse(parts[2]) if parts[2] else (start, False)
        if parts[2]:
            end = _range_end(start, end, r2, split_id(int(parts[2])), f"{parts[1]}-{parts[2]}")
        votes = _int(parts[3], "votes")
        return (_topic(parts[0], names), start, end), votes, r1 or r2, split_id(start)[0] != split_id(end)[0]

    rows, rep = _parse_rows(lines, TOPIC_VOTES_HEADER, 4, source, row, _sum)
    return rows, names, rep


def parse_topic_scores(lines: Iterable[str], source: str) -> tuple[dict[tuple[str, int, int], int], dict[str, str], ParseReport]:
    """{(topic, start, end): quality score 2-100}, {normalized: display name}, report."""
    names: dict[str, str] = {}

    def row(parts: list[str]) -> tuple[tuple, int, bool, bool]:
        start, end, remapped, cross = osis_range(parts[1])
        score = _int(parts[2], "score")
        return (_topic(parts[0], names), start, end), score, remapped, cross

    rows, rep = _parse_rows(lines, TOPIC_SCORES_HEADER, 3, source, row, max)
    return rows, names, rep
