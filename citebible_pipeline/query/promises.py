"""No blessing that wounds and no damnation (issue 63's principles, pure): a promise the reader's life has just
contradicted wounds that reader, though it comforts another: children as a reward (or a life's work from the womb) to
the childless or the bereaved parent, Jesus welcoming the little children to the childless (not to the bereaved,
whom it comforts), healing after a death, a family's blessing to the abandoned, and to a reader
beaten by a partner (who has broken the marriage ideal as surely as one who left); to a reader losing sight or
hearing, blindness and deafness as an image of sin, a curse or a defect, and to one whose home a flood or a storm
destroyed, the Flood and the storm as Yahweh's power or wrath (no mockery by a shared word). Both sides are read by
their words: what the reader has lost, from the sentence (`losses`); what a verse promises, from its WEB text
(`promised`). A verse that damns (the unforgivable sin, "I will vomit you out of my mouth", "better for that man if he
had not been born", "the soul who sins, he shall die") is read the same way and serves no reader but one who studies
it: not the fragile, not one who confesses; a verse that rebukes its hearer as wicked (the woe oracle, "you fools",
"you hypocrites") is the warning to the guilty, not for the one it happened to or the one who helps them, and neither
is one that blames suffering on unbelief, sin, sloth ("sin no more, so that nothing worse happens to you") or God's
chastening ("it is for discipline that you endure") or tells the hearer of their own sin without the way back ("if we
say that we have no sin, we deceive ourselves"). The lexicons were written from the principles, in general English and
the WEB's wording, before measuring, and never from a development query set (docs/decisions.md says which were written
after seeing an audit's answer); the harm stage holds such a passage back (harm.Voices)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

# not (yet) having the child hoped for, as "child" reads it; "childless" reads these and the rest of trying to conceive
_INFERTILE = (r"infertil\w*|can'?t (?:have (?:kids|children|a baby)|conceive|get pregnant)|cannot (?:have children|conceive)|"
              r"ivf|barren|childless")
# what the reader has lost, as a reader says it
LOSSES: dict[str, re.Pattern[str]] = {
    "child": re.compile(
        r"\b(?:miscarr\w*|stillb\w*|lost (?:the |our |my |her |his |their |a )?(?:baby|babies|twins|pregnancy|son|daughter|"
        r"child|boy|girl)|(?:baby|son|daughter|child|boy|girl)\b(?: \w+){0,2} (?:died|passed|is gone|killed (?:himself|herself))|"
        rf"{_INFERTILE}|no heartbeat)\b"),
    # never having had the child hoped for (the bereaved parent is "child" alone)
    "childless": re.compile(
        rf"\b(?:{_INFERTILE}|iui|cannot get pregnant|trying to (?:conceive|get pregnant)|trying for a baby|ttc|negative "
        r"(?:pregnancy )?tests?)\b"),
    "death": re.compile(
        r"\b(?:died|(?:is|are|was|were) dead|death|passed away|passed on|killed (?:himself|herself|themselves)|suicide|funeral|"
        r"buried|terminal|dying|hospice|stage (?:4|four|iv)|months to live|weeks to live|widow\w*|murdered|overdosed?|"
        r"stillb\w*|miscarr\w*)\b"),
    "abandoned": re.compile(
        r"\b(?:left me|left us|walked out|packed up|moved out|abandon\w*|divorc\w*|cheated|affair|separated|ex-?wife|"
        r"ex-?husband|widow\w*)\b"),
    "senses": re.compile(
        r"\b(?:blind(?!sid)\w*|glaucoma|macular|cataracts?|retina\w*|(?:losing|lost) (?:my|his|her|their|our) (?:sight|vision|"
        r"eyesight|hearing)|vision loss|deaf\w*|hearing loss|hard of hearing)\b"),
    # a home or a town a flood or a storm destroyed (not "flooded with" feelings)
    "disaster": re.compile(
        r"\b(?:(?:house|home|basement|apartment|town|city|farm|street|church|everything|we|it) (?:\w+ ){0,2}flooded|flood "
        r"(?:waters?|damage|insurance|took|destroyed|wiped)|the floods?\b(?! of)|floods (?:took|destroyed|came)|hurricane|"
        r"tornado|typhoon|cyclone|tsunami|storm surge|mudslide)\b"),
}
# who a disclosure of abuse names as the one who hurt the reader, when the marriage ideal is what the reader's life
# contradicts (faith-based domestic-abuse guidance: the marriage texts keep a victim in place)
PARTNER = re.compile(r"\b(?:husband|wife|boyfriend|girlfriend|partner|fianc[eé]e?|spouse|ex)\b")
# what a verse promises, in the WEB's words (lower case: matched on lowered text, several times faster than re.I):
# offspring as blessing (and a child's life's work set apart from the womb, not being knit together in it), bodily
# healing and long life, the marriage ideal; and what damns (DAMNATION, below)
PROMISES: dict[str, re.Pattern[str]] = {
    "children": re.compile(
        r"fruit of the womb is|heritage of yahweh|quiver full|joyful mother of children|(?:will|shall) conceive|"
        r"conceived,? and bore|conceived a son|give you (?:a son|children|offspring)|offspring from this woman|be fruitful|"
        r"fruitful and multiply|fruitful vine|olive shoots|(?:won't|will not) be (?:male or female )?barren|no one will "
        r"miscarry|opened her womb|separated me from my mother[’']s womb|called me from the womb|from the inside of my "
        r"mother,? he has mentioned|formed me from the womb to be|nazirite to god from (?:the|my mother[’']s) womb|holy "
        r"spirit,? even from his mother[’']s womb|before you were born,? i sanctified you"),
    "healing": re.compile(
        r"heal(?:s|ed)? (?:all )?(?:your |their |his |her )?(?:diseases|sick|sickness|infirmit\w*)|prayer of faith will heal|"
        r"long life|length of days|prolong your days|days may be long|keep him alive|not one of them is broken|"
        r"no evil (?:shall|will) happen|no plague|sickbed|bed of (?:illness|sickness)|restore health|made whole"),
    # Jesus welcoming the little children
    "little_ones": re.compile(r"allow the little children|little children were brought to him|bringing to him little children"),
    "family": re.compile(
        r"leave his father and (?:his )?mother|one flesh|what (?:therefore )?god has joined|wife of your youth|"
        r"finds a wife|your wife will be|love your wives"),
    # the unforgivable sin, spat out, better not born, no sacrifice left and no repentance possible, the sin leading to
    # death, God destroying, "depart from me" and "I never knew you", the fire and the worm, outer darkness and
    # gnashing of teeth, "the soul who sins shall die", no inheritance in the Kingdom, blotted out of the book of life,
    # the Father's forgiveness withheld ("neither will your Father forgive your trespasses")
    "damnation": re.compile(
        r"blasphem\w* against the (?:holy )?spirit|never has forgiveness|guilty of an eternal sin|(?:will|shall) not be "
        r"forgiven|vomit you out of my mouth|spit you out of my mouth|(?:better|good) for that man if he had not been born|"
        r"impossible to renew them|no (?:longer|more) (?:remains )?a sacrifice for sins|fearful expectation of judgment|"
        r"fearful thing to fall into the hands|sin (?:leading|that leads|unto) to death|god will destroy him|i never knew "
        r"you|depart from me,? you (?:cursed|who work iniquity)|their worm (?:doesn[’']t|does not) die|(?:unquenchable|"
        r"unquenched) fire|fire (?:that )?(?:will )?never be quenched|weeping and (?:the )?gnashing of teeth|outer "
        r"darkness|the soul who sins,? he (?:shall|will) die|(?:will|shall) not inherit (?:the )?(?:god[’']s )?kingdom|"
        r"blotted out of the book|not (?:found )?written in the book of life|lake of fire|neither will your father (?:in "
        r"heaven )?forgive|heavenly father will also do to you,? if you don[’']t|judgment is without mercy to him|how much "
        r"worse punishment"),
    # blame for suffering, in the principle's three causes: unbelief (faith as a grain of mustard seed, "your faith has
    # made you well", the doubter who receives nothing), sin ("sin no more, so that nothing worse happens to you"), sloth
    # ("slack in his work", a little sleep and poverty comes as a robber, no work and no bread)
    "blame": re.compile(
        r"because of (?:your|their) unbelief|faith (?:as|like) a grain of mustard seed|your faith has (?:made you well|healed "
        r"you|made you whole)|according to your faith|ask in faith,? without any doubting|(?:that man|he) (?:shouldn[’']t|"
        r"should not) think that he will receive|sin no more,? so that nothing worse|heal (?:me|my soul),? for i have "
        r"sinned|your iniquities have (?:separated|turned away)|slack in his work|a little sleep,? a little slumber|don[’']t "
        r"love sleep,? lest|not willing to work|works with a lazy hand|drunkard and the glutton (?:shall|will) become poor|"
        r"loves pleasure will be a poor|idle soul shall suffer hunger|sluggard will not plow|poverty will come as a robber"),
    # blindness and deafness as an image of sin or unbelief, as a curse or a punishment, as a defect barred from the altar
    "unseeing": re.compile(
        r"blinded (?:the minds|their eyes|his eyes)|bribe blinds|blind guides?|blind fools|blind pharisee|(?:if|can) the "
        r"blind guide the blind|seeing,? they (?:don[’']t|may) see|eyes,? (?:and|but) (?:they )?don[’']t see|ears,? (?:and|"
        r"but) (?:they )?don[’']t hear|eyes to see,? and don[’']t see|dull of hearing|make their ears heavy|blind yourselves|"
        r"watchmen are blind|who is blind,? but my servant|miserable, poor, blind|those who see may become blind|are we also "
        r"blind|if you were blind|with blindness|gropes? at noonday|as the blind gropes|grope for the wall like the blind|"
        r"walk like blind men|you will be blind|lacks these things is blind|a blind man, or a lame|offer (?:what is )?(?:the )?"
        r"blind|lame or blind|lame and blind, who are hated|"
        # darkness and the eye as an image of sin or ignorance (not the lament "he has caused me to walk in darkness",
        # nor the comfort "the people who walked in darkness have seen a great light")
        r"(?:your|the) eye is (?:evil|bad)|full of darkness|walk back and forth in darkness|the fool walks in darkness|"
        r"loved the darkness|deeds of darkness|walk in the darkness, we lie|walks in the darkness,? (?:and )?doesn[’']t know"),
    # the rebuke of the wicked and the warning to the guilty: the woe oracle said to someone (not "woe is me", "woe to
    # us": lament; not "woe to him who is alone when he falls": a call to companionship), the hearer called fool,
    # senseless, hypocrite, sluggard, scoffer, sinner, adulterer, stiff-necked, offspring of vipers, wicked servant
    "rebuke": re.compile(
        r"\bwoe to (?:you|those|him(?! who is alone)|her|them|the|that|this|a|an|whoever|he|she|anyone|every)\b|\byou "
        r"(?:fools?|foolish ones|senseless|brutish|hypocrites?|sluggard|scoffers|simple ones|sinners|double-minded|"
        r"adulterers|adulteresses|stiff-necked|rebellious|serpents|blind guides|wicked servant|evil "
        r"and slothful|unbelieving)\b|\b(?:foolish galatians|evil and adulterous generation|faithless and perverse "
        r"generation|unbelieving and perverse generation|offspring of vipers|you who forget god)\b|how long will you "
        r"sleep, sluggard"),
    # the affliction as God's discipline for a fault, and the rod (not the laments "don't discipline me in your wrath")
    "chastening": re.compile(
        r"as a man disciplines his son|happy is the man whom god corrects|chastened also with pain|blessed is the man whom "
        r"you discipline|yah has punished me severely|before i was afflicted|good for me that i have been afflicted|"
        r"despise yahweh[’']s discipline|whom (?:yahweh|the lord) loves,? he (?:corrects|disciplines)|chastening of the "
        r"(?:lord|almighty)|it is for discipline that you endure|if you are without discipline|fathers of our flesh to "
        r"chasten|disciplined us as seemed good|all chastening seems|i reprove and chasten|disciplined by the lord|spares "
        r"the rod|rod of (?:discipline|correction)|punish him with the rod"),
    # sin as the hearer's state, without the way back in the same verse (not Psalm 51, not 1 John 1:9)
    "conviction": re.compile(
        r"if we say that we (?:have no sin|haven[’']t sinned)|all have sinned,? and fall short|there is no one righteous|"
        r"everyone who sins also commits lawlessness|whoever sins hasn[’']t seen him|he who sins is of the devil|wages of "
        r"sin is death|deceitful above all things|righteousness is like a polluted garment|sin will find you out|stumbles "
        r"in one point,? he has become guilty of all"),
    # the flood and the storm as Yahweh's power or wrath, or as the reward of a fault: Noah's flood, the floods lifting up
    # their voice, Yahweh enthroned at the Flood, the flood as judgement, the floods that beat on the house on the rock or
    # the sand, Yahweh's storm his wrath (not the laments that use the flood as an image of distress, the refuge from the
    # storm, nor the storm stilled)
    "deluge": re.compile(
        r"flood of waters|floodwaters|waters flooded|waters of the flood|become a flood|(?:after|before) the flood|the flood "
        r"(?:came|was forty)|brought a flood|enthroned at the flood|floods have lifted up|floods lift up|established it on "
        r"the floods|overflowing flood|mighty flood waters|end will be with a flood|floods of waters cover|the floods came|"
        r"a flood arose|stream broke|house on the sand|beat (?:on|against) that house|the waters (?:increased|rose|"
        r"subsided|receded|were abated|were dried)|"
        r"all flesh died|every living thing was destroyed|noah (?:went into|entered into) the ship|yahweh[’']s storm,? his "
        r"wrath|whirling storm|sweeping storm|stormy wind in my wrath|destroying storm|his way in the whirlwind|terrify them "
        r"with your storm|pursue them with your tempest|stormy wind,? fulfilling his word|raises the stormy wind|calamity "
        r"overtakes you like a storm|reap the whirlwind|when the whirlwind passes|because of me this great storm"),
}
DAMNATION = "damnation"  # the kind held back from every reader but a seeker (harm.Voices.condemning)
# the warnings to the guilty: the kinds held back from a sufferer and a helper (harm.Voices.condemning)
WARNINGS = frozenset({"rebuke", "blame", "chastening", "conviction"})
# a loss -> the promises it contradicts
CONTRADICTS: dict[str, tuple[str, ...]] = {"child": ("children", "healing"), "death": ("healing",),
                                            "abandoned": ("family",), "partner": ("family",),
                                            "senses": ("unseeing",), "disaster": ("deluge",), "childless": ("little_ones",)}


def losses(text: str, abused: bool = False) -> list[str]:
    """What the sentence says the reader (or the one they love) has lost, in LOSSES' order; "partner" last, when the
    sentence discloses abuse (`abused`: Analysis.abuse) and names a partner."""
    low = text.lower().replace("\u2019", "'")
    lost = [kind for kind, words in LOSSES.items() if words.search(low)]
    return lost + ["partner"] if abused and PARTNER.search(low) else lost


def promised(texts: Sequence[str | None]) -> dict[str, np.ndarray]:
    """Per promise kind, whether each verse text makes it (bool, aligned with `texts`)."""
    low = [(text or "").lower() for text in texts]
    return {kind: np.array([words.search(text) is not None for text in low], bool) for kind, words in PROMISES.items()}


def contradicted(lost: Sequence[str]) -> set[str]:
    """The promise kinds a reader with these losses is not shown first."""
    return {kind for loss in lost for kind in CONTRADICTS.get(loss, ())}
