"""Connections to one Solr node: kept alive, reused by whichever thread asks
next, and each request's whole answer (status line, headers and body) bounded
by a deadline.

``http.client`` rather than urllib3, since a match is a handful of lookups that
Solr answers in about a millisecond and the client's own cost counts; a
deadline of its own, since a socket timeout counts from each byte
(docs/matching.md, "Connections to Solr").
"""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import time
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from sandcrawler.core.errors import ConfigError

#: the most an answer may hold (a match's lookups bring back kilobytes)
MAX_ANSWER_BYTES = 256 * 1024 * 1024
#: idle connections kept per node (more are closed when handed back)
KEEP_IDLE = 32


class TooSlow(OSError):
    """An answer that did not arrive whole within its deadline, or too large."""


class _BoundedReader(io.RawIOBase):
    """A socket's bytes, each read given only what is left of the deadline."""

    def __init__(self, sock: socket.socket, deadline: float, read_timeout: float) -> None:
        # through the socket's own file: it keeps the socket open while the answer
        # is read after http.client has let go of a connection that will close
        self._raw = sock.makefile("rb", buffering=0)
        self._sock = sock
        self._deadline = deadline
        self._read_timeout = read_timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TooSlow("answer not whole within its deadline")
        self._sock.settimeout(min(self._read_timeout, left))
        try:
            return self._raw.readinto(buffer)
        except TimeoutError:
            if left < self._read_timeout:  # the deadline's wait ran out, not a read's
                raise TooSlow("answer not whole within its deadline") from None
            raise

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Bounded:
    """What ``HTTPResponse`` takes for a socket: only ``makefile`` is used."""

    def __init__(self, sock: socket.socket, deadline: float, read_timeout: float) -> None:
        self._sock, self._deadline, self._read_timeout = sock, deadline, read_timeout

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_BoundedReader(self._sock, self._deadline,
                                                self._read_timeout))


class _Deadlined:
    """An ``HTTPConnection`` whose responses read within ``deadline``."""

    deadline = 0.0
    read_timeout = 10.0
    #: requests answered on this connection (0: a new one, never reused)
    used = 0

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        # the head and the body go out in two writes: without this, Nagle's
        # algorithm holds the body until the head is acknowledged, which a peer
        # delaying its acknowledgements makes tens of milliseconds
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # type: ignore[attr-defined]

    def _response(self, sock: socket.socket, *args: Any, **kwargs: Any
                  ) -> http.client.HTTPResponse:
        return http.client.HTTPResponse(_Bounded(sock, self.deadline, self.read_timeout),  # type: ignore[arg-type]
                                        *args, **kwargs)


class _HTTP(_Deadlined, http.client.HTTPConnection):
    def __init__(self, host: str, port: int | None, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.response_class = self._response  # type: ignore[assignment]


class _HTTPS(_Deadlined, http.client.HTTPSConnection):
    def __init__(self, host: str, port: int | None, timeout: float,
                 context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.response_class = self._response  # type: ignore[assignment]


#: what a connection that the server closed while it was idle raises on reuse
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError,
          ConnectionAbortedError)


def split_base(base: str) -> tuple[tuple[str, str, int | None], str]:
    """``http(s)://host:port/path`` as its origin (scheme, host, port) and path."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {base!r}")
    return (parts.scheme, parts.hostname, parts.port), parts.path.rstrip("/")


class NodeConnections:
    """Keep-alive connections to one node (an origin: scheme, host and port)."""

    def __init__(self, origin: tuple[str, str, int | None], *, connect_timeout: float,
                 context: ssl.SSLContext | None) -> None:
        scheme, self._host, self._port = origin
        self._tls = scheme == "https"
        self._context = context
        self._connect_timeout = connect_timeout
        self._idle: deque[_HTTP | _HTTPS] = deque()

    def _new(self) -> _HTTP | _HTTPS:
        if self._tls:
            return _HTTPS(self._host, self._port, self._connect_timeout,
                          self._context or ssl.create_default_context())
        return _HTTP(self._host, self._port, self._connect_timeout)

    def request(self, method: str, target: str, body: bytes, headers: dict[str, str], *,
                read_timeout: float, deadline: float) -> tuple[int, bytes]:
        """The status and whole body of ``method`` ``target``. An idle
        connection that the server had closed is replaced once, at no cost to
        the node's standing; anything else raises (OSError, HTTPException)."""
        while True:
            try:
                conn = self._idle.pop()
            except IndexError:
                conn = self._new()
            try:
                return self._exchange(conn, method, target, body, headers,
                                      read_timeout, deadline)
            except _STALE:
                conn.close()
                if not conn.used:
                    raise
                # a kept-alive connection the server closed while it was idle:
                # again on a new one. (Had the server begun the request, sending
                # it twice is harmless: lookups only read, and updates are keyed
                # by DOI, their marks in the same request.)
            except BaseException:
                conn.close()
                raise

    def _exchange(self, conn: _HTTP | _HTTPS, method: str, target: str, body: bytes,
                  headers: dict[str, str], read_timeout: float,
                  deadline: float) -> tuple[int, bytes]:
        if conn.sock is None:
            conn.connect()  # within the connect timeout
        conn.deadline, conn.read_timeout = deadline, read_timeout
        assert conn.sock is not None
        conn.sock.settimeout(read_timeout)
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        chunks: list[bytes] = []
        size = 0
        while chunk := resp.read1(64 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise TooSlow(f"answer over {MAX_ANSWER_BYTES:,} bytes")
        resp.close()  # read to its end (read1 leaves it open): the connection is free
        if resp.will_close:
            conn.close()
        else:
            conn.used += 1
            if len(self._idle) < KEEP_IDLE:
                self._idle.append(conn)
            else:
                conn.close()
        return resp.status, b"".join(chunks)

    def close(self) -> None:
        while self._idle:
            self._idle.pop().close()


def tls_context(ca_file: str | None, verify: bool) -> ssl.SSLContext:
    """The context HTTPS nodes are reached with: the system's CAs, or ``ca_file``'s;
    no verification at all when ``verify`` is off (a test cluster's own certificate)."""
    try:
        context = ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"match.engine_options ca_file {ca_file!r}: not a readable PEM "
                          f"certificate file ({e.strerror or e})") from None
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context
