"""The query module's boundary: options in, SearchResponse out. An API can import this file alone."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from citebible_pipeline.bible.translations import DEFAULT_TRANSLATION

MAX_QUERY_CHARS = 500
MAX_K = 50
TRANSLATION_KEY = r"^[a-z]{2,8}$"  # a partition key (web, bsb); whether it is built, the engine says


class EngineNotReady(RuntimeError):
    """A table or model the engine needs is missing, empty or unusable; the message names the asset to materialize."""


class QueryValidationError(ValueError):
    """The query text cannot be searched (empty, too long, control characters); the message says why."""


class SearchOptions(BaseModel, frozen=True):
    """What a caller of the query module or the API chooses. The stage switches the evaluation compares are not here
    (`query.variant.Variant`), and safety (crisis help, abuse care) is never switchable."""

    translation: str = Field(DEFAULT_TRANSLATION, pattern=TRANSLATION_KEY, description="which translation's text "
                             "answers (web, bsb); the same references either way")
    pericopes: bool = Field(False, description="retrieve titled passages (BSB headings) as a level of their own; off by "
                            "default: it lowered every set's nDCG@10 (docs/decisions.md)")
    llm_rewrites: bool = Field(True, description="with an LLM gateway configured (CITEBIBLE_LLM_URL), its need phrases "
                               "join the offline step-back rewrites; off: the offline rewrites alone")


class Analysis(BaseModel):
    query_type: str  # reference | search | statement (code, refused unsearched)
    pastoral: bool
    pastoral_score: float
    first_person: bool = False  # the reader speaks of themselves ("I", "my", "we")
    # who is speaking (analyze): sufferer (it happened to me or someone I love), doer (I did the wrong: analyze.CONFESSION),
    # helper (how do I help someone who...), seeker (what does the Bible say about...); the harm stage reads it
    stance: Literal["sufferer", "doer", "helper", "seeker"] = "seeker"
    crisis: bool = False  # self-harm or suicide in the words of screening instruments (query/care.py)
    abuse: bool = False  # abuse by someone close named in the first person (query/care.py; by the doer: no help text)
    # a seeker's question that names abuse or suicide ("does god blame women who were raped"): often asked by the one it
    # happened to or one who loves them, so the harm stage holds its answer as a sufferer's (`harm_stance`)
    asks_of_wound: bool = False
    complains: bool = False  # the reader's anger is at God ("I'm angry at God"): analyze.COMPLAINT, query/perspective.py
    losses: list[str] = []  # what the sentence says was lost (query/promises.py): no promise of it shown
    testament: str | None = None  # OT / NT when the query says so
    references: list[str] = []
    reference_error: str | None = None
    refused: str | None = None  # why a statement is not searched

    @property
    def harm_stance(self) -> str:
        """Whom the harm stage answers (query/harm.py): the stance, but a sufferer for a question asked of a wound."""
        return "sufferer" if self.stance == "seeker" and self.asks_of_wound else self.stance


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
