"""Care for a reader who discloses abuse by someone close (pure; SearchOptions.abuse_care). The New Testament household
codes tell wives, children and slaves to submit and obey; OpenBible's abuse topics are voted mostly with the codes
(Colossians 3:19 leads "domestic violence and abuse"), so a reader being hurt at home was answered "Wives, be in
subjection to your husbands" first. For such a reader the codes' orders to the one who must submit are held back
below the rest of the answer: not hidden from a search, not first. Their words to the husband, the father or the
master ("husbands, love your wives", "fathers, don't provoke your children") stay where they rank. Which words disclose
abuse is `analyze.ABUSE` (screening instruments' items, never a query set)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from citebible_pipeline.bible.references import parse_reference
from citebible_pipeline.query.fuse import Candidate

# The household codes as New Testament scholarship delimits them (Col 3:18-4:1, Eph 5:22-6:9, 1 Pet 2:18-3:7, with the
# station codes of the Pastorals: 1 Tim 2:8-15, 6:1-2; Titus 2:1-10), their orders to wives, children and slaves only;
# not chosen from any query set or answer
SUBMIT_ORDERS = ("Colossians 3:18", "Colossians 3:20", "Colossians 3:22-25", "Ephesians 5:22-24", "Ephesians 6:1-3",
                 "Ephesians 6:5-8", "1 Peter 2:18-25", "1 Peter 3:1-6", "1 Timothy 2:11-15", "1 Timothy 6:1-2",
                 "Titus 2:3-5", "Titus 2:9-10")


@cache
def order_spans() -> tuple[tuple[int, int], ...]:
    return tuple((r.start_id, r.end_id) for r in map(parse_reference, SUBMIT_ORDERS))


def orders_submission(c: Candidate) -> bool:
    return any(c.start <= end and start <= c.end for start, end in order_spans())


def hold_back(cands: Sequence[Candidate]) -> list[Candidate]:
    """The candidates in their order, those holding an order to submit moved after all the others (a stable sort:
    each candidate's spans are tested once)."""
    return sorted(cands, key=orders_submission)
