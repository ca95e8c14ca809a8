"""A scripted local HTTP server (http.server in a thread) for fetcher, refresh and LLM-gateway tests."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer:
    """routes: path -> list of responses, consumed in order (the last one repeats).

    A response is (status, body) or a dict with keys status, body, delay (seconds before the
    body), truncate (send only this many bytes of body but the full Content-Length).
    """

    def __init__(self) -> None:
        self.routes: dict[str, list] = {}
        self.hits: dict[str, int] = defaultdict(int)
        self.bodies: list[bytes] = []  # request bodies received (POST)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    server.bodies.append(self.rfile.read(length))
                n = server.hits[self.path]
                server.hits[self.path] += 1
                script = server.routes.get(self.path, [(404, b"not found")])
                resp = script[min(n, len(script) - 1)]
                if isinstance(resp, tuple):
                    resp = {"status": resp[0], "body": resp[1]}
                body = resp.get("body", b"")
                self.send_response(resp["status"])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if resp.get("delay"):
                    time.sleep(resp["delay"])
                try:
                    self.wfile.write(body[: resp.get("truncate", len(body))])
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if "truncate" in resp:
                    self.close_connection = True

            do_POST = do_GET  # noqa: N815 (a JSON API such as an LLM gateway)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
