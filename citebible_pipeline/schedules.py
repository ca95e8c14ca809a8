"""Jobs and schedules. The weekly OpenBible refresh fetches the live URLs and rebuilds the OpenBible
assets and everything downstream of them."""

import os

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    ScheduleDefinition,
    define_asset_job,
)

from citebible_pipeline.partitions import translation_partitions

REFRESH_SWITCH = "CITEBIBLE_WEEKLY_REFRESH"  # "on" starts the schedule RUNNING; otherwise it is STOPPED

OPTIONAL_ASSETS = ("reranker_cross_encoder",)  # minutes of fine-tuning on 2 cores: materialized on demand

openbible_refresh_job = define_asset_job(
    name="openbible_refresh",
    selection=AssetSelection.groups("openbible").downstream() - AssetSelection.assets(*OPTIONAL_ASSETS),
    description="Fetch OpenBible's cross-references and topics from their live URLs and rebuild them and their "
    "downstream (but the optional cross-encoder fine-tune).",
    config={"resources": {"sources": {"config": {"use_live": True}}}},
)

weekly_openbible_refresh = ScheduleDefinition(
    name="weekly_openbible_refresh",
    job=openbible_refresh_job,
    cron_schedule="0 3 * * 0",
    execution_timezone="UTC",
    default_status=DefaultScheduleStatus.RUNNING if os.environ.get(REFRESH_SWITCH, "").lower() == "on" else DefaultScheduleStatus.STOPPED,
    description=f"Sundays 03:00 UTC. Off by default (offline machines); set {REFRESH_SWITCH}=on or start it in the UI.",
)

build_all_job = define_asset_job(name="build_all", selection=AssetSelection.all() - AssetSelection.assets(*OPTIONAL_ASSETS),
                                 partitions_def=translation_partitions,
                                 description="Every asset but the optional cross-encoder fine-tune, in dependency order; "
                                 "`make run` runs it for the web partition (the translation assets of the chosen "
                                 "partition, every unpartitioned asset once).")

TRANSLATION_ASSETS = ("bible_verses", "bible_chapters", "verse_genres", "passage_embeddings")
translation_job = define_asset_job(
    name="build_translation", selection=AssetSelection.assets(*TRANSLATION_ASSETS), partitions_def=translation_partitions,
    description="One translation's corpus, genres and embeddings (a partition: web or bsb); `make bsb` runs it for the BSB.")
