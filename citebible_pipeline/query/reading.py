"""What one search carries from stage to stage (pure data): the sentence as read (`Reading`), the ranking before
display (`Ranked`: the evaluation stops here) and the per-stage milliseconds (`Clock`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.models import Analysis, Rewrite
from citebible_pipeline.query.route import Routed
from citebible_pipeline.query.startup import EngineData


@dataclass
class Ranked:
    """What ranking produced, before display (the evaluation stops here)."""
    analysis: Analysis
    query_vector: np.ndarray | None
    rewrites: list[Rewrite]
    candidates: list[Candidate]
    abstained: bool = False
    reason: str | None = None  # why it abstained
    signals: dict[str, float] = field(default_factory=dict)
    terms: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=dict)
    notice: str | None = None  # a degraded optional stage
    data: EngineData | None = None  # the snapshot it was ranked on (display reads the same one)


@dataclass
class Reading:
    """One sentence as the stages read it: its analysis and vectors, where it routes, and the queries it becomes."""
    analysis: Analysis
    q: np.ndarray  # the sentence's vector
    rows: np.ndarray  # the routing rows: the sentence, its clauses, a stance's cue
    floor_routed: list[Routed]  # the sentence's own routing (the floor was calibrated on it)
    routed: list[Routed]  # routing as told by the stance
    stance: str | None  # the need a stance names (perspective.stance)
    left_out: frozenset[str]  # the split keys routing leaves out (training's, and a stance's)
    variants: list[tuple[Rewrite, int]] = field(default_factory=list)  # (rewrite, theme row), the original first
    note: str | None = None  # a degraded optional stage (the LLM gateway)
    vectors: list[np.ndarray] = field(default_factory=list)  # one per variant
    route_rows: np.ndarray | None = None  # rows, then any LLM phrases
    needs_routed: list[Routed] = field(default_factory=list)  # routing with the LLM phrases too
    prior: dict[tuple[int, int], float] = field(default_factory=dict)
    text: str = ""

    @property
    def shown(self) -> list[Rewrite]:
        return [rw for rw, _ in self.variants]


class Clock:
    """Per-stage milliseconds (SearchResponse.timings)."""

    def __init__(self) -> None:
        self.t: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.t[name], self._last = round((now - self._last) * 1000, 2), now
