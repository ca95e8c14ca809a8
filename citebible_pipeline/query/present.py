"""Presentation: ranked candidates (or an explicit reference) become the Results a reader sees: the pinned
best verse, the reference in every state, +-TUNING.context_verses of context, highlights, provenance and
the best-voted cross-references. Reads verse rows through the connection it is given."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from citebible_pipeline.bible.canon import by_order, chapter_base, split_id
from citebible_pipeline.bible.references import format_range, parse_reference
from citebible_pipeline.query import display as disp
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.models import Hit, Related, Result, VerseText
from citebible_pipeline.query.retrieve import cross_references, verse_rows
from citebible_pipeline.query.startup import EngineData
from citebible_pipeline.query.tuning import TUNING


def reference_candidate(reference: str, data: EngineData) -> Candidate:
    """An explicit reference as the one candidate of a lookup."""
    ref = parse_reference(reference)
    level = "chapter" if ref.is_chapter and ref.chapter == ref.end_chapter else "verse" if ref.start_id == ref.end_id else "range"
    c = Candidate(ref.start_id, ref.end_id, level, 1.0)
    c.genre = data.genres.get(c.start)
    c.hits.append(("reference", "reference", level, 1))
    return c


def present(conn, data: EngineData, cands: Sequence[Candidate], query_vector: np.ndarray | None, terms: set[str],
            translation: str, vectors: tuple[np.ndarray, np.ndarray] | None = None) -> list[Result]:
    if not cands:
        return []
    ctx = TUNING.context_verses
    ids: set[int] = set()
    for c in cands:
        ids.update(range(max(c.start - ctx, chapter_base(c.start) + 1), c.end + ctx + 1))
    rows = verse_rows(conn, data.space_id, sorted(ids), translation, vectors)
    refs = cross_references(conn, [(c.start, c.end) for c in cands], per_span=3)
    related: dict[int, list[Related]] = {}
    for i, s, e, votes in refs:
        related.setdefault(i, []).append(Related(ref=format_range(s, e), start_id=s, end_id=e, votes=votes))
    out = []
    for i, c in enumerate(cands):
        body = [vid for vid in range(c.start, c.end + 1) if vid in rows]
        if not body:
            continue
        with_vec = [v for v in body if rows[v][2] is not None]
        vecs = [rows[v][2] for v in with_vec]
        pin_id = (c.pin if c.pin in rows else  # the do-no-harm stage's choice for this reader
                  with_vec[disp.pinned_index(query_vector, vecs)] if query_vector is not None and vecs else body[0])
        if c.level == "chapter":
            around = range(pin_id - ctx, pin_id + ctx + 1)
        else:
            around = [*range(c.start - ctx, c.start), *range(c.end + 1, c.end + ctx + 1)]
        text = " ".join(rows[v][1] for v in body if rows[v][1])
        order, chapter, verse_start = split_id(c.start)
        out.append(Result(
            ref=format_range(c.start, c.end, whole_chapters=c.level == "chapter"), start_id=c.start, end_id=c.end,
            book=by_order(order).name, chapter=chapter, verse_start=verse_start, verse_end=split_id(c.end)[2],
            level=c.level, title=data.pericopes.title(c.start, c.end, c.level),
            text=text, score=round(c.score, 4), genre=c.genre,
            pinned=VerseText(ref=rows[pin_id][0], id=pin_id, text=rows[pin_id][1]),
            context=[VerseText(ref=rows[v][0], id=v, text=rows[v][1]) for v in around
                     if v in rows and v != pin_id and (c.level == "chapter" or not c.start <= v <= c.end)],
            highlights=disp.highlights(text, terms),
            provenance=[Hit(variant=h[0], retriever=h[1], level=h[2], rank=h[3]) for h in c.hits],
            related=related.get(i, []),
        ))
    return out


def overlaps(r: Result, other: Result) -> bool:
    return r.start_id <= other.end_id and other.start_id <= r.end_id


def answer(conn, data: EngineData, ranked, translation: str, k: int,
           vectors: tuple[np.ndarray, np.ndarray] | None = None) -> list[Result]:
    """What a reader sees of a ranking (`reading.Ranked`): nothing when it abstained; an explicit reference looked up
    (when the index has no verses for a real one, `ranked` is marked abstained with the reason); else the top k, with
    a reference the sentence names pinned first."""
    def lookup() -> list[Result]:
        return present(conn, data, [reference_candidate(ranked.analysis.references[0], data)], None, set(), translation)

    if ranked.abstained:
        return []
    if ranked.analysis.query_type == "reference":
        results = lookup()
        if not results:  # a real reference the index has no verses for (a deuterocanon book, by default)
            ranked.abstained, ranked.reason = True, f"{ranked.analysis.references[0]} is not in this index"
        return results
    results = present(conn, data, ranked.candidates[:k], ranked.query_vector, ranked.terms, translation, vectors)
    direct = lookup() if ranked.analysis.references else []
    return (direct + [r for r in results if not overlaps(r, direct[0])])[:k] if direct else results
