"""Translations as Dagster partitions: the corpus, genre and embedding assets run once per translation,
on their own worker if the instance allows, each writing only its own rows."""

import warnings

from dagster import AssetDep, PreviewWarning, SpecificPartitionsPartitionMapping, StaticPartitionsDefinition

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION, TRANSLATIONS

translation_partitions = StaticPartitionsDefinition(list(TRANSLATIONS))
# The chain to the embeddings first (the translations' archives, the corpus, genres, pericopes and their blocking
# checks): on 2 cores the executor runs 2 steps at a time in priority order, so the other sources and their checks run
# beside the embedding step (minutes), not before it (measured: README "Thirty-first step").
FIRST = {"dagster/priority": "1"}
# Partitioned asset checks (one result per translation) are a Dagster preview feature; the warning says only that.
warnings.filterwarnings("ignore", category=PreviewWarning, message=".*partitions_def on an AssetCheckSpec.*")


def default_translation(asset) -> AssetDep:
    """A dependency on the default translation's partition only: what the query side and the evaluation
    read (building `bsb` never makes them stale)."""
    return AssetDep(asset, partition_mapping=SpecificPartitionsPartitionMapping([DEFAULT_TRANSLATION]))
