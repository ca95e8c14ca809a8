"""The query module's one place for words: tokenizing, stop words and stemming, used by analyze (pastoral
intent), floor (Bible-vocabulary coverage) and display (highlight terms). Full text is Postgres's english
configuration (retrieve.or_query).

The held-out split (gold/split.py) keeps its own frozen copy of its stemmer on purpose: changing a
highlighting rule here must never move which topics are held out (tests/test_gold.py pins the split).
Each stop list below serves one purpose and keeps the words it was measured with.
"""

from __future__ import annotations

import functools
import re

WORD = re.compile(r"[a-z][a-z']*")  # analyze: lower-cased words, apostrophes kept ("i'm", "can't")
LETTERS = re.compile(r"[a-z]+")  # floor: letters only
DISPLAY_WORD = re.compile(r"[A-Za-z][A-Za-z']*")  # display: words as they appear in the verse text

FIRST_PERSON = frozenset({"i", "im", "i'm", "ive", "i've", "i'll", "id", "i'd", "me", "my", "mine", "myself", "we", "we're",
                          "we've", "we'll", "we'd", "our", "us", "ours", "ourselves"})
# floor: words too common to say whether a question is about the Bible
FLOOR_STOP = frozenset("a an and are as at be but by can do does for from how i in is it its me my not of on or our so "
                       "that the their this to was we what when where who why will with you your".split())
# display: words never highlighted (function words, and God/Lord, which would light up every verse)
DISPLAY_STOP = frozenset(
    "a an and are as at be but by can do does for from god has have he her his how i i'm im in is it its me my "
    "not of on or our she so that the their them they this to was we what when where who why will with you your "
    "lord about am any all anymore".split()
)
_SUFFIXES = ("ing", "ness", "ed", "es", "s")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude stemmer (plural and common suffixes): 'praying' -> 'pray', 'mercies' -> 'mercy'. Kept per word: the
    display stems every word of every verse it shows (about 500 a query)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def label_terms(text: str) -> list[str]:
    """Document expansion's words (query.labels), the same for a label and a query: lower-cased, apostrophes
    dropped ("don't" -> "dont"), the floor's stop words and words under 3 letters out, stemmed."""
    return [stem(w) for w in WORD.findall(text.lower().replace("'", "")) if w not in FLOOR_STOP and len(w) > 2]


def plural_base(word: str) -> str:
    """The floor's lighter normalization: a plural s dropped ('prayers' -> 'prayer', not 'grass')."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
