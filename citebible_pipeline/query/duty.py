"""Duty labels (pure; SearchOptions.duty_labels): a passage Nave's lists as a duty ("citizens: duties of", "church: duty
of, to ministers", "commandments: precepts of paul") answers a reader's stated need less than one it lists as help
("afflictions and adversities: consolation in"): a widow was answered with who may be enrolled as a widow (1 Timothy 5),
a pastor hurt by his church with "obey your leaders". How much less is read from the training side, as the learned
genre weights are (boost.learned_boosts). Measured: README."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citebible_pipeline.query.spans import flatten, runs_touching, sorted_runs
from citebible_pipeline.query.tuning import TUNING

# Nave's own words for a duty, in a sub-entry's last segment; chosen from the index's label vocabulary (rule R27)
DUTY = re.compile(r"\b(?:duty|duties|commandments?|precepts?|laws?|charge)\b")

Runs = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class DutyIndex:
    """The Nave's sub-entry labels' runs, all of them and the duty ones (spans.runs_touching counts them per span)."""

    labels: Runs
    duties: Runs

    def shares(self, starts: Sequence[int], ends: Sequence[int]) -> np.ndarray:
        """Per span: the duty labels' runs touching it over the Nave's sub-entry labels' runs touching it (0 with none;
        a label's separate stretches inside one span count apart, as the label features count them)."""
        s, e = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
        total = runs_touching(self.labels, s, e)
        return np.where(total > 0, runs_touching(self.duties, s, e) / np.maximum(total, 1), 0.0)


def is_subentry(text: str) -> bool:
    return ":" in text  # Nave's "subject: entry"; OpenBible topic names have no colon


def is_duty(text: str) -> bool:
    return is_subentry(text) and DUTY.search(text.rsplit(":", 1)[-1]) is not None


def build(texts: Sequence[str], passages: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> DutyIndex:
    """From the label index's texts and spans (query.labels.LabelIndex)."""

    def runs(keep: list[int]) -> Runs:
        return sorted_runs(*flatten([passages[i] for i in keep]))

    return DutyIndex(runs([i for i, t in enumerate(texts) if is_subentry(t)]),
                     runs([i for i, t in enumerate(texts) if is_duty(t)]))


def lift(index: DutyIndex, kinds: Sequence[str], passages: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
         power: float = TUNING.learned_boost_power) -> float:
    """The pastoral needs' weighted mean duty share over the other themes', to `power` (1.0 when either side has none)."""
    sides = {True: [0.0, 0.0], False: [0.0, 0.0]}
    for kind, (starts, ends, weights) in zip(kinds, passages):
        side = sides[kind == "pastoral"]
        side[0] += float(np.dot(index.shares(starts, ends), weights))
        side[1] += float(np.sum(weights))
    (need, need_w), (rest, rest_w) = sides[True], sides[False]
    if not (need_w and rest_w and need and rest):
        return 1.0
    return float(((need / need_w) / (rest / rest_w)) ** power)


def weigh(cands: list, index: DutyIndex, factor: float) -> list:
    """Each candidate's score times factor ** its duty share, best first (ties by start, as boost.final_scores)."""
    if not cands or factor == 1.0:
        return cands
    shares = index.shares([c.start for c in cands], [c.end for c in cands])
    for c, share in zip(cands, shares.tolist()):
        c.score *= factor ** share
    return sorted(cands, key=lambda c: (-c.score, c.start))
