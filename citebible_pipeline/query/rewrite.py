"""Stage 2b, rewrite: the original query (always kept, weighted highest) plus up to four step-back
rewrites. The offline default reads them off the routed themes; an optional LLM behind an
OpenAI-compatible or Ollama HTTP gateway adds its need phrases, with a strict timeout and the offline
rewrites alone on any error. LLM text only feeds retrieval: it is never shown as scripture."""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass

import requests

from citebible_pipeline.query.models import Rewrite
from citebible_pipeline.query.route import Routed, ThemeIndex
from citebible_pipeline.query.tuning import TUNING

log = logging.getLogger(__name__)


def offline_rewrites(index: ThemeIndex, routed: list[Routed], original: str, limit: int) -> list[tuple[Rewrite, int]]:
    """(rewrite, theme row) for the routed themes, best first; the original comes first, theme -1."""
    out = [(Rewrite(text=original, source="original", weight=TUNING.original_weight), -1)]
    top = max((r.weight for r in routed), default=1.0)
    for r in routed[:limit]:
        weight = round(TUNING.rewrite_weight * max(TUNING.rewrite_min_share, r.weight / top), 3)
        out.append((Rewrite(text=index.rewrites[r.theme], source=index.keys[r.theme], weight=weight,
                            theme=index.names[r.theme]), r.theme))
    return out


@dataclass(frozen=True)
class LLMConfig:
    url: str  # .../v1/chat/completions (OpenAI-compatible) or .../api/chat (Ollama)
    model: str
    timeout_s: float = 2.0
    api_key: str | None = None

    @classmethod
    def from_env(cls) -> LLMConfig | None:
        url = os.environ.get("CITEBIBLE_LLM_URL")
        if not url:
            return None
        return cls(url, os.environ.get("CITEBIBLE_LLM_MODEL", "llama3"),
                   float(os.environ.get("CITEBIBLE_LLM_TIMEOUT_S", "2")), os.environ.get("CITEBIBLE_LLM_API_KEY"))


PROMPT = ("A reader of the Bible wrote the sentence below. Name the underlying needs or themes a pastor would "
          "look up (for example grief, lament, comfort, forgiveness), as up to {n} short search phrases, one per "
          "line, no numbering, no Bible verses.\n\nSentence: {q}")


def llm_rewrites(cfg: LLMConfig, query: str, limit: int) -> list[str]:
    """Phrases from the gateway; raises on any HTTP, timeout or format problem (the caller falls back)."""
    body = {"model": cfg.model, "messages": [{"role": "user", "content": PROMPT.format(n=limit, q=query)}],
            "stream": False, "temperature": 0}
    headers = {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}
    resp = requests.post(cfg.url, json=body, headers=headers, timeout=cfg.timeout_s)
    resp.raise_for_status()
    data = resp.json()
    if "choices" in data:
        text = data["choices"][0]["message"]["content"]
    else:
        text = data["message"]["content"]
    lines = [re.sub(r"^[\s\-*\d.)]+", "", ln).strip() for ln in str(text).splitlines()]
    phrases = [ln[:120] for ln in lines if ln and not re.search(r"\d+:\d+", ln)]
    if not phrases:
        raise ValueError("the LLM returned no usable phrase")
    return phrases[:limit]


def rewrites(index: ThemeIndex, routed: list[Routed], original: str, limit: int, llm: LLMConfig | None = None
             ) -> tuple[list[tuple[Rewrite, int]], str | None]:
    """The rewrites to search with, and a note when the LLM failed and the offline ones were used. The LLM's phrases
    join the offline rewrites (replacing them was measured and left off: docs/decisions.md)."""
    offline = offline_rewrites(index, routed, original, limit)
    if llm is None or limit == 0:
        return offline, None
    try:
        phrases = llm_rewrites(llm, original, limit)
    except Exception as exc:  # any failure of an optional helper falls back, and says so
        log.warning("LLM rewriter failed (%s: %s); using the offline rewrites", type(exc).__name__, exc)
        return offline, f"llm rewriter unavailable ({type(exc).__name__}); offline rewrites used"
    return [*offline, *((Rewrite(text=p, source="llm", weight=TUNING.rewrite_weight), -1) for p in phrases)], None
