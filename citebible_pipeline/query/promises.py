"""No blessing that wounds (issue 63's principle, pure): a promise the reader's life has just contradicted wounds that
reader, though it comforts another: children as a reward to the childless or the bereaved parent, healing after a
death, a family's blessing to the abandoned. Both sides are read by their words: what the reader has lost, from the
sentence (`losses`); what a verse promises, from its WEB text (`promised`). The lexicons were written from the
principle, in general English and the WEB's wording, before measuring, and never from a query set; the harm stage
holds back, for a sufferer or a helper, a passage holding a verse that promises what the reader lost (harm.Voices)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

# what the reader has lost, as a reader says it
LOSSES: dict[str, re.Pattern[str]] = {
    "child": re.compile(
        r"\b(?:miscarr\w*|stillb\w*|lost (?:the |our |my |her |his |their |a )?(?:baby|babies|twins|pregnancy|son|daughter|"
        r"child|boy|girl)|(?:baby|son|daughter|child|boy|girl)\b(?: \w+){0,2} (?:died|passed|is gone|killed (?:himself|herself))|"
        r"infertil\w*|can'?t (?:have (?:kids|children|a baby)|conceive|get pregnant)|cannot (?:have children|conceive)|ivf|"
        r"barren|childless|no heartbeat)\b"),
    "death": re.compile(
        r"\b(?:died|(?:is|are|was|were) dead|death|passed away|passed on|killed (?:himself|herself|themselves)|suicide|funeral|"
        r"buried|terminal|dying|hospice|stage (?:4|four|iv)|months to live|weeks to live|widow\w*|murdered|overdosed?|"
        r"stillb\w*|miscarr\w*)\b"),
    "abandoned": re.compile(
        r"\b(?:left me|left us|walked out|packed up|moved out|abandon\w*|divorc\w*|cheated|affair|separated|ex-?wife|"
        r"ex-?husband|widow\w*)\b"),
}
# what a verse promises, in the WEB's words (lower case: matched on lowered text, several times faster than re.I):
# offspring as blessing, bodily healing and long life, the marriage ideal
PROMISES: dict[str, re.Pattern[str]] = {
    "children": re.compile(
        r"fruit of the womb is|heritage of yahweh|quiver full|joyful mother of children|(?:will|shall) conceive|"
        r"conceived,? and bore|conceived a son|give you (?:a son|children|offspring)|offspring from this woman|be fruitful|"
        r"fruitful and multiply|fruitful vine|olive shoots|(?:won't|will not) be (?:male or female )?barren|no one will "
        r"miscarry|opened her womb"),
    "healing": re.compile(
        r"heal(?:s|ed)? (?:all )?(?:your |their |his |her )?(?:diseases|sick|sickness|infirmit\w*)|prayer of faith will heal|"
        r"long life|length of days|prolong your days|days may be long|keep him alive|not one of them is broken|"
        r"no evil (?:shall|will) happen|no plague|sickbed|bed of (?:illness|sickness)|restore health|made whole"),
    "family": re.compile(
        r"leave his father and (?:his )?mother|one flesh|what (?:therefore )?god has joined|wife of your youth|"
        r"finds a wife|your wife will be|love your wives"),
}
# a loss -> the promises it contradicts
CONTRADICTS: dict[str, tuple[str, ...]] = {"child": ("children", "healing"), "death": ("healing",),
                                            "abandoned": ("family",)}


def losses(text: str) -> list[str]:
    """What the sentence says the reader (or the one they love) has lost, in LOSSES' order."""
    low = text.lower().replace("\u2019", "'")
    return [kind for kind, words in LOSSES.items() if words.search(low)]


def promised(texts: Sequence[str | None]) -> dict[str, np.ndarray]:
    """Per promise kind, whether each verse text makes it (bool, aligned with `texts`)."""
    low = [(text or "").lower() for text in texts]
    return {kind: np.array([words.search(text) is not None for text in low], bool) for kind, words in PROMISES.items()}


def contradicted(lost: Sequence[str]) -> set[str]:
    """The promise kinds a reader with these losses is not shown first."""
    return {kind for loss in lost for kind in CONTRADICTS.get(loss, ())}
