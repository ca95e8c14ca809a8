"""What the reading page shows for a query (pure view logic; the template only lays it out)."""

from __future__ import annotations

from markupsafe import Markup, escape

from citebible_pipeline.db.connection import UNREACHABLE
from citebible_pipeline.query import QueryValidationError
from citebible_pipeline.query.models import Result, Span

ATTRIBUTION = ("Scripture quotations are from the World English Bible (WEB), public domain, eBible.org. Topical votes "
               "and cross-references from OpenBible.info, licensed CC BY (https://creativecommons.org/licenses/by/4.0/).")


def marked(text: str, spans: list[Span], offset: int = 0) -> Markup:
    """`text` with the spans (relative to a larger text starting `offset` before it) in <mark>, escaped."""
    out, last = [], 0
    for s in spans:
        a, b = s.start - offset, s.end - offset
        if a < last or b > len(text) or a < 0:
            continue
        out += [escape(text[last:a]), Markup("<mark>"), escape(text[a:b]), Markup("</mark>")]
        last = b
    out.append(escape(text[last:]))
    return Markup("").join(out)


def pinned_html(r: Result) -> Markup:
    pin = r.pinned.text if r.pinned else r.text
    offset = r.text.find(pin)
    return marked(pin, r.highlights, offset) if offset >= 0 else escape(pin)


def found_by(r: Result) -> str:
    names = []
    for h in r.provenance:
        name = {"original": "your words", "prior": "readers' votes", "labels": "the topics it is listed under",
                "reference": "the reference"}.get(
            h.variant, h.variant.split(":", 1)[-1])
        if name not in names:
            names.append(name)
    return ", ".join(names)


def page_context(holder, q: str, k: int, where) -> dict:
    ctx: dict = {"q": q, "results": [], "response": None, "error": None, "attribution": ATTRIBUTION,
                 "pinned_html": pinned_html, "found_by": found_by, "marked": marked}
    if not q.strip():
        return ctx
    try:
        ctx["response"] = holder.get().search(q, k=k)
    except QueryValidationError as exc:
        ctx.update(error=str(exc), status=422)
    except UNREACHABLE:
        ctx.update(error=f"The Bible index is unavailable right now ({where()}). Please try again shortly.", status=503)
    return ctx
