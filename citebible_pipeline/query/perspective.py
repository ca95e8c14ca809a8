"""Where the reader stands (pure): stances a sentence's vector cannot tell apart, so routing must be told.

The reader who discloses abuse (issue 63): the abuse need speaks (its avoid list holds the orders to submit, to stay
or not to resist), and the themes named for reconciliation, submission and forgiveness leave the routing.

The reader who did the wrong (rule P'': docs/decisions.md): "I cheated on my wife" sits
beside the betrayal need's cue "my partner cheated on me", and was answered with passages for the wronged ("do not
avenge yourselves"). A reader who says they did the wrong (`analyze.CONFESSION`) is routed as the one who did it: the
needs that answer the wronged are left out and the guilt need speaks.

The reader angry at God (rules L and L': docs/decisions.md): "I'm angry at God" routes to the
themes named for anger ("be angry and sin not", the anger need written for anger at people) and meets passages of God's
own anger ("who knows the power of your anger"). Anger whose object is God (`analyze.COMPLAINT`) is a complaint to God,
the Bible's lament (Job 3, Psalm 88, Jeremiah 20): the themes named for anger are left out and the lament need speaks.

Either way the stance's need has its cue nearest the sentence as a routing row of its own, as a clause stating that
need would, and a need slot beside the sentence's situation (stage 9), and
the stance counts as one distress word (`analyze.one_more_distress`, the engine): it states its need by its words
("I blame God", "I stole from my employer")."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from citebible_pipeline.query.models import Analysis
from citebible_pipeline.query.route import Routed, ThemeIndex, held_out, with_cue

# pastoral.yaml's needs written for the one wronged ("betrayal by a friend", "forgiving someone who hurt me") and the one
# written for the one who did wrong ("guilt, confession and forgiveness from God"); chosen from the needs' own names
WRONGED = ("pastoral:betrayal", "pastoral:forgiving")
WRONGDOER = "pastoral:guilt"
LAMENT = "pastoral:lament"  # "lament and honest complaint to God"
ABUSE = "pastoral:abuse"  # "abuse and violence by someone close": its avoid list holds the orders to submit and stay
DESPAIR = "pastoral:despair"  # "depression and hopelessness": what safe messaging asks for a life at risk, hope and help
# no rewrite routes a disclosure of abuse to reconciliation or submission (issue 63): the themes so named are left out,
# and so are those named for the sexual wrong and for drink (the sufferer is not the wrongdoer: what such a topic lists
# is the law and the warnings to whoever did it, or blame for what was done to the reader)
ABUSE_LEFT_OUT = re.compile(r"\b(?:reconcil\w*|submi\w*|obe(?:y|ys|dience|dient)|marriage|husbands and wives|wives|divorce|"
                            r"forgiv\w*|honou?r(?:ing)? (?:your )?(?:father|parents)|pur(?:e|ity)|immoral\w*|fornicat\w*|"
                            r"adulter\w*|lust\w*|chastity|virginity|modest\w*|seduc\w*|drunk\w*)\b")
# a theme named for anger: the anger need ("anger and the desire for revenge") and every topic or entry whose name holds
# a word of the anger family (analyze.COMPLAINT's own words: anger at people, or God's wrath)
ANGER_NAME = re.compile(r"\b(?:anger|angry|angered|wrath|rage|furious|fury)\b")
LEFT_OUT_NAMED = {ABUSE: ABUSE_LEFT_OUT, LAMENT: ANGER_NAME}  # the stances that leave themes out by name (crisis: none)


def stance(analysis: Analysis, themes: ThemeIndex | None = None, exclude: frozenset[str] = frozenset()) -> str | None:
    """The need the reader's stance names (the guilt need for a confession, lament for a complaint to God), None for
    neither; a sentence that is both reads as the confession (its rule came first). A stance acts only where its need
    can speak (rule L'): with its need left out of routing (`exclude`: training leaves each query's own theme out) it
    is None, so a need's own cue ("I blame God for what happened") trains as it reads without the stance."""
    need = (ABUSE if analysis.abuse else DESPAIR if analysis.crisis else WRONGDOER if analysis.stance == "doer"
            else LAMENT if analysis.complains else None)
    return None if need is not None and themes is not None and held_out(themes, need, exclude) else need


def left_out(themes: ThemeIndex, need: str) -> set[int]:
    """The themes routing leaves out for a stance: the needs for the wronged, the themes named for anger, or for a
    disclosure of abuse those named for reconciliation, submission and forgiveness, the sexual wrong and drink; crisis
    leaves nothing out."""
    if need == WRONGDOER:
        return {themes.keys.index(k) for k in WRONGED if k in themes.keys}
    named = LEFT_OUT_NAMED.get(need)
    return set() if named is None else {i for i, name in enumerate(themes.names) if named.search(name.lower())}


def as_told(themes: ThemeIndex, need: str, vecs: np.ndarray, exclude: frozenset[str] = frozenset()
            ) -> tuple[np.ndarray, frozenset[str]]:
    """The routing rows with the stance's need's nearest cue added (route.with_cue), and the split keys routing leaves
    out with the stance's left-out themes added."""
    out = exclude | {themes.split_keys[i] for i in left_out(themes, need)}
    return with_cue(themes, need, vecs, exclude), out


def slot_needs(themes: ThemeIndex, stated: list[int], routed: Sequence[Routed], need: str | None) -> list[int]:
    """The needs that hold a top slot (stage 9): the clauses' needs (`stated`), and for a stance its situation (those
    needs, else the best routed theme that is not the stance's need) and the stance's need."""
    if need is None or need not in themes.keys:
        return stated
    own = themes.keys.index(need)
    first = stated or [r.theme for r in routed if r.theme != own][:1]
    return list(dict.fromkeys([*first, own]))
