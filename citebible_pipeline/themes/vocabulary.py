"""The theme vocabulary as data (pure): pastoral themes from pastoral.yaml plus every training-side
OpenBible topic, each with the cues routing compares a query to and the voted passages of its prior."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources

import yaml
from pydantic import BaseModel, field_validator

from citebible_pipeline.gold.access import TrainingPassage
from citebible_pipeline.gold.split import split_key

MIN_TOPIC_PASSAGES = 3  # a topic with fewer voted passages is noise as a prior


class PastoralTheme(BaseModel, frozen=True):
    id: str
    name: str
    rewrite: str
    cues: tuple[str, ...]
    topics: tuple[str, ...]

    @field_validator("cues", "topics")
    @classmethod
    def _non_empty(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("needs at least one entry")
        return tuple(s.strip().lower() if s else s for s in v)


def load_pastoral(text: str | None = None) -> list[PastoralTheme]:
    if text is None:
        text = resources.files("citebible_pipeline.themes").joinpath("pastoral.yaml").read_text(encoding="utf-8")
    items = [PastoralTheme(**raw) for raw in yaml.safe_load(text)]
    ids = [t.id for t in items]
    if len(set(ids)) != len(ids):
        raise ValueError("pastoral.yaml: duplicate theme ids")
    return items


@dataclass
class Theme:
    key: str
    kind: str
    name: str
    rewrite: str
    split_key: str
    cues: list[str]
    passages: dict[tuple[int, int], float] = field(default_factory=dict)


def passage_weights(rows: Sequence[TrainingPassage]) -> dict[tuple[int, int], float]:
    """Each passage's share of the topic's best votes or score (whichever rates it higher), in (0, 1]."""
    maxv = max((r.votes or 0 for r in rows), default=0)
    maxs = max((r.score or 0 for r in rows), default=0)
    out: dict[tuple[int, int], float] = {}
    for r in rows:
        w = max((r.votes or 0) / maxv if maxv else 0.0, (r.score or 0) / maxs if maxs else 0.0)
        if w > 0:
            out[(r.start_id, r.end_id)] = max(w, out.get((r.start_id, r.end_id), 0.0))
    return out


def build_vocabulary(training: Iterable[TrainingPassage], pastoral: Sequence[PastoralTheme]) -> tuple[list[Theme], dict]:
    """Themes (pastoral first, then topics by name) and a report of pastoral topic names not found on
    the training side (held out or absent: they contribute nothing, by design)."""
    by_topic: dict[str, list[TrainingPassage]] = defaultdict(list)
    for p in training:
        by_topic[p.topic.strip().lower()].append(p)
    weights = {name: passage_weights(rows) for name, rows in by_topic.items()}
    themes: list[Theme] = []
    missing: dict[str, list[str]] = {}
    for t in pastoral:
        miss: dict[tuple[int, int], float] = {}  # noisy-or: a passage voted under several of the
        for name in t.topics:                      # theme's topics is more central to the need
            for key, w in weights.get(name, {}).items():
                miss[key] = miss.get(key, 1.0) * (1.0 - w)
        merged = {key: round(1.0 - m, 6) for key, m in miss.items() if m < 1.0}
        missing[t.id] = [n for n in t.topics if n not in weights]
        themes.append(Theme(f"pastoral:{t.id}", "pastoral", t.name, t.rewrite, f"pastoral:{t.id}",
                            [t.name, *t.cues], merged))
    for name in sorted(weights):
        if len(weights[name]) >= MIN_TOPIC_PASSAGES:
            themes.append(Theme(f"topic:{name}", "topic", name, name, split_key(name), [name], weights[name]))
    return themes, {"missing_topics": {k: v for k, v in missing.items() if v}}
