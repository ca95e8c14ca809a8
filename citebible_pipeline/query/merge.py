"""Stage 6, merge (pure): adjacent or overlapping verse hits become one range; a pericope, then a chapter,
whose verses hit densely absorbs them; a verse never comes back together with its own pericope or
chapter, and no two results overlap."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Sequence

from citebible_pipeline.bible.canon import chapter_base
from citebible_pipeline.query.fuse import Candidate


LEVEL_RANK = {"verse": 0, "range": 0, "pericope": 1, "chapter": 2}


def _absorb(into: Candidate, other: Candidate) -> None:
    into.hits.extend(other.hits)
    into.prior = max(into.prior, other.prior)
    into.dense = max(into.dense, other.dense)


def merge_ranges(cands: Sequence[Candidate]) -> list[Candidate]:
    """Within a chapter, verse and range candidates that touch or overlap become one range scored by
    their best member (the range is as relevant as its best verse, and more readable)."""
    out: list[Candidate] = [c for c in cands if LEVEL_RANK[c.level] > 0]
    by_chapter: dict[int, list[Candidate]] = defaultdict(list)
    for c in cands:
        if LEVEL_RANK[c.level] == 0:
            by_chapter[chapter_base(c.start)].append(c)
    for group in by_chapter.values():
        group.sort(key=lambda c: (c.start, c.end))
        cur = None
        for c in group:
            if cur is not None and c.start <= cur.end + 1 and chapter_base(c.end) == chapter_base(cur.start):
                merged = Candidate(cur.start, max(cur.end, c.end), "range", max(cur.score, c.score))
                merged.genre = (cur if cur.score >= c.score else c).genre
                _absorb(merged, cur)
                _absorb(merged, c)
                cur = merged
            else:
                if cur is not None:
                    out.append(cur)
                cur = c.copy()
        if cur is not None:
            out.append(cur)
    return sorted(out, key=lambda c: (-c.score, c.start))


def collapse(cands: Sequence[Candidate], level: str, container: Callable[[int], tuple[int, int] | None],
             ratio: float = 0.5) -> list[Candidate]:
    """A `level` candidate (pericope or chapter) and the smaller candidates inside it never both survive:
    the better scored side wins and keeps the other's provenance. Without one, members covering more than
    `ratio` of its verses collapse into it with their mean score."""
    rank = LEVEL_RANK[level]
    containers = {(c.start, c.end): c for c in cands if c.level == level}
    inner: dict[tuple[int, int], list[Candidate]] = defaultdict(list)
    for c in cands:
        if LEVEL_RANK[c.level] < rank:
            span = container(c.start)
            if span is not None:
                inner[span].append(c)
    drop: set[int] = set()
    new: list[Candidate] = []
    for (start, end), members in inner.items():
        box = containers.get((start, end))
        covered = sum(min(m.end, end) - max(m.start, start) + 1 for m in members)
        if box is None and covered / (end - start + 1) > ratio:
            box = Candidate(start, end, level, sum(m.score for m in members) / len(members))
            box.genre = max(members, key=lambda m: m.score).genre
            new.append(box)
        if box is None:
            continue
        best = max(members, key=lambda m: m.score)
        if box.score >= best.score or box in new:
            for m in members:
                _absorb(box, m)
                drop.add(id(m))
        else:
            _absorb(best, box)
            drop.add(id(box))
    out = [c for c in cands if id(c) not in drop] + [c for c in new if id(c) not in drop]
    return sorted(out, key=lambda c: (-c.score, c.start))


def merge(cands: Sequence[Candidate], verses_in: Callable[[int], int], ratio: float = 0.5,
          pericope_of: Callable[[int], tuple[int, int] | None] | None = None) -> list[Candidate]:
    """The hierarchy verse -> (range) -> pericope -> chapter."""
    out = merge_ranges(cands)
    if pericope_of is not None:
        out = collapse(out, "pericope", pericope_of, ratio)

    def chapter(vid: int) -> tuple[int, int] | None:
        total = verses_in(chapter_base(vid))
        return (chapter_base(vid) + 1, chapter_base(vid) + total) if total else None

    return disjoint(collapse(out, "chapter", chapter, ratio))


def disjoint(cands: Sequence[Candidate]) -> list[Candidate]:
    """No two results overlap: a candidate overlapping a better one (a voted span across a chapter break, which
    the ranges within a chapter leave alone) gives it its provenance and goes."""
    starts: list[int] = []
    kept: list[Candidate] = []  # disjoint, by start: their ends rise too
    out = []
    for c in sorted(cands, key=lambda c: (-c.score, c.start)):
        i = bisect.bisect_right(starts, c.end)
        if i and kept[i - 1].end >= c.start:
            _absorb(kept[i - 1], c)
            continue
        starts.insert(i, c.start)
        kept.insert(i, c)
        out.append(c)
    return out
