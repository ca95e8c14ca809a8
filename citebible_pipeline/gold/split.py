"""Deterministic held-out split of topic names; near-duplicates fall on the same side.

The key drops case, punctuation and word order and reduces each word to a crude stem (plural and
common suffixes), so "prayer", "prayers", "Praying" and "answered prayer" / "prayer answered" share
a key. The side is a hash of the key: stable across machines, refreshes and Python versions.
"""

from __future__ import annotations

import hashlib
import re

HELDOUT_PERCENT = 20
_STOP = {"the", "a", "an", "of", "to", "and", "in", "for", "on", "about", "with", "is", "be", "being", "your", "my", "our"}
_SUFFIXES = ("ing", "ness", "ed", "es", "s")


def stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def split_key(name: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", name.lower()) if w not in _STOP and len(w) > 1]
    return " ".join(sorted({stem(w) for w in words})) or name.strip().lower()


def side(name: str, heldout_percent: int = HELDOUT_PERCENT) -> str:
    bucket = int.from_bytes(hashlib.sha256(split_key(name).encode()).digest()[:4], "big") % 100
    return "heldout" if bucket < heldout_percent else "training"
