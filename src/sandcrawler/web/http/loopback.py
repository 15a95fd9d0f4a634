"""A threaded HTTP server on 127.0.0.1, started on its own daemon thread,
stopped cleanly, usable as a context manager: what the offline demo's site
(``sandcrawler.demo``) and the test kit's loopback servers share. Subclasses
say how requests are answered (``_handler``)."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up (it stopped reading a body it did not want) is
        # what the tests do on purpose, not a server error worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class LoopbackHTTPServer:
    #: how often serve_forever looks for a shutdown request (seconds)
    poll_interval = 0.05  # stop() returns within this; tests stop servers often

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._server: ThreadingHTTPServer | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        # an IP socket's host is a str (the type allows bytes, for AF_UNIX)
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def start(self) -> Self:
        self._server = _Server(("127.0.0.1", self.port), self._handler())
        threading.Thread(target=self._server.serve_forever,
                         kwargs={"poll_interval": self.poll_interval}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
