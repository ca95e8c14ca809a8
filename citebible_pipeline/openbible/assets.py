"""Dagster wiring for the OpenBible imports (cross-references, topics) and their checks."""

import time

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)
from psycopg import sql

from citebible_pipeline.bible.assets import bible_verses
from citebible_pipeline.bible.references import format_id
from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.metadata import md_table
from citebible_pipeline.openbible.load import gated_replace, topic_id
from citebible_pipeline.openbible.parse import (
    ParseReport,
    parse_cross_refs,
    parse_topic_scores,
    parse_topic_votes,
)
from citebible_pipeline.resources import PostgresResource, SourcesResource
from citebible_pipeline.sources import open_text_member
from citebible_pipeline.sources.assets import (
    openbible_cross_refs_archive,
    openbible_topic_scores_archive,
    openbible_topic_votes_archive,
)
from citebible_pipeline.sources.datasets import DATASETS
from citebible_pipeline.partitions import default_translation


def _report_meta(rep: ParseReport) -> dict:
    return {
        f"{rep.source}_lines": rep.lines,
        f"{rep.source}_rejects": len(rep.rejects),
        f"{rep.source}_remapped_to_web": rep.remapped,
        f"{rep.source}_rejected_lines": MetadataValue.md(md_table(("line", "reason", "text"), (
            (r.line, r.reason, r.text) for r in rep.rejects[:50])) if rep.rejects else "none"),
    }


def _read(sources: SourcesResource, name: str):
    return open_text_member(sources.cached(name), DATASETS[name].member)


@asset(
    deps=[openbible_cross_refs_archive, default_translation(bible_verses)],
    group_name="openbible",
    kinds={"postgres"},
    code_version="1",
    description="OpenBible.info cross-references (from verse -> verse or range, votes) on WEB verse ids. CC BY.",
)
def cross_references(context: AssetExecutionContext, postgres: PostgresResource, sources: SourcesResource) -> MaterializeResult:
    started = time.perf_counter()
    with _read(sources, "openbible_cross_refs") as f:
        rows, rep = parse_cross_refs(f, "cross_references")
    rep.check()
    context.log.info(f"parsed {len(rows):,} cross-references ({len(rep.rejects)} rejects) in {time.perf_counter() - started:.1f}s")
    with postgres.connect() as conn:
        stats, diff = gated_replace(conn, "cross_references", ("from_id", "to_start", "to_end"), ("votes",),
                                    ("from_id", "to_start", "to_end", "votes"), ("integer", "integer", "integer", "integer"),
                                    ((a, b, c, v) for (a, b, c), v in rows.items()))
        top = conn.execute(
            "SELECT f.ref, t.ref, c.to_end - c.to_start + 1, c.votes FROM cross_references c JOIN verses f ON f.id = c.from_id"
            " JOIN verses t ON t.id = c.to_start WHERE c.from_id = 19034018 ORDER BY c.votes DESC LIMIT 5").fetchall()
    return MaterializeResult(metadata={
        "rows": len(rows), "negative_vote_rows": sum(1 for v in rows.values() if v < 0),
        "cross_book_ranges": rep.cross_book_ranges, "merged_after_remap": rep.merged,
        "added": diff.added, "removed": diff.removed, "votes_changed": diff.changed, "previous_rows": diff.before,
        "load_seconds": round(stats.seconds, 2), **_report_meta(rep),
        "preview_psalm_34_18": MetadataValue.md(md_table(("from", "to", "verses", "votes"), top)),
    })


@asset(
    deps=[openbible_topic_votes_archive, openbible_topic_scores_archive, default_translation(bible_verses)],
    group_name="openbible",
    kinds={"postgres"},
    code_version="1",
    description="OpenBible.info topics and their voted verses (raw votes from topic-votes, quality score from "
    "topic-scores), on WEB verse ids. CC BY.",
)
def topic_verses(context: AssetExecutionContext, postgres: PostgresResource, sources: SourcesResource) -> MaterializeResult:
    with _read(sources, "openbible_topic_votes") as f:
        votes, names_v, rep_v = parse_topic_votes(f, "topic_votes")
    with _read(sources, "openbible_topic_scores") as f:
        scores, names_s, rep_s = parse_topic_scores(f, "topic_scores")
    rep_v.check()
    rep_s.check()
    names = {**names_s, **names_v}
    keys = sorted(set(votes) | set(scores))
    topic_rows: dict[str, list[int]] = {t: [0, 0] for t in names}
    for key in keys:
        agg = topic_rows[key[0]]
        agg[0] += 1
        agg[1] += votes.get(key, 0)
    with postgres.connect() as conn, conn.transaction():  # topics and their verses swap together
        _, tdiff = gated_replace(conn, "topics", ("id",), ("name", "passages", "total_votes"),
                                 ("id", "name", "normalized_name", "passages", "total_votes"),
                                 ("bigint", "text", "text", "integer", "integer"),
                                 ((topic_id(t), names[t], t, p, v) for t, (p, v) in topic_rows.items()))
        stats, vdiff = gated_replace(conn, "topic_verses", ("topic_id", "start_id", "end_id"), ("votes", "score"),
                                     ("topic_id", "start_id", "end_id", "votes", "score"),
                                     ("bigint", "integer", "integer", "integer", "integer"),
                                     ((topic_id(k[0]), k[1], k[2], votes.get(k), scores.get(k)) for k in keys))
    context.log.info(f"{len(names):,} topics, {len(keys):,} topic passages")
    grief = sorted(((k[1], votes[k]) for k in votes if k[0] == "grief"), key=lambda x: -x[1])[:5]
    return MaterializeResult(metadata={
        "topics": len(names), "topic_passages": len(keys), "with_votes": len(votes), "with_score": len(scores),
        "in_both_exports": len(set(votes) & set(scores)),
        "topics_added": tdiff.added, "topics_removed": tdiff.removed,
        "passages_added": vdiff.added, "passages_removed": vdiff.removed, "passages_changed": vdiff.changed,
        "load_seconds": round(stats.seconds, 2), **_report_meta(rep_v), **_report_meta(rep_s),
        "preview_grief": MetadataValue.md(md_table(("verse", "votes"), ((format_id(i), v) for i, v in grief))),
    })


def _unresolved(conn, table: str, cols: tuple[str, ...]) -> int:
    total = 0
    for c in cols:
        total += conn.execute(sql.SQL(
            "SELECT count(*) FROM {} x WHERE NOT EXISTS (SELECT 1 FROM verses v WHERE v.translation = %s AND v.id = x.{})"
        ).format(sql.Identifier(table), sql.Identifier(c)), (DEFAULT_TRANSLATION,)).fetchone()[0]
    return total


@asset_check(asset=cross_references, blocking=True, description="Rows present; every endpoint is a WEB verse.")
def cross_references_resolvable(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        n = conn.execute("SELECT count(*) FROM cross_references").fetchone()[0]
        bad = _unresolved(conn, "cross_references", ("from_id", "to_start", "to_end"))
    return AssetCheckResult(passed=n > 0 and bad == 0, metadata={"rows": n, "unresolved_endpoints": bad})


@asset_check(asset=topic_verses, blocking=True, description="Topics present; every topic verse belongs to a topic and resolves.")
def topic_verses_resolvable(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        topics = conn.execute("SELECT count(*) FROM topics").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM topic_verses").fetchone()[0]
        orphans = conn.execute("SELECT count(*) FROM topic_verses tv WHERE NOT EXISTS (SELECT 1 FROM topics t WHERE t.id = tv.topic_id)").fetchone()[0]
        bad = _unresolved(conn, "topic_verses", ("start_id", "end_id"))
    return AssetCheckResult(passed=topics > 0 and rows > 0 and orphans == 0 and bad == 0,
                            metadata={"topics": topics, "topic_passages": rows, "orphans": orphans, "unresolved_endpoints": bad})


openbible_assets = [cross_references, topic_verses]
openbible_checks = [cross_references_resolvable, topic_verses_resolvable]
