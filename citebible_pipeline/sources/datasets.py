"""The source datasets: live URL, bundled snapshot, checksum.

By default every dataset is read from the repo's bundled snapshot (`data/`, file://, sha256 checked),
so a machine without network builds everything. `CITEBIBLE_SOURCES=live` (or the resource's
`use_live` / the weekly schedule's run config) switches to the live URLs, which change without
notice and so carry no checksum. A per-dataset URL override: `CITEBIBLE_<NAME>_URL`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def data_dir() -> Path:
    return Path(os.environ.get("CITEBIBLE_DATA_DIR") or Path(__file__).resolve().parents[2] / "data")


@dataclass(frozen=True)
class Dataset:
    name: str
    live_url: str
    bundled: str  # path under data/
    bundled_sha256: str
    member: str | None  # text member inside a zip (None: the only one / not a zip)
    licence: str

    @property
    def bundled_path(self) -> Path:
        return (data_dir() / self.bundled).resolve()

    @property
    def bundled_url(self) -> str:
        return self.bundled_path.as_uri()


DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset("web_usfm", "https://ebible.org/Scriptures/eng-web_usfm.zip", "web/eng-web_usfm.zip",
                "c886cf7fd755d73571586c68f125c3da4a63ae7031381759c0d25ba7b5e6fae9", None, "public domain"),
        # The BSB for its \s1 section headings (pericopes); the live archive is the upstream fork at the
        # commit the snapshot was taken from (data/NOTICE). File names carry the book code: 01GENBSB.usfm.
        Dataset("bsb_usfm", "https://github.com/usfm-bible/examples.bsb/archive/48a9feb71f0a66f9b8f418b11ae25b7ad2e49a0d.zip",
                "bsb/bsb_usfm.zip", "88b95a6e4ed83cc518354fd4edf3498e22eca48e8ff95e87fa2804f201424da1", None, "public domain"),
        Dataset("openbible_cross_refs", "https://a.openbible.info/data/cross-references.zip",
                "openbible/cross-references.zip",
                "41e60c856d29d32ff20978b4b3d90ad02ce212d32bc8441e59cc312bbb05bcc7", "cross_references.txt", "CC BY"),
        Dataset("openbible_topic_votes", "https://a.openbible.info/data/topic-votes.txt",
                "openbible/topic-votes.txt.gz",
                "02941adc5f4f61b82ca7177b4b2754ab89ba847019d1d115d818877b2c5ae536", None, "CC BY"),
        Dataset("openbible_topic_scores", "https://a.openbible.info/data/topic-scores.zip",
                "openbible/topic-scores.txt.gz",
                "85d6b9c349d111879b03e0cb22e6f1fb7a5f46a63aa7feb0e0efaea8a85585ba", None, "CC BY"),
        # Nave's Topical Bible (1896, public domain) as converted in BibleData (CC BY 4.0); the live file is the
        # CSV at the commit the snapshot was taken from (the snapshot is its gzip; the reader sniffs either).
        Dataset("naves", "https://raw.githubusercontent.com/BradyStephenson/bible-data/"
                "6ce0a8dbb9796609afa9306827b39d7212eef913/NavesTopicalDictionary.csv",
                "naves/NavesTopicalDictionary.csv.gz",
                "a8fa1cbb91d960af6b9d3fa15e732349b0158caf0ddaac9a33ba4c8c0f1e2133", None, "CC BY 4.0"),
    )
}


def resolve_url(name: str, use_live: bool | None = None) -> tuple[str, str | None]:
    """(url, expected sha256 or None) for a dataset under the current configuration."""
    ds = DATASETS[name]
    override = os.environ.get(f"CITEBIBLE_{name.upper()}_URL")
    if override:
        return override, os.environ.get(f"CITEBIBLE_{name.upper()}_SHA256") or None
    if use_live is None:
        use_live = os.environ.get("CITEBIBLE_SOURCES", "bundled").lower() == "live"
    return (ds.live_url, None) if use_live else (ds.bundled_url, ds.bundled_sha256)
