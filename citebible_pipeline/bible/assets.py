"""Dagster wiring for the corpus: each translation's verses and chapters (a partition each), the BSB's pericopes,
and their checks."""


import time

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from citebible_pipeline.bible.canon import PROTESTANT_BOOKS, books
from citebible_pipeline.bible.corpus import build_chapters, build_verses
from citebible_pipeline.bible.pericopes import canon_ids, coverage_errors, from_archive
from citebible_pipeline.bible.references import format_id, format_range, parse_reference
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION, Translation, translation
from citebible_pipeline.bible.store import write_books, write_chapters, write_pericopes, write_verses
from citebible_pipeline.metadata import md_table
from citebible_pipeline.partitions import FIRST, default_translation, translation_partitions
from citebible_pipeline.resources import PostgresResource, SourcesResource
from citebible_pipeline.sources.assets import bsb_usfm_archive, web_usfm_archive

EXPECTED_CHAPTERS = 1_189


class CorpusConfig(Config):
    include_deuterocanon: bool = False


def expected_ids(t: Translation) -> set[int]:
    """The verse ids a translation's 66 books should have: the canon's, less the verses it does not
    number, plus those it numbers past the canon (translations.py lists both)."""
    canon = {v for b in books()[:PROTESTANT_BOOKS] for v in canon_ids(b)}
    return (canon - {parse_reference(r).start_id for r in t.missing}) | set(t.beyond_canon)


@asset(
    deps=[web_usfm_archive, bsb_usfm_archive],
    partitions_def=translation_partitions,
    op_tags=FIRST,
    group_name="bible",
    kinds={"postgres"},
    code_version="2",
    description="Every verse of one translation (a partition: web, bsb; the WEB's deuterocanon behind a flag): clean "
    "text, poetry/paragraph flags, Psalm titles, footnotes and Strong's numbers, on the shared verse ids.",
)
def bible_verses(
    context: AssetExecutionContext, config: CorpusConfig, postgres: PostgresResource, sources: SourcesResource
) -> MaterializeResult:
    t = translation(context.partition_key)
    started = time.perf_counter()
    rows = build_verses(sources.cached(t.dataset), include_deuterocanon=config.include_deuterocanon, translation=t.key)
    parsed_s = time.perf_counter() - started
    context.log.info(f"{t.key}: parsed {len(rows):,} verses in {parsed_s:.2f}s")
    with postgres.partition_writer("bible_verses", t.key) as conn:
        write_books(conn)
        stats = write_verses(conn, rows, t.key)
    sample = [r for r in rows if r.ref in ("Genesis 1:1", "Psalm 34:18", "John 11:35", "Romans 8:28")]
    return MaterializeResult(
        metadata={
            "translation": t.name,
            "verses": len(rows),
            "books": len({r.book.order for r in rows}),
            "empty_verses": MetadataValue.json(sorted(r.ref for r in rows if not r.text)),
            "canon_verses_it_does_not_number": MetadataValue.json(sorted(t.missing)),
            "verses_past_the_canon": MetadataValue.json([r.ref for r in rows if r.id in t.beyond_canon]),
            "poetry_verses": sum(r.is_poetry for r in rows),
            "rows_replaced": stats.deleted,
            "parse_seconds": round(parsed_s, 2),
            "load_seconds": round(stats.seconds, 2),
            "preview": MetadataValue.md(md_table(("id", "ref", "poetry", "text"), ((r.id, r.ref, r.is_poetry, r.text) for r in sample))),
        }
    )


@asset(
    deps=[bible_verses],
    partitions_def=translation_partitions,
    op_tags=FIRST,
    group_name="bible",
    kinds={"postgres"},
    code_version="2",
    description="One row per chapter of one translation: its verse range and the verse texts joined (chapter-level retrieval).",
)
def bible_chapters(context: AssetExecutionContext, postgres: PostgresResource) -> MaterializeResult:
    key = context.partition_key
    with postgres.partition_writer("bible_chapters", key) as conn:
        verses = conn.execute(
            "SELECT book_order, chapter, verse, verse_end, text FROM verses WHERE translation = %s ORDER BY id", (key,)
        ).fetchall()
        chapters = build_chapters(verses, key)
        stats = write_chapters(conn, chapters, key)
    longest = sorted(chapters, key=lambda c: len(c.text), reverse=True)[:5]
    context.log.info(f"{key}: built {len(chapters):,} chapters from {len(verses):,} verses")
    return MaterializeResult(
        metadata={
            "chapters": len(chapters),
            "rows_replaced": stats.deleted,
            "load_seconds": round(stats.seconds, 2),
            "longest": MetadataValue.md(md_table(("ref", "verses", "chars"), ((c.ref, c.verse_count, len(c.text)) for c in longest))),
        }
    )


@asset_check(asset=bible_verses, blocking=True, partitions_def=translation_partitions, op_tags=FIRST,
             description="Exactly the verse ids the translation should number (the canon, less and plus its listed "
             "differences), unique; only its footnote-only verses are empty; no markup residue.")
def bible_verses_complete(context: AssetCheckExecutionContext, postgres: PostgresResource) -> AssetCheckResult:
    t = translation(context.partition_key)
    with postgres.connect() as conn:
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM verses WHERE translation = %s AND book_order <= %s", (t.key, PROTESTANT_BOOKS))]
        empty = {r[0] for r in conn.execute("SELECT ref FROM verses WHERE translation = %s AND is_empty", (t.key,))}
        residue = conn.execute(
            "SELECT count(*) FROM verses WHERE translation = %s AND (text LIKE %s OR text LIKE %s OR text LIKE %s)",
            (t.key, "%\\%", "%|%", "%strong=%"),
        ).fetchone()[0]
    expected = expected_ids(t)
    got = set(ids)
    missing, extra = sorted(expected - got), sorted(got - expected)
    passed = not missing and not extra and len(ids) == len(got) and empty == set(t.empty_verses) and residue == 0
    return AssetCheckResult(
        passed=passed,
        severity=AssetCheckSeverity.ERROR,
        metadata={"verses": len(ids), "expected_verses": len(expected), "duplicate_ids": len(ids) - len(got),
                  "missing": MetadataValue.json([format_id(v) for v in missing[:20]]),
                  "unexpected": MetadataValue.json([format_id(v) for v in extra[:20]]),
                  "empty": MetadataValue.json(sorted(empty)), "residue_rows": residue},
    )


@asset_check(asset=bible_chapters, blocking=True, partitions_def=translation_partitions, op_tags=FIRST,
             description="1,189 chapters whose verse counts add up to the translation's verse table.")
def bible_chapters_complete(context: AssetCheckExecutionContext, postgres: PostgresResource) -> AssetCheckResult:
    key = context.partition_key
    with postgres.connect() as conn:
        n, verses = conn.execute(
            "SELECT count(*), coalesce(sum(verse_count), 0) FROM chapters WHERE translation = %s AND book_order <= %s",
            (key, PROTESTANT_BOOKS)).fetchone()
        expected_verses = conn.execute(
            "SELECT count(*) FROM verses WHERE translation = %s AND book_order <= %s", (key, PROTESTANT_BOOKS)).fetchone()[0]
    return AssetCheckResult(
        passed=n == EXPECTED_CHAPTERS and verses == expected_verses,
        metadata={"chapters": n, "verses_covered": int(verses), "verses_in_table": expected_verses},
    )


@asset(
    deps=[bsb_usfm_archive, default_translation(bible_verses)],  # the check reads the corpus the passages cover
    op_tags=FIRST,
    group_name="bible",
    kinds={"postgres"},
    code_version="1",
    description="Passages an editor titled (the BSB's \\s1 section headings, with their parallel references), on the "
    "shared verse ids: together they cover every verse of the 66 books exactly once, so they apply to the WEB too.",
)
def pericopes(context: AssetExecutionContext, postgres: PostgresResource, sources: SourcesResource) -> MaterializeResult:
    started = time.perf_counter()
    rows, report, numbered = from_archive(sources.cached("bsb_usfm"))
    errors = coverage_errors(rows)
    if errors:  # nothing is written: the table keeps its last good passages
        raise ValueError(f"{len(errors)} coverage errors in the BSB pericopes, e.g. {errors[:3]}")
    with postgres.connect() as conn:
        stats = write_pericopes(conn, rows, "bsb")
    lengths = sorted(p.end_id % 1000 - p.start_id % 1000 + 1 for p in rows if p.start_id // 1000 == p.end_id // 1000)
    sample = [p for p in rows if p.start_id in (19023001, 43011017, 46013001, 40005001)]
    context.log.info(f"{len(rows):,} pericopes from {numbered:,} BSB verses; the WEB numbers {len(report.canon_only)} "
                     f"verses the BSB does not, the BSB {len(report.source_only)} the WEB does not")
    return MaterializeResult(metadata={
        "pericopes": len(rows), "bsb_verses": numbered, "with_parallels": sum(p.parallels is not None for p in rows),
        "median_verses_within_a_chapter": lengths[len(lengths) // 2] if lengths else 0,
        "web_only_verses": MetadataValue.json([format_id(v) for v in report.canon_only]),
        "bsb_only_verses": MetadataValue.json([format_id(v) for v in report.source_only]),
        "headings_moved_to_the_next_web_verse": MetadataValue.json([[format_id(a), format_id(b)] for a, b in report.moved_starts]),
        "preview": MetadataValue.md(md_table(("passage", "title", "parallels"),
                                             ((format_range(p.start_id, p.end_id), p.title, p.parallels or "") for p in sample))),
        "rows_replaced": stats.deleted, "seconds": round(time.perf_counter() - started, 2),
    })


@asset_check(asset=pericopes, blocking=True, op_tags=FIRST, description="Every WEB verse of the 66 books lies in exactly one pericope; "
             "no two overlap; every range is ordered, inside one book, and titled.")
def pericopes_cover_every_verse(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        uncovered, doubled, bad = conn.execute(
            "SELECT (SELECT count(*) FROM verses v LEFT JOIN LATERAL (SELECT end_id FROM pericopes p"
            "         WHERE p.start_id <= v.id ORDER BY p.start_id DESC LIMIT 1) p ON true"
            "        WHERE v.translation = %s AND v.book_order <= %s AND (p.end_id IS NULL OR p.end_id < v.id)),"
            " (SELECT count(*) FROM (SELECT start_id, lag(end_id) OVER (ORDER BY start_id) AS prev_end FROM pericopes) x"
            "        WHERE prev_end >= start_id),"
            " (SELECT count(*) FROM pericopes WHERE end_id < start_id OR btrim(title) = '')",
            (DEFAULT_TRANSLATION, PROTESTANT_BOOKS)).fetchone()
    return AssetCheckResult(passed=uncovered == 0 and doubled == 0 and bad == 0,
                            metadata={"uncovered_verses": uncovered, "verses_in_two": doubled, "bad_ranges": bad})


bible_assets = [bible_verses, bible_chapters, pericopes]
bible_checks = [bible_verses_complete, bible_chapters_complete, pericopes_cover_every_verse]
