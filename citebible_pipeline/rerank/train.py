"""Train the two reranker candidates on recorded pools and measure each on validation queries: training
-side topics whose split key hashes into the validation share (held-out topics never come here). A
candidate is measured the way it serves: its rerank() on a copy of the pool, then the boost stage."""

from __future__ import annotations

import hashlib
import json
import logging
import random
import statistics
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from citebible_pipeline.gold.metrics import Result, hit_at, ndcg_at
from citebible_pipeline.query.boost import served
from citebible_pipeline.query.engine import Engine
from citebible_pipeline.query.features import FEATURES
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.rerank import FeatureReranker, Reranker, passage_texts
from citebible_pipeline.query.rerank import apply as rerank_stage
from citebible_pipeline.query.tuning import TUNING
from citebible_pipeline.rerank.pools import POOL_VARIANT, Pool

log = logging.getLogger(__name__)
VALID_SHARE = 0.15
LGB_PARAMS = {
    "objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [10], "lambdarank_truncation_level": 20,
    "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20, "feature_fraction": 0.8,
    "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0,
    "deterministic": True, "force_row_wise": True, "num_threads": 2, "verbose": -1,
}


def split(pools: Sequence[Pool], share: float = VALID_SHARE) -> tuple[list[Pool], list[Pool]]:
    """By a hash of the query's split key: near duplicates land on the same side."""
    def bucket(p: Pool) -> float:
        return int.from_bytes(hashlib.sha256(p.query.exclude.encode()).digest()[:4], "big") / 2**32
    return [p for p in pools if bucket(p) >= share], [p for p in pools if bucket(p) < share]


def debias_labels(pools: Sequence[Pool], cap: int) -> list[Pool]:
    """Popularity handled explicitly (inverse propensity, on the labels): a passage (by exact span) labelled relevant
    in more than `cap` of these pools is a hub voted for everything (John 3:16, Isaiah 41:10), so its label loses one
    grade per doubling beyond the cap, never below 1. Rare passages keep their grade. cap <= 0: as voted."""
    if cap <= 0:
        return list(pools)
    seen: dict[tuple[int, int], int] = {}
    for p in pools:
        for c, lab in zip(p.cands, p.labels):
            if lab > 0:
                seen[(c.start, c.end)] = seen.get((c.start, c.end), 0) + 1
    out = []
    for p in pools:
        lab = p.labels.copy()
        for i, c in enumerate(p.cands):
            n = seen.get((c.start, c.end), 0)
            if lab[i] > 0 and n > cap:
                lab[i] = max(1, int(lab[i]) - int(np.log2(n / cap)) - 1)
        out.append(Pool(p.query, p.rq, p.cands, p.X, lab))
    return out


def pastoral_repeats(train: Sequence[Pool], weight: int) -> int:
    """How many times each pastoral-cue pool enters training: `weight`, or with 0 as many as makes the cues' pools
    weigh what every other training pool together weighs (one intent, one half), at least once."""
    if weight < 0:
        raise ValueError(f"pastoral_weight must be 0 (balanced) or a repeat count of 1 or more, got {weight}")
    if weight > 0:
        return weight
    cues = sum(p.query.kind == "pastoral" for p in train)
    return max(1, round((len(train) - cues) / cues)) if cues else 1


def training_hash(pools: Sequence[Pool], settings: dict) -> str:
    h = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for p in pools:
        h.update(p.query.text.encode())
        h.update(np.asarray([(c.start, c.end) for c in p.cands], np.int64).tobytes())
        h.update(p.labels.tobytes())
    return h.hexdigest()


def served_order(engine: Engine, pool: Pool, reranker: Reranker | None, blend: bool = True) -> list[Candidate]:
    cands, learned = rerank_stage(reranker, pool.rq, [c.copy() for c in pool.cands], engine.rerank_inputs,
                                  blend and POOL_VARIANT.blend, TUNING.blend_k)
    return served(cands, POOL_VARIANT, engine.data.boosts, learned=learned, pastoral=pool.rq.pastoral, testament=None)


def quality(engine: Engine, pools: Sequence[Pool], reranker: Reranker | None, blend: bool = True) -> dict[str, float]:
    ndcg, hit = [], []
    for p in pools:
        results = [Result(c.start, c.end) for c in served_order(engine, p, reranker, blend)]
        ndcg.append(ndcg_at(results, p.query.passages, 10))
        hit.append(hit_at(results, p.query.passages, 5))
    return {"queries": len(pools), "ndcg_10": round(statistics.fmean(ndcg), 4) if ndcg else 0.0,
            "hit_5": round(statistics.fmean(hit), 4) if hit else 0.0}


def _dataset(pools: Sequence[Pool]):
    import lightgbm as lgb

    use = [p for p in pools if p.labels.max() > 0]  # a pool with no relevant passage teaches nothing
    X = np.vstack([p.X for p in use])
    y = np.concatenate([p.labels for p in use])
    return lgb.Dataset(X, y, group=[len(p.labels) for p in use], feature_name=list(FEATURES), free_raw_data=False), len(use)


def train_features(train: Sequence[Pool], valid: Sequence[Pool], seed: int, rounds: int = 400,
                   patience: int = 40) -> tuple[str, dict]:
    """LightGBM lambdarank (LightGBM's own gain per grade, 2^grade - 1), early-stopped on the validation pools; same
    pools and seed, same model."""
    import lightgbm as lgb

    dtrain, n_train = _dataset(train)
    params = {**LGB_PARAMS, "seed": seed}
    callbacks, valid_sets = [], []
    if valid:
        dvalid, _ = _dataset(valid)
        valid_sets = [dvalid]
        callbacks = [lgb.early_stopping(patience, verbose=False)]
    booster = lgb.train(params, dtrain, num_boost_round=rounds, valid_sets=valid_sets, callbacks=callbacks)
    gain = booster.feature_importance("gain")
    top = sorted(zip(FEATURES, gain), key=lambda x: -x[1])[:12]
    info = {"train_queries": n_train, "rounds": booster.best_iteration or rounds,
            "importance": {f: round(float(g), 1) for f, g in top}}
    return booster.model_to_string(num_iteration=booster.best_iteration or None), info


class FitSettings(Protocol):
    """What `fit` reads of `reranker_model`'s config (rerank.assets.RerankConfig, where each is documented)."""

    pastoral_weight: int
    debias_cap: int


def fit(train: Sequence[Pool], valid: Sequence[Pool], seed: int, settings: FitSettings
        ) -> tuple[str, dict, list[Pool], list[Pool]]:
    """The asset's training on recorded pools (labels debiased over every training-side pool, the cues' pools
    repeated), so that `citebible seeds` retrains exactly what a build trains. Returns the model text, its training
    info and the relabelled train and validation pools."""
    labelled = debias_labels([*train, *valid], settings.debias_cap)  # propensity over every pool
    train, valid = labelled[: len(train)], labelled[len(train):]
    repeats = pastoral_repeats(train, settings.pastoral_weight)  # in the info: the asset logs it where its run shows
    weighted = train + [p for p in train if p.query.kind == "pastoral"] * (repeats - 1)
    text, info = train_features(weighted, valid, seed)
    return text, {**info, "pastoral_repeats": repeats}, train, valid


def feature_reranker(engine: Engine, model_text: str) -> FeatureReranker:
    return FeatureReranker(model_text, FEATURES, engine.pool_tables())


# -- the cross-encoder candidate -------------------------------------------------------------------------
def ce_pairs(engine: Engine, pools: Sequence[Pool], per_query: int = 8, seed: int = 0) -> list[tuple[str, str, float]]:
    """(query, passage text, grade / 3): a query's best-graded candidates and its top-ranked unlabelled
    ones (the hard negatives), half and half where the pool allows."""
    rng = random.Random(seed)
    out = []
    for p in pools:
        pos = [int(i) for i in np.argsort(-p.labels, kind="stable") if p.labels[i] > 0][: per_query // 2]
        neg = [i for i in range(len(p.cands)) if p.labels[i] == 0][: per_query - len(pos)]
        picked = pos + neg
        texts = passage_texts(engine.rerank_inputs, p.rq, [p.cands[i] for i in picked])
        out += [(p.query.text, t, float(p.labels[i]) / 3.0) for i, t in zip(picked, texts) if t]
    rng.shuffle(out)
    return out


def train_cross_encoder(pairs: Sequence[tuple[str, str, float]], out_dir: str, base: str, seed: int, *, epochs: int = 1,
                        batch_size: int = 16, max_length: int = 128, lr: float = 3e-5, device: str | None = None) -> str:
    """Fine-tune a one-logit CrossEncoder head on the MiniLM weights (sentence-transformers' CrossEncoder
    training loop, BCE on graded targets); CUDA when present, never required."""
    import torch
    from sentence_transformers import CrossEncoder, InputExample
    from torch.utils.data import DataLoader

    from citebible_pipeline.query.rerank import _device

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    model = CrossEncoder(base, num_labels=1, max_length=max_length, device=device or _device())
    examples = [InputExample(texts=[q, t], label=y) for q, t, y in pairs]
    loader = DataLoader(examples, shuffle=True, batch_size=batch_size, generator=torch.Generator().manual_seed(seed))
    steps = max(1, len(loader) * epochs)
    model.old_fit(loader, epochs=epochs, warmup_steps=max(1, steps // 10), optimizer_params={"lr": lr},
                  show_progress_bar=False)
    model.save(out_dir)
    return out_dir
