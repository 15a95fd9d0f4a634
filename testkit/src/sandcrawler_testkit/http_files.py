"""A loopback HTTP server of files, with byte ranges, for fetch and WARC tests.

It serves the files under ``root`` (GET, HEAD, ``Range``), plus what a test asks
for by path: ``busy`` (503s), ``redirects``, ``no_ranges``, ``lie_length`` (a body
cut short). Every request path is recorded in ``requests`` (docs/testing.md,
"A server of files").
"""

from __future__ import annotations

import re
import socket
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sandcrawler_testkit.loopback import LoopbackHTTPServer

_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


class FileServer(LoopbackHTTPServer):
    def __init__(self, root: Path | str) -> None:
        super().__init__()
        self.root = Path(root)
        self.busy: dict[str, int] = {}
        self.redirects: dict[str, str] = {}
        self.lie_length: dict[str, int] = {}
        self.no_ranges = False
        self.requests: list[str] = []
        self._lock = threading.Lock()

    def _take_busy(self, path: str) -> bool:
        with self._lock:
            self.requests.append(path)
            left = self.busy.get(path, 0)
            if left:
                self.busy[path] = left - 1
            return left > 0

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _empty(self, status: int, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self.do_GET(body=False)

            def do_GET(self, body: bool = True) -> None:
                path = unquote(urlsplit(self.path).path)
                if server._take_busy(path):
                    self._empty(503, {"Retry-After": "0"})
                    return
                if path in server.redirects:
                    self._empty(302, {"Location": server.redirects[path]})
                    return
                target = (server.root / path.lstrip("/")).resolve()
                if server.root.resolve() not in target.parents or not target.is_file():
                    self._empty(404)
                    return
                size = target.stat().st_size
                start, end, status = 0, size - 1, 200
                match = _RANGE.match(self.headers.get("Range", ""))
                if match and not server.no_ranges:
                    start = int(match[1])
                    end = min(int(match[2]) if match[2] else size - 1, size - 1)
                    if start >= size:
                        self._empty(416, {"Content-Range": f"bytes */{size}"})
                        return
                    status = 206
                length = end - start + 1
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream")
                announced = server.lie_length.get(path, length)
                self.send_header("Content-Length", str(announced))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                self.end_headers()
                if not body:
                    return
                with open(target, "rb") as f:
                    f.seek(start)
                    self.wfile.write(f.read(min(length, announced)))
                if announced != length:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)

        return Handler
