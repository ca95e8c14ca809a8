"""Stage 6, merge (pure): adjacent or overlapping verse hits become one range; a chapter whose verses
hit densely absorbs them; a verse never comes back together with its own chapter, and no two results
overlap."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from citebible_pipeline.query.fuse import Candidate


def _chapter_of(vid: int) -> int:
    return vid // 1000 * 1000


def _absorb(into: Candidate, other: Candidate) -> None:
    into.hits.extend(other.hits)
    into.prior = max(into.prior, other.prior)
    into.dense = max(into.dense, other.dense)


def merge_ranges(cands: Sequence[Candidate]) -> list[Candidate]:
    """Within a chapter, verse and range candidates that touch or overlap become one range scored by
    their best member (the range is as relevant as its best verse, and more readable)."""
    out: list[Candidate] = [c for c in cands if c.level == "chapter"]
    by_chapter: dict[int, list[Candidate]] = defaultdict(list)
    for c in cands:
        if c.level != "chapter":
            by_chapter[_chapter_of(c.start)].append(c)
    for group in by_chapter.values():
        group.sort(key=lambda c: (c.start, c.end))
        cur = None
        for c in group:
            if cur is not None and c.start <= cur.end + 1 and _chapter_of(c.end) == _chapter_of(cur.start):
                merged = Candidate(cur.start, max(cur.end, c.end), "range", max(cur.score, c.score))
                merged.genre = (cur if cur.score >= c.score else c).genre
                _absorb(merged, cur)
                _absorb(merged, c)
                cur = merged
            else:
                if cur is not None:
                    out.append(cur)
                cur = Candidate(c.start, c.end, c.level, c.score, c.prior, c.dense, list(c.hits), c.genre)
        if cur is not None:
            out.append(cur)
    return sorted(out, key=lambda c: (-c.score, c.start))


def collapse_chapters(cands: Sequence[Candidate], verses_in: Callable[[int], int], ratio: float = 0.5) -> list[Candidate]:
    """A chapter candidate and the verses inside it never both survive: the better scored side wins
    and keeps the other's provenance. Without a chapter candidate, verses covering more than `ratio`
    of their chapter collapse into it with their mean score."""
    chapters = {_chapter_of(c.start): c for c in cands if c.level == "chapter"}
    inner: dict[int, list[Candidate]] = defaultdict(list)
    for c in cands:
        if c.level != "chapter":
            inner[_chapter_of(c.start)].append(c)
    drop: set[int] = set()
    new: list[Candidate] = []
    for cid, members in inner.items():
        chap = chapters.get(cid)
        total = verses_in(cid)
        covered = sum(m.end - m.start + 1 for m in members)
        if chap is None and total and covered / total > ratio:
            chap = Candidate(cid + 1, cid + total, "chapter", sum(m.score for m in members) / len(members))
            chap.genre = max(members, key=lambda m: m.score).genre
            new.append(chap)
        if chap is None:
            continue
        best = max(members, key=lambda m: m.score)
        if chap.score >= best.score or chap in new:
            for m in members:
                _absorb(chap, m)
                drop.add(id(m))
        else:
            _absorb(best, chap)
            drop.add(id(chap))
    out = [c for c in cands if id(c) not in drop] + [c for c in new if id(c) not in drop]
    return sorted(out, key=lambda c: (-c.score, c.start))


def merge(cands: Sequence[Candidate], verses_in: Callable[[int], int], ratio: float = 0.5) -> list[Candidate]:
    return collapse_chapters(merge_ranges(cands), verses_in, ratio)
