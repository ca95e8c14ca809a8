"""Dagster wiring: what each verse does (passage_voice), for the query module's do-no-harm stage."""

import time
from collections import Counter

from dagster import AssetCheckResult, AssetExecutionContext, Config, MaterializeResult, MetadataValue, asset, asset_check

from citebible_pipeline.embeddings.assets import passage_embeddings
from citebible_pipeline.genre.assets import verse_genres
from citebible_pipeline.gold.assets import gold_set
from citebible_pipeline.metadata import md_table
from citebible_pipeline.partitions import default_translation
from citebible_pipeline.resources import PostgresResource
from citebible_pipeline.voice.features import context_means, matrix
from citebible_pipeline.voice.model import CLASSES, GRAVE, HARSH, load_labels, sample, train
from citebible_pipeline.voice.store import corpus, heldout_table, write_voice

MIN_HARSH_PRECISION = 0.90  # the floor for each harsh class on the held-out labels (the blocking check)


class VoiceConfig(Config):
    # training-side labelled verses the model learns from (0: all 4,506). The test suite trains on 1,500 (193 s on 2
    # cores against 380 s), as it trains the reranker on a sample of topics; the held-out quarter is always whole.
    training_sample: int = 0


@asset(
    deps=[default_translation(passage_embeddings), default_translation(verse_genres), gold_set],
    group_name="voice",
    kinds={"postgres", "scikitlearn", "lightgbm"},
    code_version="2",
    description="What each WEB verse does (comfort, lament, praise, instruction, command, rebuke, judgement, violence, "
    "law, narrative, list), with a probability: the mean of a logistic regression and LightGBM over the verse's words "
    "(a function lexicon), "
    "genre, training-side Nave's labels and embeddings, trained on the hand-labelled sample (voice/labels.csv) and "
    "measured on its held-out quarter. A labelled verse keeps its reader's label.",
)
def passage_voice(context: AssetExecutionContext, config: VoiceConfig, postgres: PostgresResource) -> MaterializeResult:
    started = time.perf_counter()
    labels = load_labels()
    with postgres.connect() as conn:
        verses, vectors, nave_labels, dims = corpus(conn)
        by_id = {v.id: v for v in verses}
        missing = [lab.ref for lab in labels if lab.id not in by_id]
        if missing:
            raise RuntimeError(f"voice/labels.csv names verses with no text in the corpus: {missing[:5]}")
        near = context_means([v.id for v in verses], vectors)
        train_part = sample([lab for lab in labels if lab.split == "training"], config.training_sample)
        held = [lab for lab in labels if lab.split == "heldout"]
        context.log.info(f"training on {len(train_part):,} labelled verses ({len(held):,} held out)")
        model = train(matrix([by_id[lab.id] for lab in train_part], vectors, near, nave_labels, dims),
                      [lab.label for lab in train_part], [lab.also for lab in train_part])
        context.log.info(f"C {model.c}, out-of-fold macro F1 {model.cv['mean_macro_f1']}, harsh thresholds "
                         f"{model.thresholds}; classifying {len(verses):,} verses")
        P = model.probabilities(matrix(verses, vectors, near, nave_labels, dims))
        voice = model.assign(P)
        harsh = P[:, [CLASSES.index(c) for c in HARSH]].sum(axis=1)
        grave = P[:, [CLASSES.index(c) for c in GRAVE]].sum(axis=1)
        hand = {lab.id: lab for lab in labels}
        rows = [(v.id, CLASSES[voice[i]], float(P[i, voice[i]]), float(min(1.0, harsh[i])), float(min(1.0, grave[i])),
                 hand[v.id].label if v.id in hand else None, (hand[v.id].also or None) if v.id in hand else None)
                for i, v in enumerate(verses)]
        written = write_voice(conn, rows)
        table = heldout_table(conn, held)
    counts = Counter(r[1] for r in rows)
    context.log.info(f"passage_voice: {written:,} verses in {time.perf_counter() - started:.0f}s")
    return MaterializeResult(metadata={
        "verses": written, "held_out_verses": len(held), "training_verses": len(train_part),
        "class_counts": MetadataValue.json({c: counts.get(c, 0) for c in CLASSES}),
        "heldout": MetadataValue.md(md_table(("class", "support", "predicted", "precision", "recall", "f1"),
                                             [(c, *table[c].values()) for c in CLASSES])),
        "heldout_table": MetadataValue.json(table),
        "harsh_thresholds": MetadataValue.json(model.thresholds), "C": model.c,
        "out_of_fold": MetadataValue.json(model.cv), "seconds": round(time.perf_counter() - started, 1),
    })


@asset_check(asset=passage_voice, blocking=True, description="Every verse has a voice, and each harsh function the "
             "model assigns is right on at least 90 % of the held-out labelled verses it is assigned to (a wrong harsh tag "
             "hides a good verse); a harsh function the model is never sure enough of is not assigned, and is reported.")
def passage_voice_sound(postgres: PostgresResource) -> AssetCheckResult:
    held = [lab for lab in load_labels() if lab.split == "heldout"]
    with postgres.connect() as conn:
        n, verses = conn.execute("SELECT (SELECT count(*) FROM passage_voice), (SELECT count(*) FROM verses"
                                 " WHERE translation = 'web' AND text <> '')").fetchone()
        table = heldout_table(conn, held)
    low = {c: table[c]["precision"] for c in HARSH if table[c]["predicted"] and table[c]["precision"] < MIN_HARSH_PRECISION}
    return AssetCheckResult(passed=n == verses and not low, metadata={
        "verses": n, "verses_with_text": verses, "harsh_precision": MetadataValue.json({c: table[c] for c in HARSH}),
        "harsh_below_0_90": MetadataValue.json(low),
        "harsh_never_assigned": MetadataValue.json([c for c in HARSH if not table[c]["predicted"]])})


voice_assets = [passage_voice]
voice_checks = [passage_voice_sound]
