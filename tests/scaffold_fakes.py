"""A fake provider server for adapter tests: plays scripted (status, JSON) answers on 127.0.0.1, keeps every request."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeProvider:
    """Answers each POST with the next scripted (status, payload); the last answer repeats once the script runs out.

    Use as a context manager: it yields the base URL, and stops the server (bounded by the
    socket's timeout) on exit.
    """

    def __init__(self, answers: list[tuple[int, dict[str, Any]]]):
        self.answers, self.requests = list(answers), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 10

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                outer.requests.append(Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, payload = outer.answers[min(len(outer.requests), len(outer.answers)) - 1]
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
