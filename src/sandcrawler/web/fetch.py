"""Fetching over HTTP: whole files by URL, JSON from platform APIs, byte ranges
of WARC files.

One urllib3 pool manager per fetcher (thread-safe, keep-alive per host).
urllib3's own ``Retry`` retries connection failures. Answers 429/502/503/504
are retried here, after ``Retry-After`` (seconds or an HTTP date) or, without
one, 1, 2, 4 s (twice ``backoff``, then doubled), at most ``retries`` times and never
waiting more than ``retry_after_max`` in all for one request; then the last
answer is returned. With a ``HostGate`` (``sandcrawler.web.hosts``) every
request, every hop and every retry, takes a slot of its host first (per-host
concurrency and delay between starts), and a 429 or 503 slows the whole host
for the time asked: its other requests wait too. Waiting holds no connection.
Redirects are followed here, hop by hop (at most ``max_redirects``), so that a
web archive can record every hop and a loop is reported as one; a ``check``
(``CrawlPolicy.check``) may refuse any URL before it is requested.

Every request says who we are: ``User-Agent: {user_agent}/{version} (+{contact})``
(``user_agent_header``).

``routes`` sends requests for an origin (``https://zenodo.org``) to another
(``http://127.0.0.1:8080``) while the ``Host`` header and every URL reported
keep the original: a mirror or a proxy in production, loopback servers in tests.

Two kinds of failure are kept apart, because callers treat them differently:

* a file on the web that cannot be had is that record's problem (``RecordError``:
  ``fetch-error`` when the host does not answer or the body is cut short,
  ``http-error`` for a non-200 answer, ``too-large`` over the size limit,
  ``redirect-loop``); the run goes on;
* a WARC source that does not answer is our own infrastructure being down
  (``StoreUnavailable``): workers back off and retry the batch, batch commands
  exit 3, and nothing is marked done.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol
from urllib.parse import urljoin, urlsplit

import orjson
import urllib3
from urllib3.exceptions import HTTPError

from sandcrawler.errors import NotFound, RecordError, StoreUnavailable
from sandcrawler.models.statuses import FetchStatus
from sandcrawler.retry import retry_after_seconds
from sandcrawler.version import __version__
from sandcrawler.web.hosts import HostGate, Slot, host_of

CHUNK = 1024 * 1024
#: what is read of an answer not wanted, so that its connection can be reused
DRAIN_BYTES = 64 * 1024
RETRY_STATUSES = (429, 502, 503, 504)
#: answers that slow the whole host (the server is overloaded or rate-limiting us)
BUSY_STATUSES = (429, 503)
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
PROJECT_URL = "https://github.com/sandcrawler"


def user_agent_header(product: str = "sandcrawler", contact: str | None = None) -> str:
    """``sandcrawler/0.1.0 (+mailto:ops@example.org)``: the product, our version, and
    how a site's operator reaches whoever runs the crawl (else the project's URL)."""
    return f"{product}/{__version__} (+{contact or PROJECT_URL})"


#: what every request sends (the User-Agent is the fetcher's); a web archive
#: records the headers actually sent as the request
REQUEST_HEADERS = {
    "User-Agent": user_agent_header(),
    "Accept": "*/*",
    # the bytes recorded and hashed are the file itself, not a compressed form of it
    "Accept-Encoding": "identity",
}


class Writable(Protocol):
    def write(self, data: bytes, /) -> Any: ...


class TooLarge(RecordError):
    status = FetchStatus.TOO_LARGE


@dataclass(frozen=True, slots=True)
class Download:
    url: str  # after redirects
    status_code: int
    content_type: str | None
    size: int


@dataclass(slots=True)
class Hop:
    """One request and its answer: a redirect on the way, or the final response."""

    url: str
    status_code: int
    reason: str
    headers: list[tuple[str, str]]
    request_headers: list[tuple[str, str]]
    location: str | None = None  # absolute, for redirects

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


@dataclass(slots=True, weakref_slot=True)
class Opened:
    """The final response, body not read yet (``response``), and every hop to it.
    Release it with ``close()``: the connection goes back to the pool and the
    request's place in its host's quota is given back."""

    response: urllib3.BaseHTTPResponse
    hops: list[Hop] = field(default_factory=list)
    slot: Slot | None = None

    def __post_init__(self) -> None:
        if self.slot is not None:  # a caller that forgets close() must not block the host
            weakref.finalize(self, self.slot.release)

    @property
    def final(self) -> Hop:
        return self.hops[-1]

    @property
    def url(self) -> str:
        return self.final.url

    @property
    def status(self) -> int:
        return self.final.status_code

    def close(self) -> None:
        try:
            _release(self.response)
        finally:
            if self.slot is not None:
                self.slot.release()


class HttpFetcher:
    def __init__(
        self,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_bytes: int = 1024 * 2**20,
        pool_size: int = 4,
        max_redirects: int = 5,
        routes: Mapping[str, str] | None = None,
        user_agent: str = "sandcrawler",
        contact: str | None = None,
        gate: HostGate | None = None,
        retry_after_max: float = 120.0,
    ) -> None:
        """``retries``: how many times one request is tried again after a connection
        failure or a 429/502/503/504 answer; ``backoff``: urllib3's back-off factor
        for connection failures (0, 1, 2 s), and half the first wait after an
        answer without Retry-After (1, 2, 4 s); ``retry_after_max``: the most one
        request waits in all before its 429/503 is returned; ``gate``: per-host
        politeness (None: no limits, as in tests of other things)."""
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.retries = retries
        self.backoff = backoff
        self.retry_after_max = retry_after_max
        self.gate = gate
        self.user_agent = user_agent_header(user_agent, contact)
        self.routes = {k.rstrip("/").lower(): v.rstrip("/") for k, v in (routes or {}).items()}
        self._http = urllib3.PoolManager(
            maxsize=pool_size,
            block=False,
            timeout=urllib3.Timeout(connect=min(timeout, 10.0), read=timeout),
            retries=urllib3.Retry(
                total=retries,
                redirect=False,  # followed hop by hop in open()
                status_forcelist=(),  # answers are retried in _request, through the gate
                backoff_factor=backoff,
                backoff_max=30.0,
                respect_retry_after_header=False,
                raise_on_status=False,  # the last answer is returned and judged by the caller
                raise_on_redirect=False,
            ),
        )

    def close(self) -> None:
        self._http.clear()

    def _route(self, url: str) -> tuple[str, dict[str, str]]:
        """The URL to connect to and the headers to send for ``url``."""
        parts = urlsplit(url)
        headers = {**REQUEST_HEADERS, "User-Agent": self.user_agent}
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        target = self.routes.get(origin)
        if target is None:
            return url, headers
        headers["Host"] = parts.netloc
        return target + url[len(origin):], headers

    def open(self, url: str, *, method: str = "GET",
             headers: Mapping[str, str] | None = None,
             check: Callable[[str], None] | None = None) -> Opened:
        """Request ``url`` and follow redirects; the final response is returned
        unread, whatever its status. ``check`` is called with every URL before it
        is requested (``url`` and each redirect target) and may refuse it by
        raising (``CrawlPolicy.check``). RecordError: ``bad-url``, ``fetch-error``
        (no answer), ``redirect-loop`` (a URL seen twice, or too many hops)."""
        hops: list[Hop] = []
        seen = set()
        while True:
            if not url.startswith(("http://", "https://")):
                raise RecordError(f"not an http(s) URL: {url!r}", status=FetchStatus.BAD_URL)
            if url in seen or len(hops) > self.max_redirects:
                what = "a loop" if url in seen else f"more than {self.max_redirects} redirects"
                raise RecordError(f"redirects from {hops[0].url} form {what} (at {url})",
                                  status=FetchStatus.REDIRECT_LOOP)
            seen.add(url)
            if check is not None:
                check(url)
            resp, slot, sent = self._request(method, url, headers)
            request_headers = [("Host", urlsplit(url).netloc)]
            request_headers += [(k, v) for k, v in sent.items() if k != "Host"]
            hop = Hop(url, resp.status, resp.reason or "", list(resp.headers.iteritems()),
                      request_headers)
            hops.append(hop)
            location = resp.headers.get("Location")
            if resp.status in REDIRECT_STATUSES and location:
                hop.location = urljoin(url, location.strip())
                _discard(resp, slot)
                url = hop.location
                continue
            return Opened(resp, hops, slot)

    def _request(self, method: str, url: str, headers: Mapping[str, str] | None
                 ) -> tuple[urllib3.BaseHTTPResponse, Slot, dict[str, str]]:
        """One hop: the answer (retried while the server is busy and the waits stay
        within ``retry_after_max``), the slot it holds and the headers sent."""
        target, sent = self._route(url)
        sent.update(headers or {})
        host = host_of(url)
        waited = 0.0
        attempt = 0
        while True:
            slot = self.gate.acquire(host) if self.gate is not None else Slot(None, host)
            try:
                resp = self._http.request(method, target, headers=sent, redirect=False,
                                          preload_content=False)
            except HTTPError as e:
                slot.release()
                raise RecordError(f"fetching {url}: {type(e).__name__}: {e}",
                                  status=FetchStatus.FETCH_ERROR) from None
            except BaseException:
                slot.release()
                raise
            if resp.status not in RETRY_STATUSES:
                return resp, slot, sent
            wait = retry_after_seconds(resp.headers.get("Retry-After"))
            if wait is None:
                wait = self.backoff * 2 ** (attempt + 1)
            if resp.status in BUSY_STATUSES and self.gate is not None:
                # the host is slowed, for every request to it: the wait is in acquire()
                self.gate.back_off(host, min(wait, self.retry_after_max))
                pause = 0.0
            else:
                pause = wait  # this request only
            if attempt >= self.retries or waited + wait > self.retry_after_max:
                return resp, slot, sent
            _discard(resp, slot)
            attempt += 1
            waited += wait
            if pause:
                time.sleep(pause)

    def download(self, url: str, dest: IO[bytes] | Writable,
                 max_bytes: int | None = None) -> Download:
        """GET ``url`` into ``dest``, streamed, at most ``max_bytes`` (default: the
        fetcher's). RecordError for anything that keeps this file from us."""
        opened = self.open(url)
        try:
            if opened.status != 200:
                raise RecordError(f"HTTP {opened.status} from {opened.url}",
                                  status=FetchStatus.HTTP_ERROR)
            size = stream_body(opened, dest.write,
                               self.max_bytes if max_bytes is None else max_bytes)
            return Download(opened.url, opened.status, opened.final.header("Content-Type"), size)
        finally:
            opened.close()

    def get_json(self, url: str, *, max_bytes: int = 64 * 2**20) -> tuple[int, Any]:
        """GET ``url`` and parse the body as JSON: ``(status, value)``; ``value`` is
        None when the body is not JSON (HTML error pages)."""
        opened = self.open(url, headers={"Accept": "application/json"})
        try:
            chunks: list[bytes] = []
            stream_body(opened, chunks.append, max_bytes)
        finally:
            opened.close()
        try:
            return opened.status, orjson.loads(b"".join(chunks))
        except orjson.JSONDecodeError:
            return opened.status, None

    def open_range(self, url: str, offset: int, length: int) -> Opened:
        """A stream of ``length`` bytes of ``url`` from ``offset`` (a WARC record),
        in ``.response``. NotFound for 404; StoreUnavailable when the source does
        not answer or keeps failing; the caller closes it."""
        headers = {"Range": f"bytes={offset}-{offset + length - 1}"} if length else {}
        try:
            opened = self.open(url, headers=headers)
        except RecordError as e:
            if e.status == FetchStatus.BAD_URL:
                raise
            raise StoreUnavailable(f"WARC source not reachable for {url} ({e})") from None
        resp = opened.response
        if resp.status == 206 or (resp.status == 200 and offset == 0):
            return opened
        opened.close()
        if resp.status in (404, 410):
            raise NotFound(f"{url}: HTTP {resp.status}")
        if resp.status == 200:
            raise RecordError(f"{url}: the server ignored the Range request",
                              status=FetchStatus.FETCH_ERROR)
        if resp.status >= 500:
            raise StoreUnavailable(f"WARC source answered HTTP {resp.status} for {url}")
        raise RecordError(f"{url}: HTTP {resp.status} for a Range request",
                          status=FetchStatus.HTTP_ERROR)


def _discard(resp: urllib3.BaseHTTPResponse, slot: Slot) -> None:
    """Done with an answer we do not keep (a redirect, a busy answer retried): a
    few bytes of HTML, read so that the connection is reused; then the slot."""
    try:
        with contextlib.suppress(HTTPError):
            resp.read(DRAIN_BYTES)
        _release(resp)
    finally:
        slot.release()


def _release(resp: urllib3.BaseHTTPResponse) -> None:
    """Give the connection back to the pool with nothing of this answer left on it:
    what remains of a short body is read; a connection with more left unread (a
    file not wanted, a body of unknown length) is closed instead, else that rest
    would be read as the next answer on the connection."""
    if not resp.closed:
        remaining = getattr(resp, "length_remaining", None)
        if remaining is not None and remaining <= DRAIN_BYTES:
            resp.drain_conn()
    if not resp.closed:
        resp.close()  # the connection too: it is not reused
    resp.release_conn()


def stream_body(opened: Opened, write: Any, max_bytes: int) -> int:
    """Pass the body of ``opened`` to ``write`` chunk by chunk (content encodings
    undone); its size. ``too-large`` past ``max_bytes``; ``fetch-error`` when the
    connection is lost, stalls past the read timeout, or ends before the
    Content-Length it announced."""
    url = opened.url
    declared = opened.final.header("Content-Length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(url, max_bytes)
    size = 0
    try:
        for chunk in opened.response.stream(CHUNK, decode_content=True):
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(url, max_bytes)
            write(chunk)
    except HTTPError as e:
        raise RecordError(f"fetching {url}: connection lost after {size:,} bytes "
                          f"({type(e).__name__})", status=FetchStatus.FETCH_ERROR) from None
    return size


def _too_large(url: str, limit: int) -> TooLarge:
    return TooLarge(f"{url} is larger than the {limit / 2**20:g} MB limit (fetch_max_mb)")
