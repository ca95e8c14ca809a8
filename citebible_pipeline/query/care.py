"""Where to find help now (pure; never switchable), beside the answer of a reader in danger.

Crisis language (a reader who speaks of ending their life, of wishing to be dead or of harming themselves,
`screening.CRISIS_WORDS`: screening instruments' items) is never turned away by the floor, and its answer carries the
crisis lines. A reader who discloses abuse by someone close (`screening.ABUSE`, `screening.DISCLOSED`) gets the abuse
lines; what such a reader is not shown first (the household codes' orders to submit, the orders to stay or not to resist) is the abuse need's
avoid list, held back by the do-no-harm stage (query/harm.py) like every other wound."""

from __future__ import annotations

from citebible_pipeline.query.models import Analysis

CRISIS_HELP = ("If you are thinking about ending your life or hurting yourself, please reach out to someone now: in the US "
               "call or text 988 (the Suicide & Crisis Lifeline); elsewhere call your local emergency number or find a "
               "crisis line at findahelpline.com. If you are in danger right now, call emergency services.")
ABUSE_HELP = ("If someone is hurting you, it is not your fault, and you do not have to stay in danger. In the US call the "
              "National Domestic Violence Hotline at 1-800-799-7233 (or text START to 88788), or RAINN at 1-800-656-4673 after "
              "sexual assault; elsewhere find a line at findahelpline.com. If you are in danger right now, call emergency "
              "services.")


def help_now(analysis: Analysis) -> str | None:
    """The crisis line for crisis language, the abuse lines for a disclosure, both for both. A reader confessing the
    abuse they did (the doer) is not told "it is not your fault"."""
    said = [CRISIS_HELP] if analysis.crisis else []
    said += [ABUSE_HELP] if analysis.abuse and analysis.stance != "doer" else []
    return " ".join(said) or None
