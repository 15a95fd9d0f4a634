"""urllib3's failures said in one line, with the status they give a record.

urllib3 nests its errors (a ``MaxRetryError`` around a ``ProtocolError``
around an ``http.client`` error, each with the pool's repr in its text); a
user reading a record's ``error_message`` wants what happened to the request:
the name does not resolve, nothing listens, no answer within so many seconds,
the server broke HTTP. ``describe`` says that, and ``failure`` makes it the
record's ``RecordError``: ``fetch-timeout`` for a server that connected and
then did not answer in time, ``fetch-error`` for the rest.
"""

from __future__ import annotations

import http.client
import ssl

from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import FetchStatus


def cause(e: BaseException) -> BaseException:
    """The innermost error worth naming: through ``MaxRetryError.reason`` and
    ``ProtocolError``'s arguments."""
    while True:
        if isinstance(e, MaxRetryError) and e.reason is not None:
            e = e.reason
        elif isinstance(e, ProtocolError) and len(e.args) > 1 \
                and isinstance(e.args[1], BaseException):
            e = e.args[1]
        else:
            return e


def describe(e: BaseException, *, read_timeout: float | None = None,
             received: int | None = None) -> tuple[FetchStatus, str]:
    """``(status, what happened)`` for a failure of one request; ``received``: the
    bytes of the body that came before it (said unless the error says it)."""
    status, what = _describe(cause(e), read_timeout)
    if received is not None and status == FetchStatus.FETCH_ERROR \
            and not isinstance(cause(e), http.client.IncompleteRead):
        what = f"{what} after {received:,} bytes"
    return status, what


def _describe(inner: BaseException, read_timeout: float | None) -> tuple[FetchStatus, str]:
    if isinstance(inner, NameResolutionError):
        return FetchStatus.FETCH_ERROR, "the host name does not resolve"
    if isinstance(inner, ConnectTimeoutError):
        return FetchStatus.FETCH_ERROR, "no connection could be made in time"
    if isinstance(inner, ReadTimeoutError | TimeoutError):
        within = f" within {read_timeout:g} s" if read_timeout else ""
        return FetchStatus.FETCH_TIMEOUT, f"the server sent nothing{within} (http.timeout)"
    if isinstance(inner, NewConnectionError):
        errno_text = inner.__cause__.strerror if isinstance(inner.__cause__, OSError) else None
        return FetchStatus.FETCH_ERROR, (f"cannot connect: {errno_text.lower()}" if errno_text
                                         else "cannot connect")
    if isinstance(inner, SSLError | ssl.SSLError):
        # urllib3's SSLError carries the ssl module's, which has the reason
        tls = inner.args[0] if inner.args and isinstance(inner.args[0], ssl.SSLError) else inner
        return FetchStatus.FETCH_ERROR, f"TLS failed ({getattr(tls, 'reason', None) or tls})"
    if isinstance(inner, http.client.RemoteDisconnected):
        return FetchStatus.FETCH_ERROR, "the server closed the connection without answering"
    if isinstance(inner, http.client.IncompleteRead):
        # urllib3's gives counts, http.client's the bytes read
        got = inner.partial if isinstance(inner.partial, int) else len(inner.partial)
        expected = f" of {got + inner.expected:,}" if inner.expected else ""
        return FetchStatus.FETCH_ERROR, f"the connection closed after {got:,}{expected} bytes"
    if isinstance(inner, http.client.LineTooLong):
        return FetchStatus.FETCH_ERROR, "the server sent a header line too long"
    if isinstance(inner, http.client.HTTPException):
        return FetchStatus.FETCH_ERROR, f"the server's answer is not HTTP ({type(inner).__name__})"
    if isinstance(inner, ConnectionResetError | BrokenPipeError):
        return FetchStatus.FETCH_ERROR, "the server reset the connection"
    if isinstance(inner, OSError) and inner.strerror:
        return FetchStatus.FETCH_ERROR, inner.strerror.lower()
    return FetchStatus.FETCH_ERROR, type(inner).__name__


def failure(url: str, e: BaseException, *, read_timeout: float | None = None) -> RecordError:
    status, what = describe(e, read_timeout=read_timeout)
    return RecordError(f"fetching {url}: {what}", status=status)
