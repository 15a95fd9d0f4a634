"""A hostile HTTP server on loopback: it answers with whatever bytes a test
scripts, however broken, and as slowly as it likes.

``HostileServer`` answers each path with its scripted ``Reply``: ``raw`` bytes as
they are, dripped (``drip``, ``piece``), never (``silent``) or without end
(``endless``); unscripted paths answer 404. ``requests`` logs every request
with its times, ``connections`` counts connections, and ``raw_reply`` builds an
answer (docs/testing.md, "A hostile HTTP server").
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from typing import Self


@dataclass(frozen=True)
class Reply:
    raw: bytes = b""
    drip: float | None = None
    piece: int = 1
    silent: bool = False
    endless: bytes | None = None
    #: hold the connection open this long after the reply (a keep-alive server)
    linger: float = 0.0


@dataclass
class Request:
    line: str
    host: str
    target: str
    start: float
    end: float | None = None


def raw_reply(status: bytes | str = "200 OK", headers: list[tuple[str, bytes | str]] | None = None,
              body: bytes = b"", *, length: int | None = None) -> bytes:
    """An HTTP/1.1 answer, byte for byte: ``status`` after ``HTTP/1.1 ``, the
    headers as given (bytes kept as they are), ``Content-Length`` set to
    ``length`` (default: the body's; -1: none) unless a header says it."""
    head = [b"HTTP/1.1 " + (status if isinstance(status, bytes) else status.encode("latin-1"))]
    names = set()
    for name, value in headers or []:
        names.add(name.lower())
        head.append(name.encode("latin-1") + b": "
                    + (value if isinstance(value, bytes) else value.encode("latin-1")))
    if "content-length" not in names and length != -1:
        head.append(b"Content-Length: %d" % (len(body) if length is None else length))
    head.append(b"Connection: close")
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class HostileServer:
    def __init__(self) -> None:
        self._scripts: dict[str, Reply] = {}
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self.connections = 0

    @property
    def port(self) -> int:
        assert self._sock is not None, "not started"
        return int(self._sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, path: str, reply: Reply) -> None:
        with self._lock:
            self._scripts[path] = reply

    def seen(self, path: str) -> int:
        """How many requests asked for ``path`` (with its query, if it has one)."""
        with self._lock:
            return sum(1 for r in self.requests if r.target == path)

    def start(self) -> Self:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            head = b""
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    data = conn.recv(4096)
                    if not data:
                        return
                    head += data
            except OSError:
                return
            lines = head.split(b"\r\n")
            line = lines[0].decode("latin-1")
            host = next((h.split(b":", 1)[1].strip().decode("latin-1") for h in lines[1:]
                         if h.lower().startswith(b"host:")), "")
            target = line.split(" ")[1] if line.count(" ") >= 2 else "/"
            request = Request(line, host, target, time.monotonic())
            with self._lock:
                self.requests.append(request)
                reply = self._scripts.get(target) or self._scripts.get(target.split("?")[0])
            if reply is None:
                reply = Reply(raw_reply("404 Not Found", body=b"not scripted"))
            try:
                self._send(conn, reply)
            except OSError:
                pass  # the client hung up: what hostile servers are for
            finally:
                request.end = time.monotonic()

    def _send(self, conn: socket.socket, reply: Reply) -> None:
        if reply.silent:  # until the client gives up (or the server stops)
            conn.settimeout(0.05)
            while not self._stop.is_set():
                try:
                    if not conn.recv(4096):
                        return
                except TimeoutError:
                    continue
            return
        if reply.drip is not None:
            for i in range(0, len(reply.raw), reply.piece):
                conn.sendall(reply.raw[i:i + reply.piece])
                if self._stop.wait(reply.drip):
                    return
        else:
            conn.sendall(reply.raw)
        if reply.endless is not None:
            while not self._stop.is_set():
                conn.sendall(reply.endless)
        if reply.linger:
            self._stop.wait(reply.linger)
        # the rest of what the client sends is not read: close at once
        conn.shutdown(socket.SHUT_WR)
        time.sleep(0.05)
