"""Per-translation source data: how an archive names its books and which verses it numbers differently
from the canon. Everything translation-specific lives here as data; the parser is the same for all."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Translation:
    key: str  # the partition key and verses.translation
    name: str
    dataset: str  # sources.datasets key of its USFM archive
    file_pattern: re.Pattern  # a member name -> its USFM book code (group 1)
    empty_verses: frozenset[str]  # verses it keeps only as a footnote (an empty row, never a wrong id)
    missing: frozenset[str]  # canon verses it does not number at all (no row: never another verse's id)
    beyond_canon: frozenset[int]  # ids (bbcccvvv) of verses it numbers past the canon's counts, kept as they are


TRANSLATIONS: dict[str, Translation] = {
    "web": Translation(
        "web", "World English Bible", "web_usfm", re.compile(r"(?:^|/)\d+-([0-9A-Z]{3})[a-z-]*\.usfm$"),  # 02-GENeng-web.usfm
        frozenset({"Luke 17:36", "Acts 8:37", "Acts 15:34", "Acts 24:7", "Romans 16:25"}), frozenset(), frozenset()),
    # The BSB leaves out 21 verses the WEB numbers (19 omitted by its text critics; Psalm 106:42 and Lamentations
    # 2:1 are missing from this USFM), and puts the doxology at Romans 16:25-27 where the WEB has Romans 14:24-26.
    "bsb": Translation(
        "bsb", "Berean Standard Bible", "bsb_usfm", re.compile(r"(?:^|/)\d+([0-9A-Z]{3})BSB\.usfm$"),  # 01GENBSB.usfm
        frozenset(), frozenset({
            "Psalm 106:42", "Lamentations 2:1", "Matthew 17:21", "Matthew 18:11", "Matthew 23:14", "Mark 7:16",
            "Mark 9:44", "Mark 9:46", "Mark 11:26", "Mark 15:28", "Luke 17:36", "Luke 23:17", "John 5:4", "Acts 8:37",
            "Acts 15:34", "Acts 24:7", "Acts 28:29", "Romans 14:24", "Romans 14:25", "Romans 14:26", "Romans 16:24"}),
        frozenset({45_016_026, 45_016_027})),  # Romans 16:26-27
}
DEFAULT_TRANSLATION = "web"


def translation(key: str) -> Translation:
    try:
        return TRANSLATIONS[key]
    except KeyError:
        raise ValueError(f"unknown translation {key!r}; known: {', '.join(TRANSLATIONS)}") from None
