"""Dagster wiring for Nave's Topical Bible: the entries and their passages, loaded together, and their checks."""


import re
import time

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    AssetSpec,
    MaterializeResult,
    MetadataValue,
    asset_check,
    multi_asset,
)

from citebible_pipeline.bible.assets import bible_verses
from citebible_pipeline.bible.canon import verse_id
from citebible_pipeline.bible.references import format_range
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.metadata import md_table
from citebible_pipeline.naves.load import write_index
from citebible_pipeline.naves.parse import NaveIndex, parse_naves
from citebible_pipeline.partitions import default_translation
from citebible_pipeline.resources import PostgresResource, SourcesResource
from citebible_pipeline.sources import open_text_member
from citebible_pipeline.sources.assets import naves_archive

MAX_TOKEN_DRIFT = 0.01  # the rule: resolved chapter:verse references within 1 % of a raw token count
_VERSE_TOKEN = re.compile(r"\d+:\d+")
PREVIEW_VERSE = verse_id(19, 88, 9)  # Psalm 88:9, listed under AFFLICTIONS AND ADVERSITIES: PRAYER IN


def count_verse_tokens(text: str) -> int:
    """An independent count of the raw file's chapter:verse tokens (no parsing of Nave's notation)."""
    return len(_VERSE_TOKEN.findall(text))


def _preview(index: NaveIndex, vid: int) -> list[tuple[str, str]]:
    names = {e.id: ": ".join((e.subject, *e.path)) for e in index.entries}
    return sorted((names[t], format_range(s, e)) for t, s, e in index.passages if s <= vid <= e)[:20]


@multi_asset(
    specs=[
        AssetSpec("nave_topics", deps=[naves_archive, default_translation(bible_verses)], group_name="naves",
                  kinds={"postgres"}, code_version="1",
                  description="Nave's Topical Bible (1896): subjects and nested sub-entries (path, depth, parent), "
                  "with its 'See X' pointer lines as links between entries (nave_links). CC BY 4.0 conversion."),
        AssetSpec("nave_passages", deps=[naves_archive, default_translation(bible_verses)], group_name="naves",
                  kinds={"postgres"}, code_version="1",
                  description="Each Nave's reference as a start..end range of WEB verse ids under its entry; "
                  "unresolvable references are counted rejects (the load fails above 0.5 %)."),
    ],
)
def nave_index(context: AssetExecutionContext, postgres: PostgresResource, sources: SourcesResource):
    started = time.perf_counter()
    path = sources.cached("naves")
    with open_text_member(path) as f:
        raw = f.read()
    index = parse_naves(raw.splitlines(keepends=True))
    rep = index.report
    rep.check()
    tokens = count_verse_tokens(raw)
    drift = abs(rep.verse_groups - tokens) / tokens if tokens else 1.0
    if drift > MAX_TOKEN_DRIFT:
        raise ValueError(f"naves: {rep.verse_groups:,} chapter:verse references resolved but the raw file has "
                         f"{tokens:,} chapter:verse tokens ({drift:.2%} apart, more than {MAX_TOKEN_DRIFT:.0%}): "
                         f"the parser is missing references in {path}")
    context.log.info(f"parsed {len(index.entries):,} entries, {len(index.passages):,} passages, "
                     f"{len(rep.rejects)} rejects in {time.perf_counter() - started:.1f}s")
    with postgres.connect() as conn:
        load = write_index(conn, index)
    subjects = sum(1 for e in index.entries if e.depth == 0)
    listed = {p[0] for p in index.passages}
    rejects = MetadataValue.md(md_table(("line", "reason", "text"), ((r.line, r.reason, r.text) for r in rep.rejects))
                               if rep.rejects else "none")
    yield MaterializeResult(asset_key="nave_topics", metadata={
        "subjects": subjects, "sub_entries": len(index.entries) - subjects, "sub_entry_lines": rep.lines,
        "pointer_lines": rep.pointers, "links": len(index.links),
        "links_resolved": sum(1 for link in index.links if link.to_id is not None),
        "subjects_with_passages": len({e.subject for e in index.entries if e.id in listed}),
        "added": load.topics.added, "removed": load.topics.removed, "changed": load.topics.changed,
        "previous_rows": load.topics.before,
    })
    yield MaterializeResult(asset_key="nave_passages", metadata={
        "passages": len(index.passages), "references_resolved": rep.references, "reference_groups": rep.groups,
        "rejects": len(rep.rejects), "reject_share": round(rep.reject_share, 6), "rejected_references": rejects,
        "chapter_verse_references": rep.verse_groups, "raw_chapter_verse_tokens": tokens,
        "token_drift": round(drift, 5), "remapped_to_web": rep.remapped,
        "added": load.passages.added, "removed": load.passages.removed, "previous_rows": load.passages.before,
        "load_seconds": round(load.seconds, 2),
        "preview_psalm_88_9": MetadataValue.md(md_table(("entry", "passage"), _preview(index, PREVIEW_VERSE))),
    })


@asset_check(asset="nave_topics", blocking=True, description="Subjects present; every sub-entry's parent exists.")
def nave_topics_sound(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        subjects, entries = conn.execute("SELECT count(*) FILTER (WHERE depth = 0), count(*) FROM nave_topics").fetchone()
        orphans = conn.execute("SELECT count(*) FROM nave_topics c WHERE c.parent_id IS NOT NULL AND NOT EXISTS"
                               " (SELECT 1 FROM nave_topics p WHERE p.id = c.parent_id)").fetchone()[0]
        dangling = conn.execute("SELECT count(*) FROM nave_links l WHERE l.to_id IS NOT NULL AND NOT EXISTS"
                                " (SELECT 1 FROM nave_topics t WHERE t.id = l.to_id)").fetchone()[0]
    return AssetCheckResult(passed=subjects > 0 and orphans == 0 and dangling == 0,
                            metadata={"subjects": subjects, "entries": entries, "orphans": orphans,
                                      "dangling_links": dangling})


@asset_check(asset="nave_passages", blocking=True, description="Every passage belongs to an entry and both ends are WEB verses.")
def nave_passages_resolvable(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        rows = conn.execute("SELECT count(*) FROM nave_passages").fetchone()[0]
        orphans = conn.execute("SELECT count(*) FROM nave_passages p WHERE NOT EXISTS"
                               " (SELECT 1 FROM nave_topics t WHERE t.id = p.topic_id)").fetchone()[0]
        bad = conn.execute("SELECT count(*) FROM nave_passages p WHERE NOT EXISTS (SELECT 1 FROM verses v WHERE"
                           " v.translation = %s AND v.id = p.start_id) OR NOT EXISTS (SELECT 1 FROM verses v WHERE"
                           " v.translation = %s AND v.id = p.end_id)", (DEFAULT_TRANSLATION, DEFAULT_TRANSLATION)).fetchone()[0]
    return AssetCheckResult(passed=rows > 0 and orphans == 0 and bad == 0,
                            metadata={"passages": rows, "orphans": orphans, "unresolved_endpoints": bad})


naves_assets = [nave_index]
naves_checks = [nave_topics_sound, nave_passages_resolvable]
