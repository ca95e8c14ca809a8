"""Crisis language (pure): a reader who speaks of ending their life, of wishing to be dead or of harming themselves is
in danger, not bereaved, so the floor never turns them away and the answer carries where to find help now
(SearchOptions.crisis). Their words sit nearest the death and mortality themes ("My friend says she wants to die" was
answered with "precious is the death of his saints"); stating the despair need for them is a switch (crisis_need, off:
README). Which words count is `analyze.CRISIS_WORDS`: screening instruments' items, never a query set."""

from __future__ import annotations

import numpy as np

from citebible_pipeline.query.route import ThemeIndex, with_cue

CRISIS_NEED = "pastoral:despair"  # pastoral.yaml's "depression and hopelessness"

HELP = ("If you are thinking about ending your life or hurting yourself, please reach out to someone now: in the US "
        "call or text 988 (the Suicide & Crisis Lifeline); elsewhere call your local emergency number or find a crisis "
        "line at findahelpline.com. If you are in danger right now, call emergency services.")


def with_need(themes: ThemeIndex, vecs: np.ndarray, exclude: frozenset[str] = frozenset()) -> np.ndarray:
    """The routing rows and the despair need's cue nearest the sentence (route.with_cue)."""
    return with_cue(themes, CRISIS_NEED, vecs, exclude)
