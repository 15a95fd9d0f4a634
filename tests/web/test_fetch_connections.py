"""A connection goes back to the fetcher's pool only with nothing of the last answer
left unread on it: else the rest of that body is read as the start of the next
answer on the connection (seen in the ingest worker's crawl as a robots.txt 404
body in front of the next page's status line, then a retry)."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from sandcrawler.web.http.fetch import HttpFetcher
from tests.helpers.waiting import wait_until


class SlowBodies:
    """A keep-alive HTTP/1.1 server whose answers send their headers at once and
    their body a moment later (as a real server's separate writes can arrive)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.requests: list[str] = []
        self.connections = 0
        self.serving: list[tuple[socket.socket, threading.Thread]] = []
        #: the connections waiting for their next request, nothing of theirs read yet
        self.waiting: set[socket.socket] = set()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            serving = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.serving.append((conn, serving))
            serving.start()

    def idle(self) -> bool:
        """Everything the client sent has been read: each connection is closed, or
        waits for its next request with nothing unread on it."""
        with self.lock:
            for conn, serving in self.serving:
                if not serving.is_alive():
                    continue
                if conn not in self.waiting:
                    return False  # answering
                try:
                    conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                except BlockingIOError:
                    continue  # nothing sent to it
                except OSError:
                    return False  # being closed
                return False  # a request (or the client's close) not read yet
        return True

    def _serve(self, conn: socket.socket) -> None:
        f = conn.makefile("rb")
        with conn, f:
            while True:
                with self.lock:
                    self.waiting.add(conn)
                select.select([conn], [], [])  # until the client sends (or closes)
                with self.lock:
                    self.waiting.discard(conn)
                line = f.readline()
                if not line:
                    return
                while f.readline() not in (b"\r\n", b"\n", b""):
                    pass
                path = line.split()[1].decode()
                self.requests.append(path)
                if path == "/ok":
                    body, status = b"ok", b"200 OK"
                else:  # /small (a 404 page), /large (a file)
                    body = b"<html>Not Found</html>" if path == "/small" else b"x" * 2**20
                    status = b"404 Not Found" if path == "/small" else b"200 OK"
                head = b"HTTP/1.1 " + status + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
                try:
                    conn.sendall(head)
                    if path != "/ok":
                        time.sleep(0.3)
                    conn.sendall(body)
                except OSError:
                    return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server() -> Iterator[SlowBodies]:
    s = SlowBodies()
    yield s
    s.close()


@pytest.mark.parametrize("path", ["/small", "/large"])
def test_an_unread_body_does_not_reach_the_next_answer(
        server: SlowBodies, path: str, caplog: pytest.LogCaptureFixture) -> None:
    fetcher = HttpFetcher(timeout=5, addresses=None)  # our own loopback server
    try:
        first = fetcher.open(f"{server.url}{path}")
        first.close()  # nothing of the body read (a robots.txt 404, a page not wanted)
        second = fetcher.open(f"{server.url}/ok")
        try:
            assert second.status == 200
            assert second.response.read() == b"ok"
        finally:
            second.close()
        third = fetcher.open(f"{server.url}/ok")
        third.response.read()
        third.close()
    finally:
        fetcher.close()
    # what the server read after its slow body: all the client sent
    wait_until(server.idle, 10, "the server to read all the client sent")
    # each asked once: no garbled answer, no retry (urllib3 says it retries)
    assert server.requests == [path, "/ok", "/ok"]
    assert "Retrying" not in caplog.text
    # a connection whose answer was read to its end is kept
    assert server.connections <= 2
