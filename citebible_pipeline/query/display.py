"""Stage 10, display (pure): the pinned best verse of a range or chapter, term highlights, context."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from citebible_pipeline.gold.split import stem
from citebible_pipeline.query.models import Span

STOP = frozenset(
    "a an and are as at be but by can do does for from god has have he her his how i i'm im in is it its me my "
    "not of on or our she so that the their them they this to was we what when where who why will with you your "
    "lord about am any all anymore".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


def terms(texts: Iterable[str]) -> set[str]:
    """Stems of the content words of the query and of the routed themes' names."""
    out = set()
    for t in texts:
        for w in _WORD.findall(t.lower()):
            w = w.strip("'")
            if len(w) > 2 and w not in STOP:
                out.add(stem(w.removesuffix("'s")))
    return out


def highlights(text: str, stems: set[str]) -> list[Span]:
    """Character spans of words whose stem is one of `stems` (never overlapping, in order)."""
    spans = []
    for m in _WORD.finditer(text):
        w = m.group().lower().strip("'")
        if len(w) > 2 and stem(w.removesuffix("'s")) in stems:
            spans.append(Span(start=m.start(), end=m.start() + len(m.group().rstrip("'")), term=m.group()))
    return spans


def pinned_index(query: np.ndarray, verse_vectors: Sequence[np.ndarray]) -> int:
    """The verse most similar to the query (cosine: vectors are unit norm)."""
    if not len(verse_vectors):
        return 0
    return int(np.argmax(np.stack(verse_vectors) @ query))
