"""Per-verse genre tags and the boost weights the query multiplies by."""

from citebible_pipeline.genre.tagger import (
    DEFAULT_BOOSTS,
    GENRES,
    GenreTag,
    VerseFeatures,
    load_overrides,
    tag_verses,
)

__all__ = ["DEFAULT_BOOSTS", "GENRES", "GenreTag", "VerseFeatures", "load_overrides", "tag_verses"]
