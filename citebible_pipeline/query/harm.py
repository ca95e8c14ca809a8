"""Stage 10, do no harm (pure): the human sources are topic indexes (an entry for a crime lists the law against it and
the warnings to the guilty), so a passage that matches the topic can still wound the reader. Who is speaking
(Analysis.stance) decides which functions (passage_voice) may not show first: for a sufferer or a helper judgement,
violence, rebuke and law, and no more than a few orders (an order to confess, reconcile or stay wounds a victim; "come
to me" serves, and the voices cannot tell them apart); for a doer judgement and violence; a seeker is shown everything
(a question that names abuse or suicide is answered as a sufferer's: Analysis.harm_stance). Held back too: a passage a
need near the sentence lists as wounding (pastoral.yaml `avoid:`), one that wounded a judged reader sentence near it
(themes/judged_wounds.csv), to a sufferer or a helper one promising what the sentence says was lost
(query/promises.py: children to a bereaved parent, healing after a death, blindness as an image of sin to one going
blind, the Flood as Yahweh's power to one a flood made homeless) or rebuking its hearer as wicked ("woe to you", "you
fools"), blaming suffering on unbelief, sin, sloth or God's chastening or telling them of their own sin, to anyone but
a seeker one that damns (the unforgivable sin, "the soul who sins shall die"), and one reached only through the
sentence's surface words (its own lists, and the topics its words name) that fits no other routed theme (its blind or
flood in another sense), and, to a sufferer or a helper to whom routing gives a pastoral need, one no vote for those
needs names (`unvoted`). Held back is moved below every other candidate, in order, never removed; a passage over
gold.metrics.LONG_PASSAGE verses is read by its pin, the verse nearest the sentence, and shows first the nearest verse
near it that does not wound or order (Voices.pin_for)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from citebible_pipeline.bible.canon import span_verses
from citebible_pipeline.gold.metrics import LONG_PASSAGE, shown
from citebible_pipeline.query.display import terms
from citebible_pipeline.query.fuse import Candidate
from citebible_pipeline.query.promises import DAMNATION, WARNINGS, contradicted
from citebible_pipeline.query.route import Routed, ThemeIndex
from citebible_pipeline.query.spans import flatten, runs_touching, sorted_runs

SURFACE = ("dense", "fulltext")  # the original sentence's own lists: its words, not its need
# a verse wounds when its wounding functions' summed probability reaches this: 0.5 (more likely than not) was the rule
# stated before measuring; 0.4, probed with its rule written first, kept every development hit (dev_harm +1) and lowered
# the changed audit answers judged harmful by both 12 -> 10 of 27 (decisions, fourteenth increment)
LIKELY = 0.4
TOP = 5  # the answer the issue judges: its top 5
HURT = ("sufferer", "helper")  # the readers held to the whole rule: what wounds the one it happened to, orders, promises


@dataclass(frozen=True)
class Voices:
    """Per verse (sorted ids): whether it wounds a sufferer or helper (`harsh`: voice.model.HARSH) and a doer (`grave`:
    voice.model.GRAVE), read from a reader's hand labels where the verse was labelled, else from the function model's
    probabilities (>= LIKELY) or a harsh function the harsh model names. A seeker is never asked (`stage`)."""

    ids: np.ndarray
    harsh: np.ndarray  # bool
    grave: np.ndarray  # bool
    directive: np.ndarray | None = None  # bool: an order (voice.model.DIRECTIVE), by the hand label else the voice
    promises: dict[str, np.ndarray] = field(default_factory=dict)  # promise kind -> bool per verse (query.promises)

    def _within(self, flags: np.ndarray, start: int, end: int) -> np.ndarray:
        return flags[np.searchsorted(self.ids, start):np.searchsorted(self.ids, end, side="right")]

    def _wounds(self, stance: str) -> np.ndarray:
        """Per verse, whether it wounds this reader: a doer is spared the grave functions, anyone else the harsh."""
        return self.grave if stance == "doer" else self.harsh

    def wounding(self, stance: str, start: int, end: int) -> np.ndarray:
        return self._within(self._wounds(stance), start, end)

    def pin_for(self, stance: str, margin: float) -> Callable[[np.ndarray, np.ndarray], int]:
        """(a passage's verse ids, their cosines to the query) -> the verse it shows this reader first (PoolTables.pins):
        the nearest, or the nearest that neither wounds (`wounding`) nor, to a sufferer or a helper, orders, when that
        one is within `margin` of it: what the passage is judged by stays the nearest verse (`stage`'s pins)."""
        orders = self.directive if self.directive is not None and stance in HURT else False
        flags = self._wounds(stance) | orders

        def choose(ids: np.ndarray, sims: np.ndarray) -> int:
            best = int(np.argmax(sims))
            if stance == "seeker" or not len(self.ids):
                return best
            at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
            fit = np.where((self.ids[at] == ids) & flags[at], -np.inf, sims)
            good = int(np.argmax(fit))
            return good if fit[good] >= sims[best] - margin else best
        return choose

    def broken_promises(self, stance: str, lost: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """The verses promising a sufferer or a helper what the sentence says was lost (query.promises), as avoided spans:
        no blessing the reader's life has just contradicted."""
        return self._spans(contradicted(lost) if stance in HURT else set())

    def condemning(self, stance: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """The verses that damn (query.promises), as avoided spans for every reader but a seeker (no condemnation to the
        fragile, and the way back, not damnation, to one who confesses), and those that rebuke their hearer as wicked,
        blame suffering on unbelief, sin, sloth or God's chastening or tell the hearer of their own sin, for a sufferer
        or a helper (the warnings to the guilty are not for the one it happened to, nor the blame for the one who
        suffers)."""
        return self._spans(({DAMNATION} if stance != "seeker" else set()) | (WARNINGS if stance in HURT else set()))

    def _spans(self, kinds: set[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """The verses whose words make any of these kinds (of those read at start-up), as one avoided span list."""
        read = sorted(kinds & self.promises.keys())
        if not read:
            return []
        hit = self.ids[np.logical_or.reduce([self.promises[k] for k in read])]
        return [(hit, hit)]

    def orders(self, start: int, end: int, pin: int | None) -> bool:
        """What the reader reads of the passage (gold.metrics.shown) is an order: half its verses are."""
        span = shown(start, end, pin)
        if self.directive is None or span is None:
            return False
        here = self._within(self.directive, *span)
        return bool(here.size) and here.mean() >= 0.5


def wounds(c: Candidate, stance: str, voices: Voices, avoid: Sequence[tuple[np.ndarray, np.ndarray]],
           pin: int | None) -> bool:
    """The candidate shows a wounding passage: what the reader is judged to read of it (gold.metrics.shown: a long one
    by its pinned verse alone) holds an avoided verse, or half its verses (or the pinned verse) are of a wounding
    function."""
    span = shown(c.start, c.end, pin)
    if span is None:
        return False
    lo, hi = span
    if any(bool(np.any((s <= hi) & (e >= lo))) for s, e in avoid):
        return True
    here = voices.wounding(stance, lo, hi)
    return bool(here.size) and (here.mean() >= 0.5 or (pin is not None and bool(voices.wounding(stance, pin, pin).any())))


def near_situations(vectors: np.ndarray | None, q: np.ndarray, k: int, floor: float) -> list[int]:
    """The k judged sentences nearest this one at cosine `floor` or above: what wounded that reader wounds this one."""
    sims = np.zeros(0) if vectors is None else vectors @ q
    return [int(i) for i in np.argsort(-sims)[:k] if sims[i] >= floor]


def named_topics(stems: set[str], sources: Sequence[tuple[str, str | None]]) -> set[str]:
    """The routed topic themes (source, name) named by the sentence's own words (`stems`: display.terms; one stem a
    prefix of the other, as "waking" and "wake"): a topic reached because the reader wrote its word ("wake up" for
    "dont want to wake up") is the sentence's surface, not its need."""
    def said(word: str) -> bool:
        return any(w == word or (min(len(w), len(word)) >= 3 and (w.startswith(word) or word.startswith(w))) for w in stems)

    named = set()
    for source, name in sources:
        words = terms([name or ""])
        if source.startswith("topic:") and words and all(said(w) for w in words):
            named.add(source)
    return named


def surface(stems: set[str], variants: Sequence[tuple], vectors: Sequence[np.ndarray]) -> tuple[set[str], np.ndarray | None]:
    """The routed topics the sentence's words name (`named_topics`; `variants`: the rewrites, (Rewrite, theme row)) and
    the other routed themes' rewrite vectors, which a candidate reached only through the surface must fit (None: none)."""
    named = named_topics(stems, [(rw.source, rw.theme) for rw, _ in variants])
    fit = [v for (rw, _), v in zip(variants, vectors) if rw.source not in named]
    return named, (np.asarray(fit, np.float32) if fit else None)


def off_need(c: Candidate, vector: np.ndarray, needs: np.ndarray, floor: float, named: set[str] = frozenset()) -> bool:
    """Reached only through the sentence's surface (the original's own dense or full-text lists, and the topics its
    words name: `named_topics`), and nearer no other routed theme's rewrite than `floor` (cosine)."""
    surface = bool(c.hits) and all((h[0] == "original" and h[1] in SURFACE) or h[0] in named for h in c.hits)
    return surface and len(needs) > 0 and float((needs @ vector).max()) < floor


def pastoral_votes(themes: ThemeIndex, routed: Sequence[Routed], stance: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The passages (start and end ids) each routed pastoral need's human votes name, for a sufferer or a helper (what
    `unvoted` reads); none for a doer or a seeker, or when routing gave no pastoral need."""
    if stance not in HURT:
        return []
    return [themes.passages[r.theme][:2] for r in routed if themes.pastoral_mask[r.theme]]


def unvoted(cands: Sequence[Candidate], votes: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[bool] | None:
    """Per candidate, whether none of the routed pastoral needs' votes (`pastoral_votes`) names any verse of it, whatever
    list brought it (a topic's votes, the sentence's own lists, the labels); None when there are no votes to read. On
    the first four audits re-read whole, the passages shown to a sufferer or a helper wounded at 0.06 when a routed
    pastoral need alone voted for them, 0.17 when a routed topic alone did and 0.31 when no routed theme did: the
    topic index's teaching on the sentence's words (decisions, sixteenth increment)."""
    if not votes:
        return None
    starts, ends, _ = flatten(votes)
    runs = sorted_runs(starts, ends, np.zeros(len(starts), np.int64))  # every need's votes merged into one set of runs
    touching = runs_touching(runs, np.array([c.start for c in cands], np.int64), np.array([c.end for c in cands], np.int64))
    return (touching == 0).tolist()


def held_off(cands: Sequence[Candidate], vectors: Callable[[], np.ndarray], surfaced: tuple[set[str], np.ndarray | None],
             floor: float, votes: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[bool] | None:
    """Per candidate, whether it moves down though its function does not wound: off the routed need (`off_need`, with
    `surface`'s named topics and rewrite vectors; `vectors`: the candidates' vectors, read only when needed) or voted
    by none of the routed pastoral needs (`unvoted`, `votes`: `pastoral_votes`). None: neither applies."""
    named, fit = surfaced
    flags = [f for f in (None if fit is None else [off_need(c, v, fit, floor, named) for c, v in zip(cands, vectors())],
                         unvoted(cands, votes)) if f is not None]
    return [any(t) for t in zip(*flags)] if flags else None


def stage(cands: list[Candidate], stance: str, voices: Voices, avoid: Sequence[tuple[np.ndarray, np.ndarray]],
          pins: Sequence[int | None], off: Sequence[bool] | None = None, cap: int | None = None,
          show: Sequence[int | None] | None = None, at_risk: bool = False) -> list[Candidate]:
    """The candidates with every wounding one (and every `off` one: held_off) moved after all the others, each group
    in its order; a seeker's unchanged. For a sufferer or a helper the top TOP holds at most `cap` orders
    (Voices.orders): a later one waits just below it, in its order. `show`: the verse each candidate shows first. For a
    reader at risk (`at_risk`: Analysis.crisis) the top holds no order, and every passage over LONG_PASSAGE verses then
    follows the shorter ones: a chapter is read by one verse picked by nearness to the sentence's words, and to one at
    risk that is a lottery; safe messaging gives a clear word of hope, not a demand."""
    if stance == "seeker":
        return cands
    out = _stage(cands, stance, voices, avoid, pins, off, 0 if at_risk and cap is not None else cap, show)
    # a stable sort: the shorter passages, then the long ones, each in its order
    return sorted(out, key=lambda c: span_verses(c.start, c.end) > LONG_PASSAGE) if at_risk else out


def _stage(cands: list[Candidate], stance: str, voices: Voices, avoid: Sequence[tuple[np.ndarray, np.ndarray]],
           pins: Sequence[int | None], off: Sequence[bool] | None, cap: int | None,
           show: Sequence[int | None] | None) -> list[Candidate]:
    for c, pin in zip(cands, show or ()):
        c.pin = pin
    flags = [wounds(c, stance, voices, avoid, pin) or bool(off and off[i]) for i, (c, pin) in enumerate(zip(cands, pins))]
    kept = [(c, pin) for c, pin, f in zip(cands, pins, flags) if not f]
    held = [c for c, f in zip(cands, flags) if f]
    if cap is None or stance not in HURT:
        return [c for c, _ in kept] + held
    top: list[Candidate] = []
    waiting: list[Candidate] = []
    seen = 0
    for i, (c, pin) in enumerate(kept):
        if len(top) == TOP:
            return top + waiting + [c for c, _ in kept[i:]] + held
        order = voices.orders(c.start, c.end, pin)
        seen += order
        (waiting if order and seen > cap else top).append(c)
    return top + waiting + held
