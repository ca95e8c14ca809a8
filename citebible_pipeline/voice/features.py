"""What a verse does, as features (pure): its words against a small lexicon per function, its genre, the subjects of
the training-side Nave's entries that list it, and its own, its passage's and its chapter's embeddings.

The lexicon is general: the vocabulary of judgement oracles, curses, battle narrative, the law codes' casuistic
form and sacrificial terms, rebuke and woe, comfort, lament and praise as a reader of the WEB meets them, written
before any classifier was measured (a rule, not a tuned list). The learned model weighs them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from citebible_pipeline.genre.tagger import GENRES

WINDOW = 3  # verses each side read as the verse's passage: out-of-fold macro F1 0.635 (one each side) -> 0.668 (decisions)

LEXICON: dict[str, str] = {
    "judgement": r"wrath|fierce anger|destroy\w*|destruction|desolat\w*|curse[ds]?|cursed|punish\w*|perish\w*|plague\w*|"
                 r"pestilence|famine|devour\w*|consume[ds]?|burn\w* (?:up|with fire)|cut off|vengeance|avenge\w*|"
                 r"judg(?:e?ment|ed)|doom|hell|gehenna|outer darkness|lake of fire|condemn\w*|overthrow\w*|ruin\w*",
    "violence": r"kill\w*|slew|slain|slay\w*|struck|strike|smote|murder\w*|blood|sword|spear|raped?|forced her|"
                r"stoned|hanged|beat\w*|battle|fought|war\b|attack\w*|cut (?:off|in pieces)|dash\w*|pierc\w*|crucif\w*",
    "law": r"shall|offering|sacrific\w*|burnt|altar|priest\w*|unclean|clean\b|statute\w*|ordinance\w*|tithe\w*|"
           r"sabbath|blemish|bull\w*|ram\b|lambs?\b|goats?\b|unleavened|feast|put to death|shall surely|"
           r"if (?:a|any) (?:man|woman|person|soul|one)|whoever|atonement|leprosy|vow\w*",
    "rebuke": r"woe|hypocrit\w*|wicked\w*|fool\w*|sinners?|transgress\w*|iniquit\w*|abomination\w*|rebel\w*|"
              r"adulter\w*|idol\w*|forsaken? (?:me|yahweh|the law)|stiff-necked|evildoers?|lies|liars?|unpunished|"
              r"you have not|you did not|turn from your",
    "comfort": r"peace|don't be afraid|do not be afraid|fear not|comfort\w*|with you|refuge|strength|save[sd]?|"
               r"deliver\w*|hope|rest\b|mercy|merciful|loving kindness|never leave|forgive\w*|heal\w*|shepherd|"
               r"restore\w*|redeem\w*|near to",
    "lament": r"how long|why have you|my soul|tears|weep\w*|cry|cried|groan\w*|distress|trouble\w*|my enemies|"
              r"forsaken me|hide your face|sorrow\w*|anguish|mourn\w*|answer me",
    "praise": r"praise\w*|sing|sang|thanks|give thanks|glor\w*|bless yahweh|worship\w*|hallelujah|exalt\w*|"
              r"rejoice\w*|majesty|wonderful",
    "command": r"^(?:do|don't|do not|let|be|go|put|flee|love|honor|obey|keep|remember|take|walk|watch|pray|give|"
               r"submit|children|wives|husbands|servants)\b",
    "list": r"\bthe (?:sons|children|descendants) of\b|became the father of|thousand|hundred|\bfamily of\b|"
            r"\bto the border\b|\bfrom\b.*\bto\b",
    "speech": r"yahweh says|says yahweh|thus says|the word of yahweh came|declares",
}
_LEX = {k: re.compile(rf"\b(?:{v})", re.I) for k, v in LEXICON.items()}
_PERSON = {"second": re.compile(r"\b(?:you|your|yours|yourselves)\b", re.I),
           "first": re.compile(r"\b(?:i|me|my|mine|we|us|our)\b", re.I),
           "yahweh": re.compile(r"\b(?:yahweh|god|lord)\b", re.I)}
# Nave's label words that say what a listed passage does (the same rule: general vocabulary, stated before measuring)
LABEL_WORDS = ("judgment", "punish", "curse", "wicked", "destruction", "wrath", "war", "murder", "law", "offering",
               "sacrifice", "clean", "priest", "praise", "thanksgiving", "comfort", "consolation", "promise", "prayer",
               "afflict", "instance", "genealog", "census", "reproof", "warning", "repentance", "commandment", "duty")


@dataclass(frozen=True)
class VerseInput:
    id: int
    text: str
    genre: str


def lexical(text: str) -> np.ndarray:
    """Lexicon hits per function (saturating: log1p), person and speech markers, length and a question mark."""
    words = max(1, len(text.split()))
    lex = [np.log1p(len(p.findall(text))) for p in _LEX.values()]
    person = [len(p.findall(text)) / words for p in _PERSON.values()]
    return np.array([*lex, *person, np.log1p(words), float("?" in text)], np.float32)


def genre_onehot(genre: str) -> np.ndarray:
    out = np.zeros(len(GENRES), np.float32)
    if genre in GENRES:
        out[GENRES.index(genre)] = 1.0
    return out


def label_features(labels: Sequence[str]) -> np.ndarray:
    """Which of LABEL_WORDS the Nave's labels listing the verse hold (how many labels, saturating)."""
    joined = [lab.lower() for lab in labels]
    return np.array([np.log1p(sum(w in lab for lab in joined)) for w in LABEL_WORDS], np.float32)


def matrix(verses: Sequence[VerseInput], vectors: Mapping[int, np.ndarray], context: Mapping[int, np.ndarray],
           labels: Mapping[int, Sequence[str]], dims: int) -> np.ndarray:
    """One row per verse: lexical | genre | Nave's label words | own embedding | its passage's and chapter's mean
    embeddings (`context_means`)."""
    zero, zero2 = np.zeros(dims, np.float32), np.zeros(2 * dims, np.float32)
    return np.stack([np.concatenate([lexical(v.text), genre_onehot(v.genre), label_features(labels.get(v.id, ())),
                                     vectors.get(v.id, zero), context.get(v.id, zero2)]) for v in verses])


def context_means(ids: Sequence[int], vectors: Mapping[int, np.ndarray], window: int = WINDOW) -> dict[int, np.ndarray]:
    """Per verse, the mean embedding of the verses within `window` of it in its chapter (itself included) beside its
    chapter's mean: a doom oracle's quiet verse reads as part of the oracle, a psalm's as part of the psalm."""
    out: dict[int, np.ndarray] = {}
    ordered = [vid for vid in sorted(ids) if vid in vectors]
    chapters: dict[int, list[int]] = {}
    for vid in ordered:
        chapters.setdefault(vid // 1000, []).append(vid)
    for members in chapters.values():
        E = np.stack([vectors[v] for v in members])
        whole = E.mean(axis=0)
        for i, vid in enumerate(members):
            near = E[max(0, i - window):i + window + 1].mean(axis=0)
            out[vid] = np.concatenate([near, whole]).astype(np.float32)
    return out
