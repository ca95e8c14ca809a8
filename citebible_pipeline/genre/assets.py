"""Dagster wiring for per-verse genre tags and the boost table."""

import time

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from pydantic import Field

from citebible_pipeline.bible.assets import bible_verses
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.genre.tagger import (
    DEFAULT_BOOSTS,
    GENRES,
    VerseFeatures,
    tag_verses,
    validate_boosts,
    write_genres,
)
from citebible_pipeline.metadata import md_table
from citebible_pipeline.partitions import FIRST, translation_partitions
from citebible_pipeline.resources import PostgresResource


class GenreConfig(Config):
    boosts: dict[str, float] = Field(default_factory=dict, description="override any of the default genre weights (> 0); "
                                     f"the one boost table is written by the {DEFAULT_TRANSLATION} partition")


@asset(
    deps=[bible_verses],
    partitions_def=translation_partitions,
    op_tags=FIRST,
    group_name="genre",
    kinds={"postgres"},
    code_version="2",
    description="One genre per verse of one translation, from a closed set (book default -> curated ranges -> verse "
    f"signals), with the rule that decided; the {DEFAULT_TRANSLATION} partition also writes the genre boost table the "
    "query multiplies by.",
)
def verse_genres(context: AssetExecutionContext, config: GenreConfig, postgres: PostgresResource) -> MaterializeResult:
    key = context.partition_key
    boosts = validate_boosts(config.boosts)
    if key != DEFAULT_TRANSLATION and config.boosts:
        raise ValueError(f"genre boosts are set on the {DEFAULT_TRANSLATION} partition (one table for the query side), "
                         f"not on {key}")
    started = time.perf_counter()
    with postgres.partition_writer("verse_genres", key) as conn:
        rows = conn.execute(
            "SELECT id, text, is_poetry, words_of_jesus FROM verses WHERE translation = %s ORDER BY id", (key,)
        ).fetchall()
        if not rows:
            raise RuntimeError(f"no {key} verses: materialize bible_verses for partition {key} first")
        tags = tag_verses(VerseFeatures(*r) for r in rows)
        write_genres(conn, tags, boosts if key == DEFAULT_TRANSLATION else None, key)
    counts = {g: 0 for g in GENRES}
    sources: dict[str, int] = {}
    for t in tags:
        counts[t.genre] += 1
        kind = t.source if t.source.startswith("signal") else t.source.split(":")[0]
        sources[kind] = sources.get(kind, 0) + 1
    context.log.info(f"{key}: tagged {len(tags):,} verses in {time.perf_counter() - started:.2f}s")
    return MaterializeResult(
        metadata={
            "verses_tagged": len(tags),
            "distribution": MetadataValue.md(md_table(("genre", "verses", "boost"), (
                (g, n, boosts[g]) for g, n in sorted(counts.items(), key=lambda x: -x[1])))),
            "decided_by": MetadataValue.json(sources),
            "boosts_changed_from_default": MetadataValue.json({g: w for g, w in boosts.items() if DEFAULT_BOOSTS[g] != w}),
        }
    )


@asset_check(asset=verse_genres, blocking=True, partitions_def=translation_partitions, op_tags=FIRST,
             description="Every verse of the translation tagged once, every tag in the closed set, every boost > 0.")
def verse_genres_complete(context: AssetCheckExecutionContext, postgres: PostgresResource) -> AssetCheckResult:
    key = context.partition_key
    with postgres.connect() as conn:
        untagged = conn.execute(
            "SELECT count(*) FROM verses v LEFT JOIN verse_genres g USING (translation, id) WHERE g.id IS NULL"
            " AND v.translation = %s", (key,)).fetchone()[0]
        outside = conn.execute("SELECT count(*) FROM verse_genres WHERE translation = %s AND NOT (genre = ANY(%s))",
                               (key, list(GENRES))).fetchone()[0]
        bad_boosts = conn.execute("SELECT count(*) FROM genre_boosts WHERE NOT weight > 0").fetchone()[0]
        dist = conn.execute("SELECT genre, count(*) FROM verse_genres WHERE translation = %s GROUP BY genre ORDER BY 2 DESC",
                            (key,)).fetchall()
    return AssetCheckResult(
        passed=untagged == 0 and outside == 0 and bad_boosts == 0 and len(dist) > 0,
        metadata={"untagged": untagged, "outside_closed_set": outside, "nonpositive_boosts": bad_boosts,
                  "distribution": MetadataValue.md(md_table(("genre", "verses"), dist))},
    )


genre_assets = [verse_genres]
genre_checks = [verse_genres_complete]
