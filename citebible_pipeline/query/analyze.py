"""Stage 1, analyze (pure): validate the text, find explicit references, read pastoral intent.

Pastoral intent is a small lexical classifier, documented here so its mistakes can be traced:
  score = 0.4 * (first-person voice) + 0.3 * min(2, distress words) + 0.2 * (a plea: help, why, can't)
  pastoral when score >= 0.6, i.e. a first-person sentence with one distress word ("I'm terrified about
  my surgery"), or two distress words without "I" ("grief and anger after a death").
Distress words are matched on word prefixes ("terrif" catches terrified/terrifying; never a word of another family,
"Sadducees" is not "sad": OTHER_FAMILIES), from general
categories of pastoral care: fear, sorrow, loss, illness, guilt, shame, anger, loneliness, despair,
exhaustion, addiction, broken relationships, abuse, money trouble, and crisis and trauma as screening instruments word
them (PHQ-9, C-SSRS, ASQ, PCL-5, the Beck Scale for Suicide Ideation, the Interpersonal Needs Questionnaire's
burdensomeness with the AFSP's warning signs). A study query ("Paul's teaching on
grace") has no first person and at most one such word, so it stays a study query.
"""

from __future__ import annotations

import re
import unicodedata

from citebible_pipeline.bible.references import (
    ReferenceError,
    find_references,
    looks_like_reference,
    parse_reference,
)
from citebible_pipeline.query.models import MAX_QUERY_CHARS, Analysis, QueryValidationError
from citebible_pipeline.query.promises import losses
from citebible_pipeline.query.screening import ABUSE, CRISIS_PHRASES, CRISIS_WORDS, DISCLOSED, NO_WISH_TO_LIVE, SELF_HARM
from citebible_pipeline.query.text import FIRST_PERSON, WORD
from citebible_pipeline.query.tuning import TUNING

# A wrong the reader says they did (rule P, README "Thirtieth step"): "I" directly before a verb of wrongdoing from the
# general examinations of conscience (the Decalogue's lying, stealing, adultery, killing; harm done to a person: hit,
# hurt, yelled at, abandoned, and the abuse screens' blows and forced sex as the reader's own act), never from a query set. A sentence's vector cannot tell who did it to whom: "I cheated on
# my wife" sits beside "my partner cheated on me", so routing must be told (query/perspective.py). Passive and negated
# forms ("I was cheated", "I never lied") do not match; harm verbs, "killed" and "slept with" need a person as their
# object ("I hurt my back", "I killed it at work", "I slept with the lights on" confess nothing), and "lied down" is
# lying down.
_PEOPLE = (r"(?:him|her|them|someone|somebody|people|others|everyone|another (?:man|woman|person)|(?:my|our|a|the|his|"
           r"their) (?:\w+ )?(?:wife|husband|spouse|partner|girlfriend|boyfriend|fianc\w*|kids?|children|child|sons?|"
           r"daughters?|baby|mom|mother|dad|father|parents?|brothers?|sisters?|family|friends?|boss|coworkers?|"
           r"colleagues?|employer|neighbou?r|roommate|man|woman|person))")
CONFESSION = re.compile(
    r"\bi(?:'ve| have| had|'d)?(?: (?:just|already|recently|once|also|really|secretly|repeatedly|again|even|then))? "
    r"(?:lied(?! down)|stole|cheated|betrayed|gossip(?:ed|ing)|slandered|murdered|embezzled|"
    r"(?:been |was )(?:cheating|lying|stealing|gossiping|unfaithful)|had an (?:affair|abortion)|committed adultery|"
    r"(?:hit|hurt|killed|abused|assaulted|yelled at|screamed at|abandoned|neglected|mistreated|bullied|manipulated|"
    r"shoved|pushed|slapped|punched|kicked|choked|strangled|beat|raped|molested|threatened|"
    r"cheated on|slept with) " + _PEOPLE + r"|broke (?:my|a) (?:promise|vow))\b")
# Anger whose object is God (rule L, README "Thirty-second step"; query/perspective.py): a complaint to God, the Bible's
# lament, not anger at people nor God's wrath. A word of the anger family (the anger category below) within three words
# before "at/with/toward/against God", or "I hate / blame / resent God" (the lament need's own cue: "I blame God for what
# happened"); "God's anger" and "angry with my husband and God" are not it (God must be the preposition's object).
_GOD = r"(?:god|the lord|jesus|christ)(?!'s|\w)"
COMPLAINT = re.compile(
    r"\b(?:(?:angry|anger|angered|mad|furious|fury|rage|raging|enraged|livid|resentful|resentment|bitter|bitterness|hate|"
    r"hatred|upset|frustrated|frustration|pissed(?: off)?)(?: \w+){0,3}? (?:at|with|toward|towards|against) "
    r"|\bi (?:\w+ )?(?:hate|blame|resent) )(?:my )?" + _GOD)
DISTRESS = (
    "afraid", "scared", "terrif", "fright", "fear", "panic", "anxi", "worr", "nervous", "dread",
    "sad", "sorrow", "griev", "grief", "mourn", "cry", "crying", "tears", "weep", "heartbr", "broken", "hurt", "pain",
    "dying", "died", "dead", "death", "funeral", "passed away", "lost", "loss", "miscarr",
    "sick", "ill", "cancer", "diagnos", "surgery", "hospital", "disease", "dementia", "chemo",
    "guilt", "guilty", "ashamed", "shame", "regret", "forgive",
    "angry", "anger", "furious", "rage", "hate", "bitter", "revenge", "resent",
    "lonely", "alone", "abandon", "rejected", "nobody", "forsaken", "far away",
    "depress", "hopeless", "despair", "worthless", "useless", "failure", "suicid", "give up", "empty",
    "exhaust", "tired", "weary", "burned out", "burnt out", "burnout", "burn out", "fatigu", "drained", "overwhelm",
    "stress", "worn out", "do this anymore", "addict", "drinking", "drunk", "relapse", "porn",
    "betray", "cheated", "divorce", "abuse", "jealous", "envy", "doubt", "struggl", "suffer",
    "debt", "bills", "fired", "unemploy", "desperate", "pregnan",
    # the situations where a topic index wounds (issue 63's categories): disability, pregnancy loss, poverty, prison,
    # disaster and violence, in their everyday words (never from a query set)
    "blind", "deaf", "paralyz", "wheelchair", "amputat", "alzheimer", "dialysis", "stillb", "infertil", "childless",
    "homeless", "evict", "hungry", "starv", "bankrupt", "foreclos", "laid off", "prison", "jail", "incarcerat", "arrested",
    "convicted", "juvie", "locked up", "parole", "detention", "deport", "flood", "hurricane", "tornado", "wildfire",
    "earthquake", "molest", "trafficked", "stalker", "stalking", "stalked",
    # crisis and trauma, from published screening instruments' items (PHQ-9 item 9, the C-SSRS screener, NIMH's ASQ;
    # the PCL-5's trauma symptoms), not from any query set; CRISIS words their self-harm items in every person
    "not wake up", "nightmare", "flashback", "trauma", "ptsd", *SELF_HARM, *ABUSE,
)
PLEA = ("help", "why", "can't", "cant", "cannot", "can not", "how do i", "don't know how", "please")
# Rule S' (README "Thirty-first step"): a prefix reads its own word's family, never a word of another family. These
# are the words a prefix met in the WEB text, the OpenBible topic names and the theme names that are not of its family,
# read one by one, with their common English relatives (never a query set): Sadducees and saddles are not "sad", paint
# is not "pain", "pleased" is no plea. A bittern (a heron) is a whole word: as a prefix it would hide bitterness.
OTHER_FAMILIES = ("sadduc", "saddl", "crystal", "crypt", "paint", "dreadlock", "deadline", "sickle", "illeg", "illumin",
                  "illus", "illyric", "illinois", "illiter", "illicit", "hospitalit", "chemosh", "pleased", "pleases",
                  "pleasing")
OTHER_WORDS = frozenset({"bittern", "bitterns"})
# Who is speaking (Analysis.stance, issue 63), from the general shapes of questions, never a query set: the helper asks
# how to help or what to say to someone; the seeker what the Bible says or whether a thing is a sin (unless asked in the
# first person, of the reader's own life); the doer did the wrong; any other first-person, pastoral, crisis or abuse
# sentence is the sufferer's. A diary's dropped subject is the first person: a past tense and its object ("lost the baby
# at nine weeks", the common irregular verbs too: "drank the whole bottle"; not the verbs that report another's story,
# saw and heard), "got" and a participle ("got fired"), "been thinking about it", and the openings a diary uses and a
# topic does not ("feeling so alone", "thinking about", "going through", "struggling with", "doing 15 years"), and it
# confesses as "I" would ("stole the rent money", "had an affair" are the doer's). A helper's question may be asked
# with no "I" ("how to support a friend after an attempt"). The instruments' phrases of a life at risk
# (screening.CRISIS_PHRASES, NO_WISH_TO_LIVE) read as crisis with no "I" where they open their clause, their subject
# dropped ("no reason to keep living since she left"; not "Jonah did not want to live anymore"). A statement of distress
# is the writer's own, "I" or not; a topic's short name and an index heading (HEADING) stay a study (decisions, 18th).
_FILLER = frozenset({"just", "honestly", "so", "really", "still", "and", "but", "been", "tbh", "lately"})
DROPPED_SUBJECT = re.compile(r"(?:just |finally |still |recently |basically )?(?:(?:[a-z]{3,}ed|lost|got|had|left|broke|"
                             r"fell|found|took|gave|kept|went|made|spent|blew|ran|quit|told|felt|hit|sold|owe|owes|"
                             r"wrote|stole|drank|ate|said|thought|bought|brought|caught|fought|sent|paid|put|"
                             r"hurt|came|began|drove|froze|chose|spoke|woke|threw|knew|forgot|hid|slept|met|held|sat|won|"
                             r"shot|did|bet)\b"
                             r" (?:(?:the|a|an|my|our|his|her|their|its|all|everything|it|him|them|away|again|up|out)\b|\$?\d)"
                             r"|got [a-z]{3,}ed\b|(?:doing|serving) \d|(?:feeling|thinking about|going through|struggling with)\b"
                             r"|been (?:thinking|feeling|trying|struggling|cutting|drinking|using|crying|praying)\b)")
# A diary's time words anchor a statement in the writer's own days ("long sleeves again", "cried in the car today"): the
# first person, as a dropped subject is; never in a question (the seeker's), nor in a topic's name of fewer than
STATEMENT_WORDS = 4  # distinct words ("living for today"); the stance's statement of distress has the same bound
DIARY_TIME = re.compile(r"\b(?:tonight|today|yesterday|this (?:morning|week|month|year)|last (?:night|week|month)|"
                        r"(?<!born )(?<!come )(?<!rise )(?<!rose )again|anymore|lately|every (?:day|night|week|morning|"
                        r"sunday))\b")
# A request for scripture for a situation or a person ("verses for when the one who should love you scares you") asks
# comfort for the reader's own life or one they love: the first person, as a diary is; "verses about grace" is a study.
SCRIPTURE_FOR = re.compile(r"\b(?:(?:bible )?verses?|scriptures?|passages?|prayers?)\s+(?:for (?:when|a|an|my|our|someone|"
                           r"somebody|people|those|the one|anyone|me|us)\b|to (?:read|pray|hold onto|cling to) when\b)")
HEADING = re.compile(r"[a-z][a-z' ,()-]*:")  # a topic index's heading: a colon after its first words, as in Nave's
QUESTION = re.compile(r"\?|^\W*(?:what|why|how|when|where|who|whom|whose|which|is|are|am|do|does|did|can|could|should|"
                      r"would|will|may|might|must|was|were|has|have|had|shall)\b")
HELPER = re.compile(r"\bhow (?:(?:do|can|should|could|would) (?:i|we) |to )(?:best |even |possibly |really )?(?:help|"
                    r"comfort|support|encourage|care for|be there for|reach|talk to|speak to|minister to|pray for|love|"
                    r"respond to)\b|\bwhat (?:do|can|should|"
                    r"could) (?:i|we) (?:even |possibly |really )?(?:(?:say|do|tell|write)\b.*\b(?:to|for) |(?:say|tell|write) )"
                    r"(?:my|our|a|her|him|them|someone)\b|\badvice (?:for|on) (?:helping|supporting|comforting)\b|"
                    r"\b(?:verses?|scriptures?|passages?) (?:do |can |should |could )?(?:i|we) (?:send|give|share)\b|"
                    # asked without "I": what to say to someone, how does one (a pastor, a church) help someone
                    r"\bwhat (?:not )?(?:to|(?:do|should|can|would) you) (?:\w+ )?(?:say|write|tell|do|pray|read)\b.*\b(?:to|for|"
                    r"at|with) (?:a|an|my|our|her|him|them|someone|somebody|the|this|your|people)\b|\bhow (?:do|can|should|"
                    r"could|would) (?:you|(?:a|an|the|our|my|your) \w+) (?:best |even |really )?(?:help|comfort|support|"
                    r"encourage|care for|minister to|respond to|talk to|reach)\b")
STUDY = re.compile(r"\b(?:what|where|how|why) (?:does|did|do|is|was) (?:the )?(?:bible|scriptures?|jesus|paul|god|the lord|"
                   r"the church|christianity)\b(?: \w+){0,2} (?:say|says|teach|teaches|taught|think|mean|means|command)\b|"
                   r"\bwhat (?:paul|jesus|the bible|scripture|god) (?:taught|teaches|says|said|meant)\b|\bis it (?:a )?(?:sin|"
                   r"wrong|biblical|unforgivable)\b|\b(?:does|did) (?:the bible|scripture|god|jesus) (?:say|allow|forbid|condemn|"
                   r"teach)\b|\baccording to (?:the bible|scripture)\b|\b(?:verses?|passages?|scriptures?) (?:about|on)\b|"
                   r"\bexplain\b|\bmeaning of\b")
# Hostile query text: a database statement, not words to a reader: a statement's keyword pair and its object where a
# statement ends or goes on (";", "--", "(", WHERE, VALUES), UPDATE ... SET or UNION SELECT, beside ";", "--" or "/*"
# (OWASP's testing guide's injection examples). A reader's "delete from my phone" or "I'm tired; help" is not one.
_STATEMENT = re.compile(r"\b(?:(?P<pair>drop\s+(?:table|database|schema)|delete\s+from|insert\s+into|truncate\s+table"
                        r"|alter\s+table)\s+[\w.\"`\[\]]+\s*(?:;|--|/\*|\(|$|where\b|values\b)"
                        r"|(?P<update>update\s+\w+\s+set)\b|(?P<union>union\s+(?:all\s+)?select)\b)", re.I)
_STATEMENT_MARK = re.compile(r";|--|/\*")
_OT = re.compile(r"\b(old testament|hebrew bible|torah|the prophets)\b", re.I)
_NT = re.compile(r"\b(new testament|gospels?|epistles?|apostle paul|paul's letters)\b", re.I)


def validate(text: object) -> str:
    """The query as searched: NFC, whitespace collapsed. Raises QueryValidationError saying why not."""
    if not isinstance(text, str):
        raise QueryValidationError(f"query must be text, got {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS * 4:
        raise QueryValidationError(f"query is {len(text):,} characters; the limit is {MAX_QUERY_CHARS}")
    bad = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cs", "Co") and c not in "\t\n\r"})
    if bad:
        raise QueryValidationError(f"query contains control characters ({', '.join(bad[:5])}); remove them")
    clean = " ".join(unicodedata.normalize("NFC", text).split())
    if not clean:
        raise QueryValidationError("query is empty: type a question, a need or a reference such as 'Psalm 23'")
    if len(clean) > MAX_QUERY_CHARS:
        raise QueryValidationError(f"query is {len(clean):,} characters; the limit is {MAX_QUERY_CHARS}")
    return clean


def _has(text: str, words: set[str], stem: str) -> bool:
    if not stem.isalpha():  # a phrase, an apostrophe or a hyphen: matched as written
        return stem in text
    return any(w.startswith(stem) and not (w.startswith(OTHER_FAMILIES) or w in OTHER_WORDS) for w in words)


def _read(text: str) -> tuple[float, bool, bool, bool, str, bool, bool]:
    """The pastoral score, whether the sentence is in the first person, whether it holds crisis language, whether it
    names abuse, who is speaking, whether its anger is at God and whether a seeker asks of abuse or suicide (one
    reading of its words for all seven)."""
    low = text.lower().replace("\u2019", "'")
    words = set(WORD.findall(low))
    dropped = DROPPED_SUBJECT.match(low) is not None
    at_risk = NO_WISH_TO_LIVE.search(low) is not None or CRISIS_PHRASES.search(low) is not None
    unsaid = at_risk and _unsaid_subject(low)  # a phrase of a life at risk with its subject dropped: the writer's own
    # the time words outside a phrase of a life at risk ("Jonah did not want to live anymore" names who); not a topic's name
    question = QUESTION.search(low) is not None
    diary = len(words) >= STATEMENT_WORDS and not question and DIARY_TIME.search(
        NO_WISH_TO_LIVE.sub(" ", CRISIS_PHRASES.sub(" ", low))) is not None
    first = bool(words & FIRST_PERSON) or dropped or unsaid or diary or SCRIPTURE_FOR.search(low) is not None
    said = f"i {low}" if dropped else low  # a diary's dropped subject is "I", for the confession verbs too
    confession = CONFESSION.search(said)
    distress = sum(1 for stem in DISTRESS if _has(low, words, stem)) + at_risk + (DISCLOSED.search(low) is not None)
    plea = any(_has(low, words, p) for p in PLEA)
    t = TUNING
    score = round(min(1.0, t.first_person_weight * first + t.distress_weight * min(2, distress) + t.plea_weight * plea), 3)
    names_abuse = _names_abuse(low, words)
    abuse = first and names_abuse
    # the reader's own act ("I abused my wife") discloses no abuse done to them when the rest of the sentence names none
    by_reader = abuse and confession is not None and not _names_abuse(
        rest := f"{said[:confession.start()]} {said[confession.end():]}", set(WORD.findall(rest)))
    helper = HELPER.search(low) is not None
    # oneself or one's own, or the one a helper asks about ("how to support a friend after an attempt")
    crisis_words = any(_has(low, words, stem) for stem in CRISIS_WORDS)
    crisis = (first or helper) and (at_risk or crisis_words)
    if confession is not None and (by_reader or not abuse):  # a reader who discloses abuse is not its doer
        stance = "doer"
    elif helper:
        stance = "helper"
    elif ((STUDY.search(low) and not first) or not (first or score >= t.pastoral_threshold or crisis or abuse)) and (
            question or not distress or len(words) < STATEMENT_WORDS or HEADING.match(low)):
        stance = "seeker"
    else:
        stance = "sufferer"
    # a question that names abuse or suicide is often asked by the one it happened to or one who loves them (issue 63's
    # principles: no condemnation to the fragile, help the helper): Analysis.harm_stance
    asks = stance == "seeker" and (names_abuse or crisis_words)
    return score, first, crisis, abuse, stance, COMPLAINT.search(low) is not None, asks


def _unsaid_subject(low: str) -> bool:
    """A phrase of a life at risk that opens its clause, its subject dropped as a diary drops it ("no reason to keep
    living since she left", "tired of existing"): the writer's own. "Jonah did not want to live anymore" names who."""
    for pattern in (CRISIS_PHRASES, NO_WISH_TO_LIVE):
        for m in pattern.finditer(low):
            if set(re.split(r"[.!?,;:]", low[:m.start()])[-1].split()) <= _FILLER:
                return True
    return False


def _names_abuse(low: str, words: set[str]) -> bool:
    return "abused" in words or DISCLOSED.search(low) is not None or any(_has(low, words, stem) for stem in ABUSE)


def pastoral_score(text: str) -> float:
    return _read(text)[0]


def testament_hint(text: str) -> str | None:
    ot, nt = bool(_OT.search(text)), bool(_NT.search(text))
    return "OT" if ot and not nt else "NT" if nt and not ot else None


def analyze(text: str) -> Analysis:
    """`text` must already be validated. A whole-query reference becomes a lookup (query_type
    'reference'); a reference-shaped query naming a real book but an impossible verse carries
    `reference_error` and is never searched; a database statement (query_type 'statement') carries `refused` and is
    never searched either."""
    statement = _STATEMENT.search(text) if _STATEMENT_MARK.search(text) else None
    if statement:
        words = " ".join(next(g for g in statement.groups() if g).upper().split())
        return Analysis(query_type="statement", pastoral=False, pastoral_score=0.0, refused=f"this reads as a database "
                        f"statement ({words}), not a question, a need or a reference: nothing was searched")
    if looks_like_reference(text):
        try:
            ref = parse_reference(text)
        except ReferenceError as exc:
            return Analysis(query_type="reference", pastoral=False, pastoral_score=0.0, reference_error=str(exc))
        return Analysis(query_type="reference", pastoral=False, pastoral_score=0.0, references=[ref.format()])
    score, first, crisis, abuse, stance, complains, asks = _read(text)
    refs = [r.format() for r in find_references(text)]
    return Analysis(query_type="search", pastoral=score >= TUNING.pastoral_threshold, pastoral_score=score,
                    first_person=first, stance=stance, crisis=crisis, abuse=abuse, asks_of_wound=asks, complains=complains,
                    losses=losses(text, abuse), testament=testament_hint(text), references=refs)


def one_more_distress(analysis: Analysis) -> Analysis:
    """The analysis with one more distress word counted (a need stated in words the lexicon lacks)."""
    score = round(min(1.0, analysis.pastoral_score + TUNING.distress_weight), 3)
    return analysis.model_copy(update={"pastoral": score >= TUNING.pastoral_threshold, "pastoral_score": score})
