"""Parse Nave's Topical Bible (CSV: section, subject, entry) into entries, passages and links (pure).

Notation rules (each tested on real lines in tests/test_naves.py):
- `entry` holds one sub-entry per line, `-` prefixed, nested by indentation (5 spaces a level; the one
  21-space line counts as 4 levels).
- A line is a label followed by references; the references start at the first book code followed by a
  chapter number. Book codes are USFM codes plus `So` (Song of Songs) and `Jude`.
- Reference groups are separated by `;` (and by `. ` before a book code, as in the quotation tables); a
  leading `with ` is dropped. The book carries over after `;`; a bare number is a whole chapter; a verse
  list is comma-separated verses or `a-b` ranges (a space after a comma is tolerated); consecutive
  verses of one list (`1:10,11`) are one passage.
- `[nnnn]` link ids are stripped from labels; typos are kept as they are (`1JHN`, a range that ends before
  it starts): such a reference does not resolve and is a counted reject with its file line and text.
- A line whose label starts with `See ` and has no references is a pointer: a link from the entry that
  encloses it to the entry it names, never a sub-entry of its own.
- English versification is mapped onto the WEB's verse ids (Rom 16:25-27 -> Rom 14:24-26).
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from citebible_pipeline.bible.canon import Book, by_usfm, protestant_books, to_web
from citebible_pipeline.bible.references import ReferenceError, make_reference
from citebible_pipeline.openbible.parse import Reject  # one counted-reject record for every source parser

HEADER = ("section", "subject", "entry")
INDENT = 5
MAX_REJECT_SHARE = 0.005  # the gate: the load fails above 0.5 % unresolved references


class NaveFormatError(ValueError):
    """The file is not the CSV we know (header changed): nothing from it is loaded."""


def _book_codes() -> dict[str, Book]:
    codes = {b.usfm: b for b in protestant_books()}
    codes.update({"So": by_usfm("SNG"), "Jude": by_usfm("JUD")})
    return codes


BOOKS = _book_codes()
# a known code and a chapter, or a code-shaped typo ("1JHN 3:17") that must surface as a reject, not a label
_REFS_START = re.compile(r"(?:(?<=\s)|^)(?:(?:%s) \d+(?![A-Za-z])|[1-3]?[A-Z]{3,4} \d+:\d)" % "|".join(map(re.escape, BOOKS)))
_GROUP_SPLIT = re.compile(r";|\.\s+(?=[1-3]?[A-Za-z]+ \d)")
_GROUP = re.compile(r"^(?:(?P<book>[1-3]?[A-Za-z]+)\s+)?(?P<ch>\d+)"
                    r"(?::(?P<vs>\d+(?:-\d+)?(?:,\s*\d+(?:-\d+)?)*))?$")
_LINK_ID = re.compile(r"\[\d+\]")


def entry_id(subject: str, path: tuple[str, ...], occurrence: int) -> int:
    """Stable across refreshes: 63 bits of sha256 of the subject, the label path and which repeat it is."""
    key = "\x1f".join((subject, *path, str(occurrence)))
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class NaveEntry:
    id: int
    subject: str
    label: str  # '' for the subject's own row
    path: tuple[str, ...]  # labels from the first sub-entry level down to this one
    depth: int  # 0: the subject
    parent_id: int | None
    line: int  # physical line in the file


@dataclass(frozen=True)
class NaveLink:
    from_id: int
    target: str  # as written, link ids stripped ("AFFLICTION, CONSOLATION IN")
    to_id: int | None  # the entry it names, when that entry exists
    line: int


@dataclass
class NaveReport:
    lines: int = 0
    groups: int = 0
    verse_groups: int = 0  # resolved groups written chapter:verse (the raw file's chapter:verse tokens)
    references: int = 0  # resolved verses, ranges and whole chapters
    remapped: int = 0
    pointers: int = 0
    rejects: list[Reject] = field(default_factory=list)

    @property
    def reject_share(self) -> float:
        total = self.references + len(self.rejects)
        return len(self.rejects) / total if total else 0.0

    def check(self) -> None:
        if self.reject_share > MAX_REJECT_SHARE:
            sample = "; ".join(f"line {r.line}: {r.reason} ({r.text})" for r in self.rejects[:5])
            raise ValueError(f"naves: {len(self.rejects)} references rejected ({self.reject_share:.2%} > "
                             f"{MAX_REJECT_SHARE:.1%}); first: {sample}")


@dataclass
class NaveIndex:
    entries: list[NaveEntry]
    passages: set[tuple[int, int, int]]  # (entry id, start id, end id)
    links: list[NaveLink]
    report: NaveReport


def split_line(text: str) -> tuple[str, str]:
    """'-Lineage of EXO 6:16-20; 1CH 6:2' -> ('Lineage of', 'EXO 6:16-20; 1CH 6:2')."""
    body = text.strip().removeprefix("-").strip()
    m = _REFS_START.search(body)
    label, refs = (body, "") if m is None else (body[: m.start()], body[m.start():])
    return " ".join(_LINK_ID.sub("", label).split()), refs.strip()


def _mapped(book: Book, chapter: int, verse: int) -> tuple[int, int, bool]:
    order, c, v = to_web(book.order, chapter, verse)
    return c, v, (c, v) != (chapter, verse)


def parse_references(refs: str, line: int, report: NaveReport) -> list[tuple[int, int]]:
    """Resolved (start id, end id) of one line's references; every failure is a counted reject."""
    out: list[tuple[int, int]] = []
    book: Book | None = None
    for raw in _GROUP_SPLIT.split(refs):
        group = re.sub(r"^with\s+", "", raw.strip())
        if not group:
            continue
        report.groups += 1
        m = _GROUP.match(group)
        if m is None:
            report.rejects.append(Reject(line, "not Nave's reference notation", group[:200]))
            continue
        if m["book"]:
            book = BOOKS.get(m["book"])
            if book is None:
                report.rejects.append(Reject(line, f"unknown book code {m['book']!r}", group))
                continue
        if book is None:
            report.rejects.append(Reject(line, "no book before this reference", group))
            continue
        chapter, resolved, text = int(m["ch"]), 0, group if m["book"] else f"{book.usfm} {group}"
        items = [None] if m["vs"] is None else [x.strip() for x in m["vs"].split(",")]
        for item in items:
            try:
                if item is None:
                    ref = make_reference(book, chapter, None, chapter, None, f"{book.usfm} {group}")
                    out.append((ref.start_id, ref.end_id))
                else:
                    a, _, b = item.partition("-")
                    c1, v1, r1 = _mapped(book, chapter, int(a))
                    c2, v2, r2 = _mapped(book, chapter, int(b or a))
                    if r2 and (c2, v2) < (c1, v1):  # a Rom 16 range past the doxology ends at Rom 16's end
                        c2, v2 = chapter, book.verses_in(chapter)
                    ref = make_reference(book, c1, v1, c2, v2, f"{book.usfm} {chapter}:{item}")
                    if out and out[-1][1] + 1 == ref.start_id and resolved:  # "1:10,11" is one passage
                        out[-1] = (out[-1][0], ref.end_id)
                    else:
                        out.append((ref.start_id, ref.end_id))
                    report.remapped += r1 or r2
                resolved += 1
                report.references += 1
            except ReferenceError as exc:
                report.rejects.append(Reject(line, str(exc), text[:200]))
        report.verse_groups += bool(resolved and m["vs"] is not None)
    return out


def _rows(lines: Iterable[str]) -> Iterable[tuple[int, dict[str, str]]]:
    """(first physical line of the record, record); the entry's k-th line is on line start + k."""
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None or tuple(h.lstrip("\ufeff").strip() for h in header) != HEADER:
        raise NaveFormatError(f"naves: unexpected header {header!r}; expected columns {HEADER}")
    last = reader.line_num
    for rec in reader:
        start, last = last + 1, reader.line_num
        if len(rec) != 3:
            raise NaveFormatError(f"naves: line {start}: expected 3 columns, found {len(rec)}")
        yield start, dict(zip(HEADER, rec))


def parse_naves(lines: Iterable[str]) -> NaveIndex:
    entries: list[NaveEntry] = []
    passages: set[tuple[int, int, int]] = set()
    pointers: list[tuple[int, str, int]] = []
    report = NaveReport()
    for start, rec in _rows(lines):
        subject = " ".join(rec["subject"].split())
        root = NaveEntry(entry_id(subject, (), 0), subject, "", (), 0, None, start)
        entries.append(root)
        stack: list[NaveEntry] = [root]  # stack[d] is the open entry at depth d
        seen: dict[tuple[str, ...], int] = {}
        for k, text in enumerate(rec["entry"].split("\n")):
            if not text.strip():
                continue
            report.lines += 1
            line = start + k
            depth = 1 + round((len(text) - len(text.lstrip(" "))) / INDENT)
            depth = min(depth, len(stack))  # a line can open at most one level below the open entry
            label, refs = split_line(text)
            parent = stack[depth - 1]
            if not refs and label.lower().startswith("see "):
                report.pointers += 1
                pointers.append((parent.id, label[4:].removeprefix("also ").strip(), line))
                continue
            path = (*parent.path, label)
            seen[path] = seen.get(path, -1) + 1
            entry = NaveEntry(entry_id(subject, path, seen[path]), subject, label, path, depth, parent.id, line)
            entries.append(entry)
            del stack[depth:]
            stack.append(entry)
            passages.update((entry.id, s, e) for s, e in parse_references(refs, line, report))
    index = TargetIndex(entries)
    links = [NaveLink(f, target, index.resolve(target), line) for f, target, line in pointers]
    return NaveIndex(entries, passages, links, report)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^A-Za-z0-9 ]", " ", text).upper().split())


class TargetIndex:
    """Subjects by name and sub-entries by (parent, label), built once for every pointer."""

    def __init__(self, entries: list[NaveEntry]) -> None:
        self.subjects = {_norm(e.subject): e.id for e in entries if e.depth == 0}
        self.children = {(e.parent_id, _norm(e.label)): e.id for e in reversed(entries) if e.depth > 0}

    def resolve(self, target: str) -> int | None:
        """'PRIEST, HIGH' -> the subject 'PRIEST, HIGH', else subject 'PRIEST' and its sub-entry 'HIGH', else
        the subject alone; None when no subject of that name exists."""
        whole = self.subjects.get(_norm(target))
        if whole is not None:
            return whole
        parts = target.split(",")
        for i in range(len(parts) - 1, 0, -1):
            subject = self.subjects.get(_norm(",".join(parts[:i])))
            if subject is not None:
                return self.children.get((subject, _norm(",".join(parts[i:]))), subject)
        return None
