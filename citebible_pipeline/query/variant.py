"""The stage switches the evaluation's ablation rows turn off (docs/evaluation.md lists each row). Internal: the
public `SearchOptions` never carries them, and the served pipeline is `FULL`, every stage on. A caller can never switch
safety off (crisis help, abuse care, the do-no-harm stage); the `no_harm_rule` row measures what the last one does."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Variant:
    dense: bool = True  # dense retrieval of the sentence and its step-back rewrites (off: prior, full text, labels only)
    hybrid: bool = True  # Postgres full text beside dense retrieval
    chapters: bool = True  # the chapter level beside verses
    merge: bool = True  # adjacent verses become ranges; a chapter most of whose verses were hit absorbs them
    prior: bool = True  # the human-vote prior of the routed themes, as a fused list and as candidates per need
    specific: bool = True  # the prior weighs a passage by how specific it is to the routed themes (hub discount)
    labels: bool = True  # document expansion: passages met through the training-side labels they are listed under
    rerank: bool = True  # the engine's reranker (the learned model by default)
    blend: bool = True  # on pastoral intent, the learned order fused with the order it was given
    boost: bool = True  # soft genre boost on pastoral intent, and the testament hint
    slots: bool = True  # every need the sentence states holds a top-5 slot
    floor: bool = True  # abstain when nothing fits
    harm: bool = True  # hold back what would wound this reader (query.harm); only the no_harm_rule row turns it off

    @classmethod
    def parse(cls, pairs: dict[str, object]) -> Variant:
        """A variant from switch names (`citebible seeds --serve`); an unknown name or a value that is not a boolean is
        a ValueError naming it."""
        known = {f.name for f in fields(cls)}
        for key, value in pairs.items():
            if key not in known:
                raise ValueError(f"{key!r} is not a stage switch ({', '.join(sorted(known))})")
            if not isinstance(value, bool):
                raise ValueError(f"{key}: expected true or false, got {value!r}")
        return cls(**pairs)  # type: ignore[arg-type]


FULL = Variant()
