"""Document expansion (pure, build side): every passage with the human labels it is listed under on the training
side, so a reader's words can meet a passage through any of its labels, doc2query-style (issue 22, item 5). A
label is a training-side OpenBible topic name (its passages weighted by their share of the topic's best votes, as
the prior weighs them) or a training-side Nave's sub-entry's readable text ("afflictions and adversities: prayer
in"; every passage at NAVE_WEIGHT: Nave's has no votes, so it cannot be famous). Held-out keys of either source
never become labels; each label keeps a split key so training can leave a query's own label out, as routing
leaves its own theme out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from citebible_pipeline.gold.access import TrainingNavePassage, TrainingPassage
from citebible_pipeline.gold.split import split_key
from citebible_pipeline.naves.queries import readable
from citebible_pipeline.themes.vocabulary import NAVE_WEIGHT, topic_weights


@dataclass
class Label:
    source: str  # openbible | naves
    text: str
    split_key: str
    passages: dict[tuple[int, int], float] = field(default_factory=dict)


def build_labels(training: Iterable[TrainingPassage], nave_rows: Iterable[TrainingNavePassage],
                 heldout_keys: frozenset[str] = frozenset()) -> list[Label]:
    """OpenBible topic names first (by name), then Nave's sub-entries (by readable text). A Nave's label carries its
    subject's split key, the key a Nave's training query and a Nave's theme are left out by."""
    out = [Label("openbible", name, split_key(name), ws) for name, ws in sorted(topic_weights(training).items())]
    nave: dict[str, Label] = {}
    for r in nave_rows:
        key = split_key(readable(r.subject, ()))
        lab = nave.get(r.text)
        if lab is None:
            lab = nave[r.text] = Label("naves", r.text, key)
        lab.passages[(r.start_id, r.end_id)] = NAVE_WEIGHT
    out += [nave[t] for t in sorted(nave)]
    return [lab for lab in out if lab.passages and lab.split_key not in heldout_keys]
