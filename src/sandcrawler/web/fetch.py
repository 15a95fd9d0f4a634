"""Fetching bytes over HTTP: whole files by URL, and byte ranges of WARC files.

One urllib3 pool manager per fetcher (thread-safe, keep-alive per host).
urllib3's own ``Retry`` does the back-off: connection failures and 429/502/503/504
answers are retried with exponential back-off, honouring ``Retry-After``;
redirects are followed (at most 5).

Two kinds of failure are kept apart, because callers treat them differently:

* a file on the web that cannot be had is that record's problem (``RecordError``:
  ``fetch-error`` when the host does not answer, ``http-error`` for a non-200
  answer, ``too-large`` over the size limit); the run goes on;
* a WARC source that does not answer is our own infrastructure being down
  (``StoreUnavailable``): workers back off and retry the batch, batch commands
  exit 3, and nothing is marked done.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

import urllib3
from urllib3.exceptions import HTTPError

from sandcrawler.errors import NotFound, RecordError, StoreUnavailable

CHUNK = 1024 * 1024
RETRY_STATUSES = (429, 502, 503, 504)


class TooLarge(RecordError):
    status = "too-large"


@dataclass(frozen=True, slots=True)
class Download:
    url: str  # after redirects
    status_code: int
    content_type: str | None
    size: int


class HttpFetcher:
    def __init__(
        self,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_bytes: int = 1024 * 2**20,
        pool_size: int = 4,
    ) -> None:
        self.max_bytes = max_bytes
        self._http = urllib3.PoolManager(
            maxsize=pool_size,
            block=False,
            timeout=urllib3.Timeout(connect=min(timeout, 10.0), read=timeout),
            retries=urllib3.Retry(
                total=retries,
                redirect=5,
                status_forcelist=RETRY_STATUSES,
                backoff_factor=backoff,
                backoff_max=30.0,
                respect_retry_after_header=True,
                raise_on_status=False,  # the last answer is returned and judged below
                raise_on_redirect=False,
            ),
            headers={"User-Agent": "sandcrawler"},
        )

    def close(self) -> None:
        self._http.clear()

    def download(self, url: str, dest: IO[bytes]) -> Download:
        """GET ``url`` into ``dest`` (content encodings undone), streamed, at most
        ``max_bytes``. RecordError for anything that keeps this file from us."""
        if not url.startswith(("http://", "https://")):
            raise RecordError(f"not an http(s) URL: {url!r}", status="bad-url")
        try:
            resp = self._http.request("GET", url, preload_content=False)
        except HTTPError as e:
            raise RecordError(f"fetching {url}: {type(e).__name__}: {e}",
                              status="fetch-error") from None
        try:
            if resp.status != 200:
                raise RecordError(f"HTTP {resp.status} from {url}", status="http-error")
            declared = resp.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > self.max_bytes:
                raise _too_large(url, self.max_bytes)
            size = 0
            try:
                for chunk in resp.stream(CHUNK, decode_content=True):
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise _too_large(url, self.max_bytes)
                    dest.write(chunk)
            except HTTPError as e:
                raise RecordError(f"fetching {url}: connection lost after {size:,} bytes "
                                  f"({type(e).__name__})", status="fetch-error") from None
            final = resp.geturl() or url
            return Download(final, resp.status, resp.headers.get("Content-Type"), size)
        finally:
            resp.release_conn()

    def open_range(self, url: str, offset: int, length: int) -> urllib3.BaseHTTPResponse:
        """A stream of ``length`` bytes of ``url`` from ``offset`` (a WARC record).
        NotFound for 404; StoreUnavailable when the source does not answer or
        keeps failing; the caller releases the response."""
        headers = {"Range": f"bytes={offset}-{offset + length - 1}"} if length else {}
        try:
            resp = self._http.request("GET", url, headers=headers, preload_content=False)
        except HTTPError as e:
            raise StoreUnavailable(
                f"WARC source not reachable for {url} ({type(e).__name__}: {e})") from None
        if resp.status == 206 or (resp.status == 200 and offset == 0):
            return resp
        resp.release_conn()
        if resp.status in (404, 410):
            raise NotFound(f"{url}: HTTP {resp.status}")
        if resp.status == 200:
            raise RecordError(f"{url}: the server ignored the Range request",
                              status="fetch-error")
        if resp.status >= 500:
            raise StoreUnavailable(f"WARC source answered HTTP {resp.status} for {url}")
        raise RecordError(f"{url}: HTTP {resp.status} for a Range request", status="http-error")


def _too_large(url: str, limit: int) -> TooLarge:
    return TooLarge(f"{url} is larger than the {limit / 2**20:g} MB limit (fetch_max_mb)")
