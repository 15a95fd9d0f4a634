"""The fetcher's connections: urllib3's, with two things added where the
socket is made.

The address check (``web.http.addresses``) is made on the address connected to,
on every connection of every hop (``blocked-address``); each request attaches
its connection to its clock (``web.http.deadlines``). A name that does not exist
is not looked up again (``ConnectRetry``). ``pool_manager(policy)`` builds the
``PoolManager`` (docs/ingest.md, "The fetcher's connections").
"""

from __future__ import annotations

import socket
from types import TracebackType
from typing import Any, Self

from urllib3 import BaseHTTPResponse, HTTPConnectionPool, HTTPSConnectionPool, PoolManager, Retry
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
)
from urllib3.util.connection import allowed_gai_family

from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import FetchStatus
from sandcrawler.web.http.addresses import AddressPolicy
from sandcrawler.web.http.deadlines import current_clock, shutdown_socket


class AddressRefused(RecordError):
    status = FetchStatus.BLOCKED_ADDRESS


#: getaddrinfo's answers that asking again will not change: no such name, no
#: address for it (EAI_AGAIN, a resolver that did not answer, is worth a retry)
_NO_SUCH_NAME = frozenset({socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)})


class ConnectRetry(Retry):
    """urllib3's Retry, except that a host name that does not exist fails at once."""

    def increment(self, method: str | None = None, url: str | None = None,
                  response: BaseHTTPResponse | None = None, error: Exception | None = None,
                  _pool: ConnectionPool | None = None,
                  _stacktrace: TracebackType | None = None) -> Self:
        lookup = error.__cause__ if isinstance(error, NameResolutionError) else None
        if isinstance(lookup, socket.gaierror) and lookup.errno in _NO_SUCH_NAME:
            # urllib3 raises it without a pool too (its own increment, same ignore):
            # the annotation asks for one that the error only carries for display
            raise MaxRetryError(_pool, url or "", error) from error  # type: ignore[arg-type]
        return super().increment(method, url, response, error, _pool, _stacktrace)


class _Checked:
    """Mixed into urllib3's HTTP(S)Connection. ``policy`` is set on the
    subclasses ``pool_manager`` makes."""

    policy: AddressPolicy | None = None
    _raw_sock: socket.socket | None = None

    # the attributes of urllib3's connection this mixin uses
    _dns_host: str
    host: str
    port: int
    timeout: Any
    source_address: tuple[str, int] | None
    socket_options: Any

    def _new_conn(self) -> socket.socket:
        host = self._dns_host.strip("[]")
        try:
            infos = socket.getaddrinfo(host, self.port, allowed_gai_family(), socket.SOCK_STREAM)
        except socket.gaierror as e:
            raise NameResolutionError(self.host, self, e) from e  # type: ignore[arg-type]
        refused: list[str] = []
        error: OSError | None = None
        for family, kind, proto, _, address in infos:
            why = self.policy.refusal(str(address[0])) if self.policy is not None else None
            if why is not None:
                refused.append(why)
                continue
            sock = socket.socket(family, kind, proto)
            try:
                for option in self.socket_options or ():
                    sock.setsockopt(*option)
                if isinstance(self.timeout, int | float):  # else urllib3's "default" token
                    sock.settimeout(self.timeout)
                if self.source_address:
                    sock.bind(self.source_address)
                sock.connect(address)
            except TimeoutError as e:
                sock.close()
                raise ConnectTimeoutError(
                    self, f"Connection to {self.host} timed out. (connect timeout="
                    f"{self.timeout})") from e
            except OSError as e:
                sock.close()
                error = e
                continue
            self._raw_sock = sock
            return sock
        if error is not None:
            failed = f"Failed to establish a new connection: {error}"
            raise NewConnectionError(self, failed) from error  # type: ignore[arg-type]
        if refused:
            raise AddressRefused(f"host {self.host} is not fetched: "
                                 + "; ".join(dict.fromkeys(refused)))
        raise NewConnectionError(self, f"no address found for {self.host}")  # type: ignore[arg-type]

    def request(self, *args: Any, **kwargs: Any) -> Any:
        clock = current_clock()
        if clock is not None:
            clock.attach(self)
        return super().request(*args, **kwargs)  # type: ignore[misc]

    def abort(self) -> None:
        """End this connection's reads and writes now (from the watchdog)."""
        shutdown_socket(self._raw_sock)


def pool_manager(policy: AddressPolicy | None, **kwargs: Any) -> PoolManager:
    """A PoolManager (``kwargs`` as urllib3's) whose connections check their
    address against ``policy`` (None: no check) and honour request clocks."""
    attrs = {"policy": policy}
    http_conn = type("CheckedHTTPConnection", (_Checked, HTTPConnection), attrs)
    https_conn = type("CheckedHTTPSConnection", (_Checked, HTTPSConnection), attrs)
    manager = PoolManager(**kwargs)
    manager.pool_classes_by_scheme = {
        "http": type("CheckedHTTPConnectionPool", (HTTPConnectionPool,),
                     {"ConnectionCls": http_conn}),
        "https": type("CheckedHTTPSConnectionPool", (HTTPSConnectionPool,),
                      {"ConnectionCls": https_conn}),
    }
    return manager
