"""Soak (issue 23): hypothesis-generated hostile and odd queries (unicode, control characters, references out of
range, SQL and HTML fragments, texts up to 500+ characters; no lone surrogates, which no HTTP client can send)
through Engine.search and through the API, counting
every outcome. Expected: a SearchResponse or QueryValidationError in-process; 200 or 422 over the API (never a 500,
never a stack trace). Anything else is an unexpected error, printed. Bounded by count; local only (TestClient).

Needs the built database (`make run`). Usage: python -m benchmarks.soak [--queries 10000]
"""

from __future__ import annotations

import argparse
import collections
import time

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from citebible_pipeline.bible.canon import books

NAMES = [b.name for b in books()] + [a for b in books() for a in b.abbreviations]
FRAGMENTS = ["'; DROP TABLE verses; --", "\" OR 1=1 --", "<script>alert(1)</script>", "%s %(x)s {0} $1", "a:b & | !",
             "<img src=x onerror=alert(1)>", "\\x00", "../../etc/passwd", "${jndi:ldap://x}", "🙏", "שָׁלוֹם", "祈祷"]
QUERY = st.one_of(
    st.text(max_size=120),
    st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=400, max_size=560),  # about the 500 limit
    st.builds(lambda b, c, v: f"{b} {c}:{v}", st.sampled_from(NAMES), st.integers(-3, 200), st.integers(-3, 200)),
    st.builds(lambda f, w: f"{w} {f}", st.sampled_from(FRAGMENTS), st.sampled_from(["grief", "I am afraid", "hope", ""])),
    st.builds(lambda s, c: s + c, st.text(max_size=40), st.sampled_from(["\x00", "\x1b[31m", "\u202e", "\r\n", "\t"])),
)


def _well_formed(status: int, body: str) -> bool:
    """A 200 is a SearchResponse; a 422 is a JSON {"detail": "..."}: never a stack trace or an HTML error page."""
    import json

    from citebible_pipeline.query import SearchResponse

    try:
        if status == 200:
            SearchResponse.model_validate_json(body)
            return True
        return isinstance(json.loads(body).get("detail"), str)
    except ValueError:
        return False


def soak(n: int, search, api_get=None, seed: int = 0) -> tuple[collections.Counter, list[str]]:
    """Run `n` generated queries through `search(text)` (and `api_get(text) -> status` when given)."""
    from citebible_pipeline.query import QueryValidationError

    outcomes: collections.Counter = collections.Counter()
    unexpected: list[str] = []

    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate], derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(QUERY)
    def one(text: str) -> None:
        try:
            r = search(text)
            outcomes["engine: abstained" if r.abstained else "engine: answered"] += 1
        except QueryValidationError:
            outcomes["engine: validation error"] += 1
        except Exception as exc:  # noqa: BLE001 - counting is the point
            outcomes["engine: UNEXPECTED"] += 1
            unexpected.append(f"engine {type(exc).__name__}: {exc!s:.120} <- {text[:60]!r}")
        if api_get is not None:
            status, body = api_get(text)
            ok = status in (200, 422) and _well_formed(status, body)
            outcomes[f"api: {status}" if ok else "api: UNEXPECTED"] += 1
            if not ok:
                unexpected.append(f"api {status}: {body[:120]} <- {text[:60]!r}")

    one()
    return outcomes, unexpected


def main() -> None:
    from fastapi.testclient import TestClient

    from citebible_pipeline.api.app import create_app
    from citebible_pipeline.query import Engine

    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    args = ap.parse_args()
    engine = Engine(llm=None)
    with TestClient(create_app(lambda: engine)) as client:
        def api_get(text: str) -> tuple[int, str]:
            r = client.get("/api/search", params={"q": text})
            return r.status_code, r.text

        started = time.perf_counter()
        outcomes, unexpected = soak(args.queries, engine.search, api_get)
    print(f"{args.queries:,} generated queries through Engine.search and /api/search in "
          f"{time.perf_counter() - started:.0f} s")
    for k, v in sorted(outcomes.items()):
        print(f"  {k:28s} {v:>6,}")
    print(f"unexpected errors: {len(unexpected)}")
    for u in unexpected[:20]:
        print("  ", u)


if __name__ == "__main__":
    main()
