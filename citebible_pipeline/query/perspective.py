"""The reader who did the wrong (pure; SearchOptions.confession, rule P'': README "Thirtieth step"). A sentence's vector
cannot tell the doer from the one it was done to: "I cheated on my wife" sits beside the betrayal need's cue "my partner
cheated on me", and was answered with passages for the wronged ("do not avenge yourselves", "my close friend has lifted
his heel against me"). A reader who says they did the wrong (`analyze.CONFESSION`) is routed as the one who did it: the
needs that answer the wronged are left out, the guilt need's cue nearest the sentence is a routing row of its own, as a
clause stating that need would be (crisis.with_need does the same for despair), and the guilt need holds a need slot
beside the sentence's situation (stage 9), so the top 5 carries a passage for the one who did it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from citebible_pipeline.query.analyze import one_more_distress
from citebible_pipeline.query.models import Analysis
from citebible_pipeline.query.route import Routed, ThemeIndex, with_cue

# pastoral.yaml's needs written for the one wronged ("betrayal by a friend", "forgiving someone who hurt me") and the one
# written for the one who did wrong ("guilt, confession and forgiveness from God"); chosen from the needs' own names
WRONGED = ("pastoral:betrayal", "pastoral:forgiving")
WRONGDOER = "pastoral:guilt"


def as_doer(themes: ThemeIndex, vecs: np.ndarray, exclude: frozenset[str] = frozenset()) -> tuple[np.ndarray, frozenset[str]]:
    """The routing rows with the guilt need's nearest cue added (route.with_cue), and the split keys routing leaves out
    with the wronged needs added."""
    out = exclude | {themes.split_keys[themes.keys.index(k)] for k in WRONGED if k in themes.keys}
    return with_cue(themes, WRONGDOER, vecs, exclude), out


def as_stated(analysis: Analysis) -> Analysis:
    """A confession counts as one distress word: its guilt is stated by its act ("I stole money from my employer")."""
    return one_more_distress(analysis) if analysis.confesses else analysis


def slot_needs(themes: ThemeIndex, stated: list[int], routed: Sequence[Routed], doer: bool) -> list[int]:
    """The needs that hold a top slot (stage 9): the clauses' needs (`stated`), and for a reader who did the wrong its
    situation (those needs, else the best routed theme that is not guilt) and guilt."""
    if not doer or WRONGDOER not in themes.keys:
        return stated
    guilt = themes.keys.index(WRONGDOER)
    first = stated or [r.theme for r in routed if r.theme != guilt][:1]
    return list(dict.fromkeys([*first, guilt]))
