"""A person the reader names is context, not the need (pure; SearchOptions.person_context). "My mother is dying and
I'm angry at God" routed by its noun reaches the mother topics (honouring parents), and a husband named in a sentence
about abuse or betrayal reaches the household codes: a topic name sharing one noun with the sentence wins every
routing row. So routing may read a first-person sentence with each person it names with a possessive ("my mother",
"our son's", "my best friend") replaced by "someone"; retrieval, the labels and the reranker keep the reader's own
words. With SearchOptions.person_labels document expansion reads the masked sentence instead (its label list and the
labels nearest it), and routing keeps the reader's words. Only a possessed noun counts: "as a kid" is a time of life,
"the Son" a title.

Which persons count is fixed from sources outside any query set: the kin terms of standard English kinship
terminology (with their step-, ex- and -in-law forms) and the two other persons the Holmes-Rahe Social Readjustment
Rating Scale (1967) names among its life events, a friend and the boss."""

from __future__ import annotations

import re

_KIN = ("parents? mothers? fathers? moms? mums? dads? child children sons? daughters? kids? siblings? brothers? sisters? "
        "spouses? husbands? wife wives grandparents? grandmothers? grandfathers? grandmas? grandpas? grandchild "
        "grandchildren grandsons? granddaughters? aunts? uncles? cousins? nephews? nieces?")
_HOLMES_RAHE = "friends? boss(?:es)?"
PERSON = re.compile(
    r"\b(?:my|our|his|her|their|your)\s+(?:[\w-]+\s+)?(?:ex-?|step-?)?(?:" + "|".join((_KIN + " " + _HOLMES_RAHE).split())
    + r")(?:-in-laws?)?(?P<own>['\u2019]s?)?(?![\w-])", re.I)
SOMEONE = "someone"


def masked(texts: list[str]) -> list[str] | None:
    """Each text with the persons it names replaced by "someone" ("my sister's" -> "someone's"); None when none of
    them names one, so the caller keeps the rows it has."""
    out = [PERSON.sub(lambda m: SOMEONE + ("'s" if m.group("own") else ""), t) for t in texts]
    return out if out != texts else None
