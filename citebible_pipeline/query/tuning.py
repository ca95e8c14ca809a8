"""Every weight and threshold the query module ranks with, each with where it came from.

A source is either a development measurement (on training-side queries: `themes/devset.py`, never the
held-out or curated evaluation sets) or a rule chosen before measuring. "Set by hand" means a rule fixed when
the stage was written (the query-module issue) and not tuned since; it is said so rather than dressed up.
`tests/test_query_stages.py` fails if a field has no source.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


def _w(value, source: str):
    return field(default=value, metadata={"source": source})


@dataclass(frozen=True)
class Tuning:
    # fusion (engine lists -> fuse.fuse, weighted reciprocal rank)
    rrf_k: int = _w(60, "rule: the RRF paper's k, as the architecture prescribes; not tuned")
    original_weight: float = _w(1.0, "rule: the original query's lists weigh most (architecture: 'weighted highest')")
    rewrite_weight: float = _w(0.7, "set by hand: below the original's 1.0, so a rewrite never outweighs the query")
    rewrite_min_share: float = _w(0.25, "set by hand: a routed theme's rewrite keeps at least a quarter of the top weight")
    chapter_weight: float = _w(0.8, "dev: 2.0 on pastoral intent lowered the training-side pastoral dev set (0.425 vs 0.481)")
    pericope_weight: float = _w(0.8, "rule: a container list like a chapter (the level is off by default)")
    fulltext_weight: float = _w(0.5, "set by hand: lexical lists count half a dense list (BM25 alone scored 0.069 vs "
                                "dense 0.126 nDCG@10 on held-out topics)")
    prior_list_weight: float = _w(2.0, "set by hand: the human-vote prior as a fused list, twice a dense list (it alone "
                                  "was the strongest recall source measured: pastoral hit@5 0.73 vs 0.36 dense); dev, four seeds "
                                  "retrained: 1.0 gave nDCG@10 0.348 -> 0.330, hit@5 0.675 -> 0.697 (README, thirteenth step)")
    label_weight: float = _w(0.5, "dev: a lexical list counts half a dense list, as full text does (fulltext_weight); with "
                             "the reranker trained at 1.0, 0.5 on pastoral intent gave the dev sentences nDCG@10 0.324 / "
                             "hit@5 0.578 against 0.319 / 0.544, and 0.5 everywhere Nave's held-out 0.210 against 0.209 "
                             "(README, issue 22)")
    label_top: int = _w(8, "rule stated before measuring: as many labels as routing takes themes "
                        "(top_themes); alone, 5 and 20 labels scored alike on the dev sentences (nDCG@10 0.190 / 0.189)")
    label_vector_top: int = _w(300, "rule stated before measuring: the sentence's 300 nearest labels by cosine feed the "
                               "reranker's label features (query.labels.nearest); a probe of per-query AUC over the pool "
                               "at 300 (dev pastoral sentences: the nearest covering label 0.83, prior_sum 0.81) was the "
                               "only value looked at")
    label_rewrite_top: int = _w(100, "rule stated before measuring: the step-back rewrites' 100 nearest labels (a third of the "
                                "sentence's, since a rewrite's need is narrower) feed rw_label_* (query.features)")
    bm25_k1: float = _w(1.2, "rule: the usual BM25 defaults (Robertson; Lucene's k1 1.2, b 0.75), not tuned")
    bm25_b: float = _w(0.75, "rule: the usual BM25 defaults (with bm25_k1), not tuned")
    # retrieval sizes (engine): formerly per-search options, fixed when the stages were written
    dense_k: int = _w(30, "set by hand: nearest neighbours per query variant and level; inside the architecture's wide "
                      "pool of 30-50")
    ef_search: int = _w(60, "rule: HNSW ef_search above dense_k (an ef_search below LIMIT returns fewer rows); the "
                        "pericope level's graph only, verses and chapters are searched exactly")
    pool: int = _w(50, "rule from the architecture: rerank a wide pool (30-50) after fusion")
    max_rewrites: int = _w(4, "rule from the architecture: the original and at most 4 rewrites (5 queries); an LLM "
                           "gateway adds at most this many phrases too")
    collapse_ratio: float = _w(0.5, "set by hand: a chapter absorbs its verses when at least half of them were hit "
                               "(merge.merge)")
    # final score (boost.final_scores)
    list_depth: int = _w(10, "rule stated before measuring: each retrieval list's top 10 (what nDCG@10 reads) reaches the "
                         "reranker whatever the fusion says (fuse.admit)")
    prior_weight: float = _w(0.6, "set by hand: final = fused/best + 0.6 * prior/best, so the fused order leads on a tie")
    specificity_power: float = _w(1.0, "rule stated before measuring: plain smoothed IDF over the themes (1); 2 was "
                                  "the only other value tried, on the dev sentences (README, issue 22)")
    testament_boost: float = _w(1.1, "rule: a named testament is a hint, +10 %, never a filter")
    min_genre_boost: float = _w(0.05, "rule: a soft boost never multiplies by 0 (architecture)")
    blend_k: int = _w(60, "rule stated before measuring: the RRF paper's k again, so the learned and the fused order "
                      "count alike (query.rerank.apply, pastoral intent only); measured: README 'Ranking for the need'")
    # routing (route.route)
    top_themes: int = _w(8, "dev: top 8 within 0.2 at temperature 0.1 gave topic nDCG@10 0.400 / pastoral-cue 0.512 "
                         "against 0.388 / 0.481 for 5, 0.15, 0.05 (training-side dev queries)")
    margin: float = _w(0.2, "dev: chosen with top_themes (same measurement)")
    temperature: float = _w(0.1, "dev: chosen with top_themes (same measurement)")
    pastoral_bonus: float = _w(0.05, "set by hand: on pastoral intent a need-level theme wins a near tie with a topic name; "
                               "dev, four seeds retrained: 0 lowered nDCG@10 0.348 -> 0.339 (README, thirteenth step)")
    min_clause_words: int = _w(3, "rule: a clause of fewer than 3 words carries no need of its own")
    # every stated need answered (slots.fill)
    slot_k: int = _w(5, "rule from the issue: the top 5 carries the best candidate of each need")
    slot_depth: int = _w(20, "rule stated before measuring: a need's candidate is promoted only from the whole sentence's "
                         "top 20, so relevance to the sentence comes first")
    # pastoral intent (analyze.pastoral_score)
    first_person_weight: float = _w(0.4, "rule stated with the classifier: first-person voice is the strongest cue")
    distress_weight: float = _w(0.3, "rule stated with the classifier: per distress word, at most two")
    plea_weight: float = _w(0.2, "rule stated with the classifier: a plea (help, why, can't)")
    pastoral_threshold: float = _w(0.6, "rule: a first-person sentence with one distress word, or two distress words")
    # relevance floor (floor, themes.calibrate)
    fulltext_k: int = _w(30, "set by hand: full-text hits retrieved; the floor's full-text signal saturates there "
                         "(log1p(hits) / log1p(fulltext_k))")
    max_false_abstain: float = _w(0.05, "rule from the issue: at most 1 in 20 answerable calibration queries abstain")
    # do no harm (harm.off_need, every reader but a seeker)
    need_fit: float = _w(0.5, "dev: cosine to another routed theme's rewrite a candidate reached only by the sentence's surface "
                         "(its own lists, the topics its words name) needs to stay on top; with named topics as surface 0.3/0.4/0.5 "
                         "passed the dev rule (dev_harm hit -0/-1/-1 sentence), 0.5 the highest, judged on the audits' changed "
                         "answers: harmful 9 -> 9, wounding marks 36 -> 29 (decisions, twelfth increment)")
    avoid_near: int = _w(8, "dev: the avoid lists of the 8 needs nearest the sentence apply, routed or not; 0/3/5/8/12/30 gave "
                         "dev_harm harm@5 .240/.202/.163/.144/.144/.096, dev hit@5 .700/.700/.689/.689/.678/.656 (decisions)")
    situation_near: int = _w(3, "dev: k 3 / 10 (cosine 0.4): dev_harm harm@5 .087 / .077, dev hit@5 .656 / .644 (decisions)")
    situation_fit: float = _w(0.45, "dev: cosine .7/.6/.5/.45/.4: dev_harm harm@5 .115/.115/.096/.087/.087, hits alike (decisions)")
    directive_cap: int = _w(2, "dev: a sufferer's top 5 keeps its first 2 orders; caps 1/2/0: dev hit@5 -3/-1/-12 sentences; "
                            "the judged audit's harmful answers 35 -> 29 (2) / 22 (0) of 83 (decisions); 0 for a reader at risk, a rule "
                            "stated before measuring (decisions, fourteenth increment)")
    pin_margin: float = _w(0.06, "dev: a long passage shows a sufferer first its nearest verse that neither wounds nor orders "
                           "when within this cosine of the nearest: the upper quartile of the nearest-to-runner-up gap in the "
                           "long passages of dev answers (quartiles .012/.033/.060, 85 passages)")
    # display
    context_verses: int = _w(2, "rule from the architecture: a +-2-3 verse context window")

    @classmethod
    def sources(cls) -> dict[str, str]:
        return {f.name: f.metadata.get("source", "") for f in fields(cls)}


TUNING = Tuning()
