"""The query module's boundary: options in, SearchResponse out. An API can import this file alone."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION
from citebible_pipeline.query.tuning import TUNING

MAX_QUERY_CHARS = 500
MAX_K = 50
TRANSLATION_KEY = r"^[a-z]{2,8}$"  # a partition key (web, bsb); whether it is built, the engine says


class EngineNotReady(RuntimeError):
    """A table or model the engine needs is missing, empty or unusable; the message names the asset to materialize."""


class QueryValidationError(ValueError):
    """The query text cannot be searched (empty, too long, control characters); the message says why."""


class SearchOptions(BaseModel, frozen=True):
    """Every stage switchable, so the evaluation can compare variants. Defaults are the full pipeline."""

    rewrite: bool = Field(True, description="step back to the need: themes routed from the query become extra queries")
    hybrid: bool = Field(True, description="add Postgres full text to dense retrieval")
    chapters: bool = Field(True, description="retrieve the chapter level as well as verses")
    # Off by default: with the learned reranker (retrained each way) the level lowered every set's nDCG@10 (held-out
    # 0.430 -> 0.426, curated_pastoral 0.428 -> 0.411, curated_study 0.671 -> 0.669, pericopes encoded); README.
    pericopes: bool = Field(False, description="retrieve the pericope level too (titled passages; merge verse -> pericope -> chapter)")
    merge: bool = Field(True, description="merge adjacent verses into ranges, collapse dense chapters")
    prior: bool = Field(True, description="the human-vote prior (voted passages of routed themes) as retriever and score")
    specific: bool = Field(True, description="weigh each voted passage by how specific it is to the routed themes "
                           "(inverse theme frequency), so a passage voted under everything stops answering everything")
    specific_scope: Literal["layer", "verse", "all"] = Field(
        "layer", description="count a passage's themes within its theme's own layer (pastoral needs among the needs, "
        "topic names among the topics: a passage under most needs is specific to none) by its exact span ('layer'), "
        "or by its most listed verse ('verse': Psalm 34:17-20 and 34:18 one passage; measured, README), or by exact "
        "span over all themes pooled ('all')")
    boost: bool = Field(True, description="soft genre boost on pastoral intent")
    genre_weights: Literal["set", "learned"] = Field("set", description="the genre boost's weights: the set table "
                                                    "(genre_boosts) or read from the training side's themes "
                                                    "(boost.learned_boosts; measured, README)")
    genre_scope: Literal["pastoral", "first_person"] = Field("pastoral", description="where the genre boost applies: "
                                                             "on pastoral intent, or on it and any first-person sentence")
    slots: bool = Field(True, description="when the sentence's clauses route to different needs, the top 5 carries the "
                        "best candidate of each (from the top 20)")
    slot_serve: Literal["overlap", "half"] = Field("half", description="when a candidate serves a need (query/slots.py): "
                                                   "it overlaps a passage the need lists, or (rule V, README) half its verses lie in them")
    diversify: bool = Field(False, description="on pastoral intent, choose the top 5 from the top 20 by maximal marginal "
                            "relevance (each next passage the most relevant less most like one already chosen)")
    xquad: bool = Field(False, description="on pastoral intent, choose the top 5 from the top 20 by xQuAD over the "
                        "routed needs (each next passage the most relevant plus the weight of the needs it serves that "
                        "none chosen serves yet; query/diversify.py; rule O, README)")
    expand: bool = Field(False, description="add high-vote cross-references of the top candidates to the pool")
    dense: bool = Field(True, description="dense retrieval (off: prior and full text only)")
    rerank: bool = Field(True, description="run the engine's reranker (the learned model by default; CITEBIBLE_RERANKER)")
    blend: bool = Field(True, description="on pastoral intent, fuse the learned reranker's order with the fused order "
                        "(reciprocal rank): the model learned mostly from topic names and its votes' fame")
    floor: bool = Field(True, description="abstain when nothing fits")
    max_rewrites: int = Field(4, ge=0, le=4, description="rewrites besides the original (at most 5 queries; with an LLM "
                              "gateway, at most this many of its phrases too)")
    llm_rewrites: Literal["add", "replace"] = Field("add", description="with an LLM gateway (CITEBIBLE_LLM_URL), its need "
                                                    "phrases join the offline rewrites ('add', rule A, README) or take "
                                                    "their place ('replace')")
    pool: int = Field(50, ge=10, le=200, description="candidates kept after fusion")
    labels: bool = Field(True, description="document expansion: passages met through the training-side human labels "
                         "they are listed under (OpenBible topic names, Nave's sub-entries), a fused list of their own")
    list_depth: int = Field(TUNING.list_depth, ge=0, le=50, description="each retrieval list's top this many join the "
                            "pool whatever the fusion says (recall first; 0: the fused top `pool` only)")
    need_depth: int = Field(TUNING.list_depth, ge=0, le=50, description="each routed theme's best this many passages join the pool when "
                            "fusion left them out (recall for every need; 0: off)")
    need_order: Literal["fused", "weight"] = Field("fused", description="how a routed theme's best passages are chosen "
                                                  "(lists.need_candidates): 'weight' by the theme's weight x specificity, "
                                                  "'fused' that order and the sentence's cosine by reciprocal rank")
    need_cosine: Literal["sentence", "row"] = Field("sentence", description="whose cosine a routed need's best passages "
                                                   "are chosen with (lists.need_candidates): the sentence's, or that of "
                                                   "the row it routed best from (the clause or need phrase stating it)")
    prior_ties: Literal["canonical", "cosine", "pastoral"] = Field("canonical", description="how the prior list orders "
                                                       "passages of equal weight (lists.prior_list): in canonical order, by "
                                                       "the sentence's cosine to their best verse, or by it on pastoral "
                                                       "intent only (both measured and left off)")
    route_evidence: bool = Field(False, description="a theme routes by the mean of its name's fit and its best passages' "
                                 "fit to the words (query/evidence.py), not by its name alone; the floor keeps the name routing")
    need_intent: bool = Field(False, description="a first-person sentence whose nearest theme is a pastoral need has "
                              "pastoral intent, as if it held one distress word (analyze.with_need; measured, README)")
    crisis: bool = Field(True, description="crisis language (analyze.CRISIS_WORDS) is never turned away by the floor and "
                         "gets crisis help text with the answer (query/crisis.py)")
    crisis_need: bool = Field(False, description="crisis language states the despair need: its cue nearest the sentence "
                              "routes as a clause would (crisis.with_need; measured and left off, README)")
    need_row: bool = Field(False, description="on pastoral intent the needs hold a routing row of their own, each at its "
                           "best over the sentence and its clauses, for the prior and the need candidates (route.needs_row)")
    person_context: bool = Field(False, description="a person a first-person sentence names (\"my mother\") is "
                                 "context: routing reads the sentence with them as \"someone\" (query/persons.py)")
    person_labels: bool = Field(False, description="the same persons are context for document expansion: the label "
                                "list and the label features read the sentence with them as \"someone\" (query/persons.py)")
    abuse_care: bool = Field(True, description="a reader who discloses abuse gets the orders to submit, to stay or not to "
                             "resist (\"wives, be in subjection\", \"let not the wife depart\") held back below the rest "
                             "of the answer, and where to find help now (query/care.py)")
    confession: bool = Field(True, description="a reader who says they did a wrong (\"I cheated on my wife\") is routed "
                             "as the one who did it: the needs for the wronged left out, the guilt need a routing row and "
                             "a need slot (query/perspective.py; rule P'', README)")
    complaint: bool = Field(True, description="a reader angry at God (\"I'm angry at God\") is routed as a complaint to "
                            "God: the themes named for anger left out, the lament need a routing row and a need slot "
                            "(query/perspective.py; rule L, on since rule L', README \"Thirty-sixth step\")")
    duty_labels: bool = Field(False, description="on pastoral intent, a passage Nave's lists as a duty (\"citizens: duties "
                              "of\") weighs less, by a lift read from the training side (query/duty.py; measured, README)")
    exact: bool = Field(True, description="verse and chapter dense searches are exact, from the vectors the engine holds "
                        "for the reranker, not the HNSW graphs (a rebuilt graph changes no answer; retrieve.exact_rows)")
    dense_k: int = Field(30, ge=5, le=200, description="nearest neighbours per query variant and level")
    ef_search: int = Field(60, ge=10, le=1000, description="HNSW ef_search for the per-variant ANN queries "
                           "(the pericope level, and every level with exact off)")
    collapse_ratio: float = Field(0.5, gt=0, le=1, description="share of a chapter's verses hit that collapses them into it")
    translation: str = Field(DEFAULT_TRANSLATION, pattern=TRANSLATION_KEY, description="which translation's text answers (web, bsb); "
                             "the same references either way")


class Analysis(BaseModel):
    query_type: str  # reference | search | statement (code, refused unsearched)
    pastoral: bool
    pastoral_score: float
    first_person: bool = False  # the reader speaks of themselves ("I", "my", "we")
    crisis: bool = False  # self-harm or suicide in the words of screening instruments (query/crisis.py)
    abuse: bool = False  # abuse by someone close disclosed, in the words of screening instruments (query/care.py)
    abuse_by_reader: bool = False  # those words are only the reader's own confessed act ("I abused my wife"): no help text
    confesses: bool = False  # the reader says they did a wrong ("I lied to ..."): analyze.CONFESSION, query/perspective.py
    complains: bool = False  # the reader's anger is at God ("I'm angry at God"): analyze.COMPLAINT, query/perspective.py
    testament: str | None = None  # OT / NT when the query says so
    references: list[str] = []
    reference_error: str | None = None
    refused: str | None = None  # why a statement is not searched


class Rewrite(BaseModel):
    text: str  # what was searched: the query, a theme's rewrite, or an LLM phrase
    source: str  # original | pastoral:<key> | topic:<name> | llm
    weight: float
    theme: str | None = None  # the routed theme's name (None for the original and LLM phrases)


class Hit(BaseModel):
    """One retriever's sighting of a candidate (provenance)."""

    variant: str
    retriever: str  # dense | fulltext | prior | labels | crossref
    level: str
    rank: int


class VerseText(BaseModel):
    ref: str
    id: int
    text: str


class Span(BaseModel):
    start: int
    end: int
    term: str


class Related(BaseModel):
    ref: str
    start_id: int
    end_id: int
    votes: int


class Result(BaseModel):
    ref: str
    start_id: int
    end_id: int
    book: str
    chapter: int
    verse_start: int
    verse_end: int
    level: str  # verse | range | pericope | chapter
    title: str | None = None  # a pericope's heading
    text: str
    score: float
    genre: str | None = None
    pinned: VerseText | None = None
    context: list[VerseText] = []
    highlights: list[Span] = []
    provenance: list[Hit] = []
    related: list[Related] = []


class SearchResponse(BaseModel):
    query: str
    abstained: bool = False
    reason: str | None = None  # why it abstained (None when it answered)
    notice: str | None = None  # an optional stage that degraded and how (the LLM rewriter down); never an abstention
    crisis_help: str | None = None  # where to find help now: crisis language (query/crisis.py), abuse disclosed (care.py)
    analysis: Analysis
    rewrites: list[Rewrite] = []
    timings: dict[str, float] = {}
    results: list[Result] = []
