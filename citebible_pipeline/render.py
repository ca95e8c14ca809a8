"""A SearchResponse as readable text (the CLI and the end of `make run`)."""

from __future__ import annotations

import textwrap

from citebible_pipeline.query.models import SearchResponse


def _mark(text: str, spans) -> str:
    out, last = [], 0
    for s in spans:
        out += [text[last:s.start], "*", text[s.start:s.end], "*"]
        last = s.end
    return "".join(out) + text[last:]


def render_text(resp: SearchResponse, width: int = 100) -> str:
    a = resp.analysis
    lines = [f"Query: {resp.query}",
             f"  {a.query_type}" + (f", pastoral intent ({a.pastoral_score:.2f})" if a.pastoral else "")
             + (f", testament {a.testament}" if a.testament else "")]
    if len(resp.rewrites) > 1:
        lines.append("  stepped back to: " + "; ".join(r.theme or r.text for r in resp.rewrites[1:]))
    if resp.notice:
        lines.append(f"  note: {resp.notice}")
    if resp.crisis_help:
        lines += ["", *textwrap.wrap(resp.crisis_help, width, initial_indent="  ", subsequent_indent="  ")]
    if resp.abstained:
        lines.append(f"\nNo answer: {resp.reason}")
        return "\n".join(lines)
    for i, r in enumerate(resp.results, 1):
        title = f"  “{r.title}”" if r.title else ""
        lines.append(f"\n{i}. {r.ref}{title}  [{r.level}{', ' + r.genre if r.genre else ''}]  score {r.score:.3f}")
        if r.pinned is not None:
            pin = r.pinned.text
            if r.pinned.ref == r.ref:  # a single verse: its own highlights
                pin = _mark(r.text, r.highlights)
            lines += textwrap.wrap(f"{r.pinned.ref}  {pin}", width, initial_indent="   ", subsequent_indent="     ")
        found = sorted({f"{h.variant}/{h.retriever}" for h in r.provenance})
        lines.append("   found by: " + ", ".join(found[:6]) + (" ..." if len(found) > 6 else ""))
        if r.related:
            lines.append("   see also: " + ", ".join(x.ref for x in r.related))
    lines.append("\n" + "  ".join(f"{k} {v:.0f}ms" for k, v in resp.timings.items()))
    return "\n".join(lines)
