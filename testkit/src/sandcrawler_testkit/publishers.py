"""A loopback web of made-up publisher sites, for the crawler's odd cases.

``WebSite`` answers by the request's ``Host`` header and path (with query), so
one server stands for many hosts reached through ``http.routes``. Each URL has
an ``Answer``: a status, a body, headers, or a behaviour real sites have:
``endless`` (a body that never ends), ``redirect`` (a Location), ``delay``.
Unknown URLs answer 404. Every request (host + path) is recorded in
``requests``, with its headers in ``headers_seen``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from sandcrawler_testkit.loopback import LoopbackHTTPServer


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    #: send this chunk forever (a server that never stops sending)
    endless: bytes | None = None
    delay: float = 0.0


def page(html: str | bytes, status: int = 200, **kwargs: object) -> Answer:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return Answer(status, body, **kwargs)  # type: ignore[arg-type]


def redirect(location: str, status: int = 302) -> Answer:
    return Answer(status, b"", headers={"Location": location})


def _key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.netloc.lower(), (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class WebSite(LoopbackHTTPServer):
    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[tuple[str, str], Answer] = {}
        self.requests: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def add(self, url: str, answer: Answer) -> str:
        """Answer ``url`` (absolute, as the crawler sees it) with ``answer``."""
        self.answers[_key(url)] = answer
        return url

    def origins(self) -> list[str]:
        return sorted({f"{scheme}://{host}" for host, _ in self.answers
                       for scheme in ("http", "https")})

    def routes(self) -> dict[str, str]:
        return dict.fromkeys(self.origins(), self.url)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in separate writes

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").lower()
                with site._lock:
                    site.requests.append(host + self.path)
                    site.headers_seen.append(dict(self.headers.items()))
                answer = site.answers.get((host, self.path))
                if answer is None:
                    answer = Answer(404, b"<html><body>Not Found</body></html>")
                if answer.delay:
                    time.sleep(answer.delay)
                self.send_response(answer.status)
                if answer.content_type:
                    self.send_header("Content-Type", answer.content_type)
                for k, v in answer.headers.items():
                    self.send_header(k, v)
                if answer.endless is not None:
                    self.send_header("Connection", "close")
                    self.end_headers()
                    try:
                        while True:
                            self.wfile.write(answer.endless)
                    except OSError:
                        return
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

        return Handler
