"""The query module's variants for the evaluation (docs/evaluation.md): each ablation row switches stages on
cumulatively, from the human-vote prior alone to every stage but the learned reranker; `full` is what serves."""

from __future__ import annotations

from collections.abc import Callable

from citebible_pipeline.bible.canon import span_verses
from citebible_pipeline.gold.metrics import LONG_PASSAGE, Result
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.rerank import Reranker
from citebible_pipeline.query.variant import FULL, Variant
from citebible_pipeline.retrieval.baselines import RetrievalContext, Retrieved

_OFF = dict(dense=False, hybrid=False, chapters=False, merge=False, prior=False, specific=False, boost=False,
            slots=False, floor=False, rerank=False, labels=False, harm=False)
_STEPS = ("+rewrite", {"dense": True}), ("+hybrid", {"hybrid": True}), ("+levels", {"chapters": True, "merge": True}), \
    ("+prior", {"prior": True}), ("+specific", {"specific": True}), ("+boost", {"boost": True}), \
    ("+slots", {"slots": True}), ("+labels", {"labels": True}), ("+harm", {"harm": True})


def _cumulative() -> dict[str, Variant]:
    rows, on = {"prior_only": Variant(**{**_OFF, "prior": True})}, dict(_OFF)
    for name, step in _STEPS:
        on.update(step)
        rows[name] = Variant(**on)
    return rows


ABLATIONS: dict[str, Variant] = _cumulative()
NO_RERANK = Variant(rerank=False)  # full, with the fused order and the prior mixed in by the boost stage
NO_BLEND = Variant(blend=False)  # full, the learned order alone on pastoral intent too
NO_LABELS = Variant(labels=False)  # full without document expansion (the reranker as trained, with it)
NO_HARM = Variant(harm=False)  # full without the do-no-harm stage: what it holds back, and what that costs
VARIANT_ORDER = ("bm25", "dense_raw", *ABLATIONS, "no_rerank", "no_labels", "no_blend", "no_harm_rule", "full")


def variant(engine: Engine, stages: Variant, reranker: Reranker | None | str = "engine"
            ) -> Callable[[RetrievalContext, str], Retrieved]:
    """`reranker`: the engine's own ("engine"), or a model held in memory (`citebible seeds`)."""
    def run(ctx: RetrievalContext, text: str) -> Retrieved:
        ranked = engine.rank(text, None, stages, query_vector=ctx.vector(text), memo=ctx.memo, reranker=reranker)
        tables, q = engine.pool_tables(), ranked.query_vector
        return Retrieved([Result(c.start, c.end, (c.pin or tables.pins(q, c.start, c.end)[0]) if q is not None and
                                 span_verses(c.start, c.end) > LONG_PASSAGE else None)
                          for c in ranked.candidates[: ctx.k]], ranked.abstained)

    return run


def ablation_variants(engine: Engine) -> dict[str, Callable[[RetrievalContext, str], Retrieved]]:
    return {name: variant(engine, v) for name, v in ABLATIONS.items()}


def full_variant(engine: Engine) -> dict[str, Callable[[RetrievalContext, str], Retrieved]]:
    """`full` with the engine's reranker, `no_rerank` (every other stage), `no_labels` (no document expansion) and
    `no_blend` beside it."""
    return {"no_rerank": variant(engine, NO_RERANK), "no_labels": variant(engine, NO_LABELS),
            "no_blend": variant(engine, NO_BLEND), "no_harm_rule": variant(engine, NO_HARM), "full": variant(engine, FULL)}
