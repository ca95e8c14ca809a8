"""The query module's variants for the evaluation: each ablation row switches stages on cumulatively,
from the human-vote prior alone to `no_rerank` (every stage but the learned reranker) and `full`."""

from __future__ import annotations

from collections.abc import Callable

from citebible_pipeline.gold.metrics import Result
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.models import SearchOptions
from citebible_pipeline.query.rerank import Reranker
from citebible_pipeline.retrieval.baselines import RetrievalContext, Retrieved

_OFF = dict(dense=False, hybrid=False, chapters=False, pericopes=False, merge=False, prior=False, specific=False,
            boost=False, slots=False, expand=False, floor=False, rerank=False, labels=False)
_LEVELS = dict(chapters=True, merge=True)  # the pericope level is off by default (SearchOptions.pericopes)
ABLATIONS: dict[str, SearchOptions] = {
    "prior_only": SearchOptions(**{**_OFF, "prior": True}),
    "+rewrite": SearchOptions(**{**_OFF, "dense": True}),
    "+hybrid": SearchOptions(**{**_OFF, "dense": True, "hybrid": True}),
    "+levels": SearchOptions(**{**_OFF, "dense": True, "hybrid": True, **_LEVELS}),
    "+prior": SearchOptions(**{**_OFF, "dense": True, "hybrid": True, **_LEVELS, "prior": True}),
    "+specific": SearchOptions(**{**_OFF, "dense": True, "hybrid": True, **_LEVELS, "prior": True, "specific": True}),
    "+boost": SearchOptions(**{**_OFF, "dense": True, "hybrid": True, **_LEVELS, "prior": True, "specific": True,
                               "boost": True}),
    "+slots": SearchOptions(**{**_OFF, "dense": True, "hybrid": True, **_LEVELS, "prior": True, "specific": True,
                               "boost": True, "slots": True}),
    "+expand": SearchOptions(**{**_OFF, "dense": True, "hybrid": True, **_LEVELS, "prior": True, "specific": True,
                                "boost": True, "slots": True, "expand": True}),
    "+labels": SearchOptions(**{**_OFF, "dense": True, "hybrid": True, **_LEVELS, "prior": True, "specific": True,
                                "boost": True, "slots": True, "expand": True, "labels": True}),
}
FULL = SearchOptions()
NO_RERANK = SearchOptions(rerank=False)  # full, with the fused order and the prior mixed in by the boost stage
NO_BLEND = SearchOptions(blend=False)  # full, the learned order alone on pastoral intent too
NO_LABELS = SearchOptions(labels=False)  # full without document expansion (the reranker as trained, with it)
VARIANT_ORDER = ("bm25", "dense_raw", *ABLATIONS, "no_rerank", "no_labels", "no_blend", "full")


def variant(engine: Engine, options: SearchOptions, reranker: Reranker | None | str = "engine"
            ) -> Callable[[RetrievalContext, str], Retrieved]:
    """`reranker`: the engine's own ("engine"), or a model held in memory (`citebible seeds`)."""
    def run(ctx: RetrievalContext, text: str) -> Retrieved:
        ranked = engine.rank(text, options, query_vector=ctx.vector(text), memo=ctx.memo, reranker=reranker)
        return Retrieved([Result(c.start, c.end) for c in ranked.candidates[: ctx.k]], ranked.abstained)

    return run


def ablation_variants(engine: Engine) -> dict[str, Callable[[RetrievalContext, str], Retrieved]]:
    return {name: variant(engine, opts) for name, opts in ABLATIONS.items()}


def full_variant(engine: Engine) -> dict[str, Callable[[RetrievalContext, str], Retrieved]]:
    """`full` with the engine's reranker, `no_rerank` (the issue-10 pipeline alone), `no_labels` (no document
    expansion) and `no_blend` beside it."""
    return {"no_rerank": variant(engine, NO_RERANK), "no_labels": variant(engine, NO_LABELS),
            "no_blend": variant(engine, NO_BLEND), "full": variant(engine, FULL)}
