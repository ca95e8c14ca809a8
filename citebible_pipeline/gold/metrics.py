"""Retrieval metrics over graded passages (pure functions).

Relevance units are passages (a verse or a verse range, each with a grade 1-3). A result is a verse
or a chapter: it covers every gold passage it overlaps, so a chapter result counts for the relevant
verses it contains. Each passage is credited once, at the first result that covers it.
- recall@k: share of gold passages covered by the top k results.
- nDCG@k: a result's gain is 2^grade - 1 of the best passage it newly covers (so a chapter that covers
  several passages cannot score above the ideal); IDCG ranks the passages themselves by grade.
- MRR@k: 1 / rank of the first result covering any passage (0 if none in the top k).
- hit@k: 1 if any of the top k covers a passage.
- abstention accuracy: right when a query expecting abstention abstained, or one that did not expect it
  returned results.
A span longer than any chapter (Psalm 119's 176 verses) is an entry slip, not a passage (rule stated before measuring,
issue 22's seventeenth step: "gods faithfulness" votes Matthew 6:1-19:30; "material things" Genesis 1:1-Revelation
22:21): as a result it covers nothing, and as a gold passage it is not one to find (left out of every measure).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from citebible_pipeline.bible.canon import longest_chapter, span_verses


@dataclass(frozen=True, slots=True)
class Passage:
    start: int
    end: int
    grade: int


@dataclass(frozen=True, slots=True)
class Result:
    start: int  # verse id; a chapter result spans its first to last verse
    end: int
    pin: int | None = None  # the verse a reader sees first (present's pinned verse), for a long passage

    def covers(self, p: Passage) -> bool:
        overlap = self.start <= p.end and p.start <= self.end
        return overlap and not slip(self.start, self.end) and not slip(p.start, p.end)


@lru_cache(maxsize=65536)
def slip(start: int, end: int) -> bool:
    """A span no chapter is as long as: an entry slip (a chapter result, Psalm 119 included, never is)."""
    return start // 1000 != end // 1000 and span_verses(start, end) > longest_chapter()


def _findable(gold: Sequence[Passage]) -> list[Passage]:
    return [p for p in gold if not slip(p.start, p.end)]


def _credits(results: Sequence[Result], gold: Sequence[Passage], k: int) -> list[int]:
    """Per result in the top k: the best grade it newly covers (0 if none); `gold` already `_findable` (ndcg_at)."""
    credited: set[int] = set()
    out = []
    for r in results[:k]:
        best = 0
        for i, p in enumerate(gold):
            if i not in credited and r.covers(p):
                credited.add(i)
                best = max(best, p.grade)
        out.append(best)
    return out


def recall_at(results: Sequence[Result], gold: Sequence[Passage], k: int) -> float:
    gold = _findable(gold)
    if not gold:
        return 0.0
    return sum(1 for p in gold if any(r.covers(p) for r in results[:k])) / len(gold)


def ndcg_at(results: Sequence[Result], gold: Sequence[Passage], k: int) -> float:
    gold = _findable(gold)
    if not gold:
        return 0.0
    dcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(_credits(results, gold, k)))
    ideal = sorted((p.grade for p in gold), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg


def mrr_at(results: Sequence[Result], gold: Sequence[Passage], k: int) -> float:
    for i, r in enumerate(results[:k]):
        if any(r.covers(p) for p in gold):
            return 1.0 / (i + 1)
    return 0.0


def hit_at(results: Sequence[Result], gold: Sequence[Passage], k: int) -> float:
    return 1.0 if mrr_at(results, gold, k) > 0 else 0.0


def abstention_correct(abstained: bool, expect_abstain: bool) -> float:
    return 1.0 if abstained == expect_abstain else 0.0


def concentration(answers: Sequence[Sequence[Result]], k: int = 5) -> tuple[float | None, float | None]:
    """Fame across a set of answers (abstentions excluded): (share of answers whose top k covers the most
    frequent verse, distinct results per 100 top-k slots). A verse stands for the passage around it, so
    'Isaiah 41:10' and 'Isaiah 41:9-10' count as the same famous passage; distinct results are distinct
    (start, end) ranges."""
    answered = [list(a[:k]) for a in answers if a]
    if not answered:
        return None, None
    seen: dict[int, int] = {}
    for top in answered:
        for v in {v for r in top for v in _verses(r)}:
            seen[v] = seen.get(v, 0) + 1
    slots = sum(len(top) for top in answered)
    distinct = len({(r.start, r.end) for top in answered for r in top})
    return max(seen.values()) / len(answered), 100.0 * distinct / slots


def _verses(r: Result) -> range:
    """The ids a result spans; bbcccvvv ids leave gaps between chapters, which no verse fills."""
    return range(r.start, r.end + 1)


LONG_PASSAGE = 20  # verses: a chapter, pericope or range longer than this wounds by its pinned verse (issue 63's rule)


def shown(start: int, end: int, pin: int | None) -> tuple[int, int] | None:
    """What a reader is judged to have read of a passage: all of it, or, when longer than LONG_PASSAGE verses, its
    pinned verse alone (a chapter is read by the verse shown first; its every verse was not read); None: a long
    passage with no pin. The evaluation (`wounds`) and the harm stage (query.harm) read passages alike."""
    if span_verses(start, end) > LONG_PASSAGE:
        return None if pin is None else (pin, pin)
    return start, end


def wounds(r: Result, wound: tuple[int, int]) -> bool:
    """A result shows a wounding passage: what the reader is judged to read of it (`shown`) overlaps it."""
    span = shown(r.start, r.end, r.pin)
    return span is not None and span[0] <= wound[1] and wound[0] <= span[1]


def harm_at(results: Sequence[Result], wound_spans: Sequence[tuple[int, int]], k: int) -> float:
    """1 when any of the top k shows a passage judged to wound this reader."""
    return float(any(wounds(r, w) for r in results[:k] for w in wound_spans))
