"""Fetching over HTTP: whole files by URL, JSON from platform APIs, byte ranges
of WARC files.

One urllib3 pool manager per fetcher (thread-safe, keep-alive per host).
urllib3's own ``Retry`` does the back-off: connection failures and 429/502/503/504
answers are retried with exponential back-off, honouring ``Retry-After``.
Redirects are followed here, hop by hop (at most ``max_redirects``), so that a
web archive can record every hop and a loop is reported as one.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol
from urllib.parse import urljoin, urlsplit

import orjson
import urllib3
from urllib3.exceptions import HTTPError

from sandcrawler.errors import NotFound, RecordError, StoreUnavailable
from sandcrawler.models.statuses import FetchStatus

CHUNK = 1024 * 1024
RETRY_STATUSES = (429, 502, 503, 504)
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
#: what every request sends; a web archive records these as the request
REQUEST_HEADERS = {
    "User-Agent": "sandcrawler (+https://github.com/sandcrawler)",
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


@dataclass(slots=True)
class Opened:
    """The final response, body not read yet (``response``), and every hop to it.
    Release it with ``close()``."""

    response: urllib3.BaseHTTPResponse
    hops: list[Hop] = field(default_factory=list)

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
        self.response.release_conn()


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
    ) -> None:
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.routes = {k.rstrip("/").lower(): v.rstrip("/") for k, v in (routes or {}).items()}
        self._http = urllib3.PoolManager(
            maxsize=pool_size,
            block=False,
            timeout=urllib3.Timeout(connect=min(timeout, 10.0), read=timeout),
            retries=urllib3.Retry(
                total=retries,
                redirect=False,  # followed hop by hop in open()
                status_forcelist=RETRY_STATUSES,
                backoff_factor=backoff,
                backoff_max=30.0,
                respect_retry_after_header=True,
                raise_on_status=False,  # the last answer is returned and judged by the caller
                raise_on_redirect=False,
            ),
        )

    def close(self) -> None:
        self._http.clear()

    def _route(self, url: str) -> tuple[str, dict[str, str]]:
        """The URL to connect to and the headers to send for ``url``."""
        parts = urlsplit(url)
        headers = dict(REQUEST_HEADERS)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        target = self.routes.get(origin)
        if target is None:
            return url, headers
        headers["Host"] = parts.netloc
        return target + url[len(origin):], headers

    def open(self, url: str, *, method: str = "GET",
             headers: Mapping[str, str] | None = None) -> Opened:
        """Request ``url`` and follow redirects; the final response is returned
        unread, whatever its status. RecordError: ``bad-url``, ``fetch-error``
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
            target, sent = self._route(url)
            sent.update(headers or {})
            try:
                resp = self._http.request(method, target, headers=sent, redirect=False,
                                          preload_content=False)
            except HTTPError as e:
                raise RecordError(f"fetching {url}: {type(e).__name__}: {e}",
                                  status=FetchStatus.FETCH_ERROR) from None
            request_headers = [("Host", urlsplit(url).netloc)]
            request_headers += [(k, v) for k, v in sent.items() if k != "Host"]
            hop = Hop(url, resp.status, resp.reason or "", list(resp.headers.iteritems()),
                      request_headers)
            hops.append(hop)
            location = resp.headers.get("Location")
            if resp.status in REDIRECT_STATUSES and location:
                hop.location = urljoin(url, location.strip())
                # a redirect body is a few bytes of HTML: read it so the connection is reused
                with contextlib.suppress(HTTPError):
                    resp.read(64 * 1024)
                resp.release_conn()
                url = hop.location
                continue
            return Opened(resp, hops)

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

    def open_range(self, url: str, offset: int, length: int) -> urllib3.BaseHTTPResponse:
        """A stream of ``length`` bytes of ``url`` from ``offset`` (a WARC record).
        NotFound for 404; StoreUnavailable when the source does not answer or
        keeps failing; the caller releases the response."""
        headers = {"Range": f"bytes={offset}-{offset + length - 1}"} if length else {}
        try:
            opened = self.open(url, headers=headers)
        except RecordError as e:
            if e.status == FetchStatus.BAD_URL:
                raise
            raise StoreUnavailable(f"WARC source not reachable for {url} ({e})") from None
        resp = opened.response
        if resp.status == 206 or (resp.status == 200 and offset == 0):
            return resp
        resp.release_conn()
        if resp.status in (404, 410):
            raise NotFound(f"{url}: HTTP {resp.status}")
        if resp.status == 200:
            raise RecordError(f"{url}: the server ignored the Range request",
                              status=FetchStatus.FETCH_ERROR)
        if resp.status >= 500:
            raise StoreUnavailable(f"WARC source answered HTTP {resp.status} for {url}")
        raise RecordError(f"{url}: HTTP {resp.status} for a Range request",
                          status=FetchStatus.HTTP_ERROR)


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
