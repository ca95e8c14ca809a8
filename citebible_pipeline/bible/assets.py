"""Dagster wiring for the WEB corpus: verses and chapters tables plus their checks."""


import time

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from citebible_pipeline.bible.corpus import build_chapters, build_verses
from citebible_pipeline.bible.store import write_books, write_chapters, write_verses
from citebible_pipeline.metadata import md_table
from citebible_pipeline.resources import PostgresResource, SourcesResource
from citebible_pipeline.sources.assets import web_usfm_archive

EXPECTED_VERSES = 31_103
EXPECTED_CHAPTERS = 1_189
FOOTNOTE_ONLY = {"Luke 17:36", "Acts 8:37", "Acts 15:34", "Acts 24:7", "Romans 16:25"}


class CorpusConfig(Config):
    include_deuterocanon: bool = False


@asset(
    deps=[web_usfm_archive],
    group_name="bible",
    kinds={"postgres"},
    code_version="1",
    description="Every verse of the World English Bible (66 books; the deuterocanon behind a flag): clean text, "
    "poetry/paragraph flags, Psalm titles, footnotes and Strong's numbers.",
)
def web_verses(
    context: AssetExecutionContext, config: CorpusConfig, postgres: PostgresResource, sources: SourcesResource
) -> MaterializeResult:
    started = time.perf_counter()
    rows = build_verses(sources.cached("web_usfm"), include_deuterocanon=config.include_deuterocanon)
    parsed_s = time.perf_counter() - started
    context.log.info(f"parsed {len(rows):,} verses in {parsed_s:.2f}s")
    with postgres.connect() as conn:
        write_books(conn)
        stats = write_verses(conn, rows)
    sample = [r for r in rows if r.ref in ("Genesis 1:1", "Psalm 34:18", "John 11:35", "Romans 8:28")]
    return MaterializeResult(
        metadata={
            "verses": len(rows),
            "books": len({r.book.order for r in rows}),
            "empty_verses": MetadataValue.json(sorted(r.ref for r in rows if not r.text)),
            "poetry_verses": sum(r.is_poetry for r in rows),
            "rows_replaced": stats.deleted,
            "parse_seconds": round(parsed_s, 2),
            "load_seconds": round(stats.seconds, 2),
            "preview": MetadataValue.md(md_table(("id", "ref", "poetry", "text"), ((r.id, r.ref, r.is_poetry, r.text) for r in sample))),
        }
    )


@asset(
    deps=[web_verses],
    group_name="bible",
    kinds={"postgres"},
    code_version="1",
    description="One row per chapter: its verse range and the verse texts joined (chapter-level retrieval).",
)
def web_chapters(context: AssetExecutionContext, postgres: PostgresResource) -> MaterializeResult:
    with postgres.connect() as conn:
        verses = conn.execute(
            "SELECT book_order, chapter, verse, verse_end, text FROM verses WHERE translation = 'web' ORDER BY id"
        ).fetchall()
        chapters = build_chapters(verses)
        stats = write_chapters(conn, chapters)
    longest = sorted(chapters, key=lambda c: len(c.text), reverse=True)[:5]
    context.log.info(f"built {len(chapters):,} chapters from {len(verses):,} verses")
    return MaterializeResult(
        metadata={
            "chapters": len(chapters),
            "rows_replaced": stats.deleted,
            "load_seconds": round(stats.seconds, 2),
            "longest": MetadataValue.md(md_table(("ref", "verses", "chars"), ((c.ref, c.verse_count, len(c.text)) for c in longest))),
        }
    )


@asset_check(asset=web_verses, blocking=True, description="31,103 verses with unique ids; only the five footnote-only verses are empty; no markup residue.")
def web_verses_complete(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        n, distinct, books_n = conn.execute(
            "SELECT count(*), count(DISTINCT id), count(DISTINCT book_order) FROM verses WHERE translation='web' AND book_order <= 66"
        ).fetchone()
        empty = {r[0] for r in conn.execute("SELECT ref FROM verses WHERE translation='web' AND is_empty")}
        residue = conn.execute(
            "SELECT count(*) FROM verses WHERE translation='web' AND (text LIKE %s OR text LIKE %s OR text LIKE %s)",
            ("%\\%", "%|%", "%strong=%"),
        ).fetchone()[0]
    passed = n == EXPECTED_VERSES and distinct == n and books_n == 66 and empty == FOOTNOTE_ONLY and residue == 0
    return AssetCheckResult(
        passed=passed,
        severity=AssetCheckSeverity.ERROR,
        metadata={"verses": n, "distinct_ids": distinct, "books": books_n, "empty": MetadataValue.json(sorted(empty)),
                  "residue_rows": residue, "expected_verses": EXPECTED_VERSES},
    )


@asset_check(asset=web_chapters, blocking=True, description="1,189 chapters whose verse counts add up to the verse table.")
def web_chapters_complete(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        n, verses = conn.execute(
            "SELECT count(*), coalesce(sum(verse_count), 0) FROM chapters WHERE translation='web' AND book_order <= 66"
        ).fetchone()
        expected_verses = conn.execute(
            "SELECT count(*) FROM verses WHERE translation='web' AND book_order <= 66").fetchone()[0]
    return AssetCheckResult(
        passed=n == EXPECTED_CHAPTERS and verses == expected_verses,
        metadata={"chapters": n, "verses_covered": int(verses), "verses_in_table": expected_verses},
    )


bible_assets = [web_verses, web_chapters]
bible_checks = [web_verses_complete, web_chapters_complete]
