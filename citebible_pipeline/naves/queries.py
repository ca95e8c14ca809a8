"""Which Nave's sub-entries are evaluation queries, and their readable text (pure).

The rule, fixed before measuring anything:
1. A sub-entry (depth >= 1) with at least MIN_PASSAGES distinct resolved passages.
2. Its subject is not a proper name: the subject's first word is not a *name word*. A name word is one the
   WEB writes capitalized in at least NAME_SHARE of its uses (proper nouns are capitalized everywhere;
   ordinary words only at the start of a sentence). Words naming God (DEITY) are exempt: the index's
   doctrinal entries ("GOD: love of") are themes, not instances.
3. Neither it nor an enclosing sub-entry is an instance list: no word of INSTANCE_WORDS in their labels
   ("Exemplified", "Instances of", "Illustrated").
4. No label on its path has a name word ("Of David for Absalom" is an instance, not a need).
Readable text: subject and labels lower-cased and joined with ': ' ("afflictions and adversities: prayer
in"), a sense's number dropped ("1. A thing of value" -> "a thing of value"); a boilerplate label (BOILERPLATE: "General scriptures concerning") stands for the subject itself.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

MIN_PASSAGES = 3  # the floor
NAME_SHARE = 0.9
DEITY = frozenset({"god", "gods", "jesus", "christ", "holy", "spirit", "lord", "jehovah", "yahweh", "messiah"})
INSTANCE_WORDS = frozenset({"instance", "instances", "exemplified", "illustrated", "illustration", "illustrations",
                            "example", "examples", "incidents"})
BOILERPLATE = frozenset({"general scriptures concerning", "unclassified scriptures relating to",
                         "miscellany of minor sub topics", "miscellaneous"})  # compared as lower-case words
_NUMBERED = re.compile(r"^\d+\.\s*")  # "1. A thing of highly-estimated value": the sense's number
_WORD = re.compile(r"[A-Za-z]+")


def name_words(texts: Iterable[str]) -> frozenset[str]:
    """Lower-cased words the texts write capitalized in at least NAME_SHARE of their uses."""
    upper: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for text in texts:
        for w in _WORD.findall(text):
            if len(w) < 3:
                continue
            low = w.lower()
            total[low] += 1
            upper[low] += w[0].isupper()
    return frozenset(w for w, n in total.items() if upper[w] / n >= NAME_SHARE and w not in DEITY)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def readable(subject: str, path: tuple[str, ...]) -> str:
    labels = [lab for lab in path if " ".join(_words(lab)) not in BOILERPLATE]
    parts = [" ".join(subject.lower().split()),
             *(" ".join(_NUMBERED.sub("", lab).lower().split()).strip(" ,.;:") for lab in labels)]
    return ": ".join(p for p in parts if p)


def is_query(subject: str, path: tuple[str, ...], passages: int, names: frozenset[str]) -> bool:
    return bool(path) and passages >= MIN_PASSAGES and is_need(subject, path, names)


def is_need(subject: str, path: tuple[str, ...], names: frozenset[str]) -> bool:
    """Rules 2-4: an entry about a need or doctrine, not a person, place or list of instances."""
    first = _words(subject)[:1]
    if not first or first[0] in names:
        return False
    if any(w in INSTANCE_WORDS for lab in path for w in _words(lab)):
        return False
    return not any(w in names for lab in path for w in _words(lab))


@dataclass(frozen=True)
class NaveQuery:
    entry_ids: tuple[int, ...]  # entries with the same readable text are one query
    text: str


def select_queries(entries: Iterable[tuple[int, str, tuple[str, ...]]], passage_counts: dict[int, int],
                   names: frozenset[str]) -> list[NaveQuery]:
    """`entries`: (id, subject, path) of every sub-entry; the queries in a stable order (by text)."""
    by_text: dict[str, list[int]] = {}
    for eid, subject, path in entries:
        if is_query(subject, path, passage_counts.get(eid, 0), names):
            by_text.setdefault(readable(subject, path), []).append(eid)
    return [NaveQuery(tuple(ids), text) for text, ids in sorted(by_text.items())]
