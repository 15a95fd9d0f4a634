"""A loopback HTTP server standing in for several web sites at once, told apart
by the ``Host`` header, for tests of polite fetching.

A test sets the answers per site and path (``answer``, ``robots``), how long each
is held (``hold``, an answer's ``delay``, ``endless``); unset paths answer 200,
``/robots.txt`` 404. ``log`` records every request with its times and headers,
``max_in_flight`` the most concurrent requests per host (docs/testing.md,
"A server of many sites").
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from sandcrawler_testkit.loopback import LoopbackHTTPServer


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "text/plain; charset=utf-8"
    #: send this chunk forever (a server that never stops sending)
    endless: bytes | None = None
    delay: float = 0.0


@dataclass
class Seen:
    host: str
    path: str
    start: float
    end: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    #: the path with its query, as requested
    target: str = ""


class SiteServer(LoopbackHTTPServer):
    def __init__(self, hold: float = 0.0) -> None:
        super().__init__()
        self.hold = hold
        self.log: list[Seen] = []
        self.max_in_flight: dict[str, int] = {}
        self._in_flight: dict[str, int] = {}
        self._answers: dict[tuple[str, str], list[Answer]] = {}
        self._lock = threading.Lock()

    def routes(self, *hosts: str, scheme: str = "https") -> dict[str, str]:
        """``routes`` for a fetcher: each ``host`` sent here."""
        return {f"{scheme}://{host}": self.url for host in hosts}

    def answer(self, host: str, path: str, *answers: Answer) -> None:
        with self._lock:
            self._answers[(host.lower(), path)] = list(answers)

    def robots(self, host: str, text: str | bytes, status: int = 200) -> None:
        body = text.encode() if isinstance(text, str) else text
        self.answer(host, "/robots.txt", Answer(status, body))

    def clear(self) -> None:
        """Forget the requests seen so far."""
        with self._lock:
            self.log.clear()

    def seen(self, host: str | None = None, path: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self.log
                    if (host is None or s.host == host) and (path is None or s.path == path)]

    def _begin(self, host: str, target: str,
               headers: dict[str, str]) -> tuple[Seen, Answer]:
        path = urlsplit(target).path
        with self._lock:
            seen = Seen(host, path, time.monotonic(), headers=headers, target=target)
            self.log.append(seen)
            n = self._in_flight[host] = self._in_flight.get(host, 0) + 1
            self.max_in_flight[host] = max(self.max_in_flight.get(host, 0), n)
            queue = self._answers.get((host, target)) or self._answers.get((host, path))
            if queue:
                answer = queue.pop(0) if len(queue) > 1 else queue[0]
            elif path == "/robots.txt":
                answer = Answer(404, b"no robots.txt here")
            else:
                answer = Answer(200, b"ok " + path.encode())
        return seen, answer

    def _end(self, seen: Seen) -> None:
        """The request stops counting as in flight: called before its answer is sent,
        since a client that has read the whole answer may send its next
        request before this thread runs again (counting it then would see one more
        in flight than the client ever had). Once per request."""
        with self._lock:
            if seen.end:
                return
            self._in_flight[seen.host] -= 1
            seen.end = time.monotonic()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in separate writes

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").split(":")[0].lower()
                seen, answer = server._begin(host, self.path, dict(self.headers.items()))
                try:
                    if server.hold or answer.delay:
                        time.sleep(server.hold + answer.delay)
                    self.send_response(answer.status)
                    if answer.content_type:
                        self.send_header("Content-Type", answer.content_type)
                    for k, v in answer.headers.items():
                        self.send_header(k, v)
                    if answer.endless is not None:
                        self._endless(answer.endless)
                        return
                    self.send_header("Content-Length", str(len(answer.body)))
                    server._end(seen)  # before the answer can reach the client
                    self.end_headers()
                    self.wfile.write(answer.body)
                    self.wfile.flush()
                finally:
                    server._end(seen)

            def _endless(self, chunk: bytes) -> None:
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    while True:
                        self.wfile.write(chunk)
                except OSError:
                    return

        return Handler
