"""Care for a reader in danger (pure; never switchable). Crisis language (a reader who speaks of ending their life, of
wishing to be dead or of harming themselves, `analyze.CRISIS_WORDS`: screening instruments' items) is never turned
away by the floor, and the answer carries where to find help now (CRISIS_HELP).

A reader who discloses abuse by someone close is cared for too. The New Testament household
codes tell wives, children and slaves to submit and obey; OpenBible's abuse topics are voted mostly with the codes
(Colossians 3:19 leads "domestic violence and abuse"), so a reader being hurt at home was answered "Wives, be in
subjection to your husbands" first, and "My husband hits me when he drinks" with "let not the wife depart from her
husband" (1 Corinthians 7:10) first. For such a reader the passages that tell the one being hurt to submit, to stay
or not to resist are held back below the rest of the answer: not hidden from a search, not first. The codes' words to
the husband, the father or the master ("husbands, love your wives") stay where they rank. The answer also carries
where to find help now (ABUSE_HELP), as a crisis does. Which words disclose abuse is `analyze.ABUSE` (screening instruments'
items, never a query set)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from citebible_pipeline.bible.references import parse_reference
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.models import Analysis

CRISIS_HELP = ("If you are thinking about ending your life or hurting yourself, please reach out to someone now: in the US "
               "call or text 988 (the Suicide & Crisis Lifeline); elsewhere call your local emergency number or find a "
               "crisis line at findahelpline.com. If you are in danger right now, call emergency services.")

# The household codes as New Testament scholarship delimits them (Col 3:18-4:1, Eph 5:22-6:9, 1 Pet 2:18-3:7, with the
# station codes of the Pastorals: 1 Tim 2:8-15, 6:1-2; Titus 2:1-10), their orders to wives, children and slaves only;
# not chosen from any query set or answer
SUBMIT_ORDERS = ("Colossians 3:18", "Colossians 3:20", "Colossians 3:22-25", "Ephesians 5:22-24", "Ephesians 6:1-3",
                 "Ephesians 6:5-8", "1 Peter 2:18-25", "1 Peter 3:1-6", "1 Timothy 2:11-15", "1 Timothy 6:1-2",
                 "Titus 2:3-5", "Titus 2:9-10")
# The other orders domestic-violence pastoral care names as used to keep a victim in place, where they are given to the
# one who would leave or be struck: "let not the wife depart from her husband" (1 Corinthians 7:10-11), the wife who
# divorces (Mark 10:12), and "turn the other cheek" (Matthew 5:39-41, Luke 6:29). Added after "My husband hits me when
# he drinks" (a sentence written for this check, in no query set) opened with 1 Corinthians 7:10-16; the list is those
# orders', not that answer's. The divorce sayings given to husbands keep their rank, as "husbands, love your wives"
# does (Matthew 5:31-32, 19:9, Luke 16:18; Malachi 2:13-16, which in the WEB condemns the husband who "covers his
# garment with violence"). The call to forgive is not here: a reader may be asking how to forgive.
STAY_ORDERS = ("1 Corinthians 7:10-11", "Mark 10:12", "Matthew 5:39-41", "Luke 6:29")
HELD_BACK = SUBMIT_ORDERS + STAY_ORDERS

ABUSE_HELP = ("If someone is hurting you, it is not your fault, and you do not have to stay in danger. In the US call the "
        "National Domestic Violence Hotline at 1-800-799-7233 (or text START to 88788), or RAINN at 1-800-656-4673 after "
        "sexual assault; elsewhere find a line at findahelpline.com. If you are in danger right now, call emergency "
        "services.")


@cache
def order_spans() -> tuple[tuple[int, int], ...]:
    return tuple((r.start_id, r.end_id) for r in map(parse_reference, HELD_BACK))


def held_back(c: Candidate) -> bool:
    """The candidate holds one of the orders to submit, to stay or not to resist."""
    return any(c.start <= end and start <= c.end for start, end in order_spans())


def hold_back(cands: Sequence[Candidate]) -> list[Candidate]:
    """The candidates in their order, those holding an order to submit, stay or not resist moved after all the others
    (a stable sort: each candidate's spans are tested once)."""
    return sorted(cands, key=held_back)


def help_now(analysis: Analysis) -> str | None:
    """Where to find help now: the crisis line for crisis language, the abuse lines for a disclosure, both for both. A
    reader confessing the abuse they did is not told "it is not your fault"; the orders are still held back for them."""
    said = [CRISIS_HELP] if analysis.crisis else []
    said += [ABUSE_HELP] if analysis.abuse and not analysis.abuse_by_reader else []
    return " ".join(said) or None
