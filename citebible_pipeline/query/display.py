"""Stage 10, display (pure): the pinned best verse of a range or chapter, term highlights, context."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from citebible_pipeline.query.models import Span
from citebible_pipeline.query.text import DISPLAY_STOP, DISPLAY_WORD, stem


def terms(texts: Iterable[str]) -> set[str]:
    """Stems of the content words of the query and of the routed themes' names."""
    out = set()
    for t in texts:
        for w in DISPLAY_WORD.findall(t.lower()):
            w = w.strip("'")
            if len(w) > 2 and w not in DISPLAY_STOP:
                out.add(stem(w.removesuffix("'s")))
    return out


def highlights(text: str, stems: set[str]) -> list[Span]:
    """Character spans of words whose stem is one of `stems` (never overlapping, in order)."""
    spans = []
    for m in DISPLAY_WORD.finditer(text):
        w = m.group().lower().strip("'")
        if len(w) > 2 and stem(w.removesuffix("'s")) in stems:
            spans.append(Span(start=m.start(), end=m.start() + len(m.group().rstrip("'")), term=m.group()))
    return spans


def pinned_index(query: np.ndarray, verse_vectors: Sequence[np.ndarray]) -> int:
    """The verse most similar to the query (cosine: vectors are unit norm)."""
    if not len(verse_vectors):
        return 0
    return int(np.argmax(np.asarray(verse_vectors) @ query))  # a matrix as it is, a list of rows stacked
