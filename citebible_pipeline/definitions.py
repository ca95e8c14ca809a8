"""The one Definitions object: every asset, check, job and schedule, with their resources."""

from __future__ import annotations

from dagster import Definitions

from citebible_pipeline.bible.assets import bible_assets, bible_checks
from citebible_pipeline.embeddings.assets import (
    EmbedderResource,
    embedding_assets,
    embedding_checks,
)
from citebible_pipeline.genre.assets import genre_assets, genre_checks
from citebible_pipeline.gold.assets import gold_assets, gold_checks
from citebible_pipeline.naves.assets import naves_assets, naves_checks
from citebible_pipeline.openbible.assets import openbible_assets, openbible_checks
from citebible_pipeline.rerank.assets import rerank_assets, rerank_checks
from citebible_pipeline.resources import PostgresResource, SourcesResource
from citebible_pipeline.schedules import (
    build_all_job,
    openbible_refresh_job,
    translation_job,
    weekly_openbible_refresh,
)
from citebible_pipeline.sources.assets import archive_assets
from citebible_pipeline.themes.assets import theme_assets, theme_checks
from citebible_pipeline.voice.assets import voice_assets, voice_checks

defs = Definitions(
    assets=[*archive_assets, *bible_assets, *genre_assets, *embedding_assets, *openbible_assets, *naves_assets,
            *gold_assets,
            *theme_assets, *rerank_assets, *voice_assets],
    asset_checks=[*bible_checks, *genre_checks, *embedding_checks, *openbible_checks, *naves_checks, *gold_checks, *theme_checks,
                  *rerank_checks, *voice_checks],
    jobs=[build_all_job, translation_job, openbible_refresh_job],
    schedules=[weekly_openbible_refresh],
    resources={"postgres": PostgresResource(), "sources": SourcesResource(), "embedder": EmbedderResource()},
)
