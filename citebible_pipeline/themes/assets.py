"""Dagster wiring: the theme vocabulary with its prior, and the calibrated relevance floor."""

import time

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from citebible_pipeline.embeddings.assets import EmbedderResource, passage_embeddings
from citebible_pipeline.embeddings.store import active_space
from citebible_pipeline.gold.access import heldout_keys, training_nave_passages, training_topic_passages
from citebible_pipeline.gold.assets import gold_set
from citebible_pipeline.gold.nave_set import web_name_words
from citebible_pipeline.metadata import md_table
from citebible_pipeline.resources import PostgresResource
from citebible_pipeline.themes.labels import build_labels
from citebible_pipeline.themes.situations import load_situations
from citebible_pipeline.themes.store import unique_cues, write_themes
from citebible_pipeline.themes.vocabulary import (
    MAX_PASSAGE_VERSES,
    build_vocabulary,
    load_pastoral,
    nave_entries,
    nave_subjects,
    within_span,
)
from citebible_pipeline.partitions import default_translation


class ThemesConfig(Config):
    # the longest voted span read as a passage: vocabulary.MAX_PASSAGE_VERSES (176, the longest chapter; the default
    # since the seventeenth step, README) skips the longer ones, entry slips; 0 reads every span (the default before)
    max_passage_verses: int = MAX_PASSAGE_VERSES


@asset(
    deps=[gold_set, default_translation(passage_embeddings)],
    group_name="query",
    kinds={"postgres", "pgvector"},
    code_version="8",
    description="The step-back vocabulary: need-level pastoral themes (pastoral.yaml), every training-side "
    "OpenBible topic and every training-side Nave's need subject no topic names, their cue vectors in the active "
    "space, and each theme's human prior: OpenBible votes and Nave's listings (training side only); and every "
    "passage's training-side labels (topic names, Nave's sub-entries) for document expansion, in words and as vectors; "
    "and the judged situations (reader sentences with the passages that wound them, themes/judged_wounds.csv) as vectors.",
)
def query_themes(context: AssetExecutionContext, config: ThemesConfig, postgres: PostgresResource,
                 embedder: EmbedderResource) -> MaterializeResult:
    started = time.perf_counter()
    emb = embedder.get()
    with postgres.connect() as conn:
        nave_rows, names, training, heldout = (training_nave_passages(conn), web_name_words(conn),
                                               training_topic_passages(conn), heldout_keys(conn))
        training, overlong = within_span(training, config.max_passage_verses)
        if overlong:
            context.log.info(f"{overlong} voted spans longer than {config.max_passage_verses} verses skipped")
        pastoral_needs = load_pastoral()
        themes, report = build_vocabulary(training, pastoral_needs, nave_subjects(nave_rows, names),
                                          heldout, nave_entries(nave_rows, names))
        labels = build_labels(training, nave_rows, heldout)
        situations = load_situations(needs={t.id for t in pastoral_needs})
        active = active_space(conn)
        if active is None:
            raise RuntimeError("no active embedding space: materialize passage_embeddings first")
        space_id, _space = active
        cues = unique_cues(themes)
        context.log.info(f"embedding {len(cues):,} cues of {len(themes):,} themes, {len(labels):,} labels and "
                         f"{len(situations):,} judged situations")
        counts = write_themes(conn, themes, space_id, emb.encode_queries(cues), labels,
                              emb.encode_queries([lab.text for lab in labels]), situations,
                              emb.encode_queries([s.sentence for s in situations]))
    pastoral = [t for t in themes if t.kind == "pastoral"]
    for tid, names in report["missing_topics"].items():
        context.log.info(f"pastoral theme {tid}: topics not on the training side (held out or absent): {names}")
    for tid, names in report["missing_naves"].items():
        context.log.info(f"pastoral theme {tid}: Nave's entries not on the training side (held out or absent): {names}")
    return MaterializeResult(metadata={
        **counts, "pastoral_themes": len(pastoral), "topic_themes": len(themes) - len(pastoral),
        "pastoral": MetadataValue.md(md_table(("theme", "cues", "passages"),
                                              ((t.name, len(t.cues), len(t.passages)) for t in pastoral))),
        "missing_topics": MetadataValue.json(report["missing_topics"]),
        "missing_naves": MetadataValue.json(report["missing_naves"]),
        "avoided_passages": MetadataValue.json(report["avoided_passages"]),
        "avoid_listed": sum(len(t.avoid) for t in themes),
        "overlong_spans_skipped": overlong,
        "max_passage_verses": config.max_passage_verses, "nave_subjects_joined": report["nave_subjects_joined"],
        "nave_subject_themes": report["nave_subject_themes"],
        "labels_by_source": MetadataValue.json({src: sum(lab.source == src for lab in labels) for src in ("openbible", "naves")}),
        "seconds": round(time.perf_counter() - started, 1),
    })


@asset_check(asset=query_themes, blocking=True, description="Every theme has cues in the active space and a prior, every "
             "label a vector there, every judged situation a vector there and a wound; "
             "no held-out OpenBible topic or Nave's entry (nor a near duplicate) is in the vocabulary or the labels.")
def query_themes_sound(postgres: PostgresResource) -> AssetCheckResult:
    with postgres.connect() as conn:
        space_id = active_space(conn)[0]
        heldout = heldout_keys(conn)
        leaked = sum(k in heldout for (k,) in conn.execute("SELECT split_key FROM query_themes WHERE kind = 'topic'"))
        leaked_labels = sum(k in heldout for (k,) in conn.execute("SELECT DISTINCT split_key FROM passage_labels"))
        no_cue, no_prior, no_vector, bare_situations = conn.execute(
            "SELECT (SELECT count(*) FROM query_themes t WHERE NOT EXISTS (SELECT 1 FROM theme_cues c"
            "        WHERE c.theme_id = t.id AND c.space_id = %s)),"
            " (SELECT count(*) FROM query_themes t WHERE NOT EXISTS (SELECT 1 FROM theme_passages p WHERE p.theme_id = t.id)),"
            " (SELECT count(DISTINCT l.label_id) FROM passage_labels l WHERE NOT EXISTS (SELECT 1 FROM label_vectors v"
            "        WHERE v.label_id = l.label_id AND v.space_id = %s)),"
            " (SELECT count(*) FROM situations s WHERE NOT EXISTS (SELECT 1 FROM situation_vectors v"
            "        WHERE v.situation_id = s.id AND v.space_id = %s)"
            "        OR NOT EXISTS (SELECT 1 FROM situation_avoid a WHERE a.situation_id = s.id))",
            (space_id, space_id, space_id)).fetchone()
    return AssetCheckResult(passed=not (no_cue or no_prior or no_vector or bare_situations or leaked or leaked_labels),
                            metadata={"themes_without_cues": no_cue, "themes_without_prior": no_prior,
                                      "labels_without_vectors": no_vector, "situations_without_vector_or_wound": bare_situations,
                                      "heldout_keys_in_vocabulary": leaked, "heldout_keys_in_labels": leaked_labels})


@asset(
    deps=[query_themes],
    group_name="query",
    kinds={"postgres"},
    code_version="1",
    description="The relevance floor: a logistic model over retrieval signals, calibrated on training-side topic "
    "names and pastoral cues (answer) against everyday non-Bible questions (abstain); activated in one transaction.",
)
def abstention_floor(context: AssetExecutionContext, postgres: PostgresResource, embedder: EmbedderResource) -> MaterializeResult:
    from citebible_pipeline.query.engine import Engine
    from citebible_pipeline.themes.calibrate import calibrate_floor, store_floor

    started = time.perf_counter()
    engine = Engine(postgres.resolved_url(), embedder=embedder.get(), llm=None, reranker=None)  # the floor reads signals only
    floor, metrics = calibrate_floor(engine)
    with postgres.connect() as conn:
        floor_id = store_floor(conn, engine.space_id, floor, metrics)
    context.log.info(f"floor {floor_id}: {metrics}")
    return MaterializeResult(metadata={
        "floor_id": floor_id, "threshold": metrics["threshold"], "answerable": metrics["answerable"],
        "everyday": metrics["everyday"], "answerable_abstained": metrics["answerable_abstained"],
        "everyday_abstained": metrics["everyday_abstained"], "coef": MetadataValue.json(metrics["coef"]),
        "seconds": round(time.perf_counter() - started, 1),
    })


theme_assets = [query_themes, abstention_floor]
theme_checks = [query_themes_sound]
