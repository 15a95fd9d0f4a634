"""Fetching over HTTP: whole files by URL, JSON from platform APIs, byte ranges
of WARC files.

One urllib3 pool manager per fetcher. Busy answers (429/502/503/504) are retried
after ``Retry-After``, through the per-host gate (``web.http.hosts``); redirects
are followed hop by hop so that each can be archived; only globally routable
addresses are connected to; every request has a deadline. A file that cannot be
had is a ``RecordError`` (the run goes on); a WARC source that does not answer
is ``StoreUnavailable`` (docs/ingest.md, "HTTP fetching").
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import re
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import IO, Any, Protocol
from urllib.parse import urlsplit

import orjson
import urllib3
from urllib3.exceptions import HTTPError

from sandcrawler.core.errors import NotFound, RecordError, StoreUnavailable
from sandcrawler.core.paths import shown
from sandcrawler.core.retry import retry_after_seconds
from sandcrawler.records.statuses import FetchStatus
from sandcrawler.version import __version__
from sandcrawler.web.http.addresses import AddressPolicy
from sandcrawler.web.http.connections import ConnectRetry, pool_manager
from sandcrawler.web.http.deadlines import (
    RequestClock,
    check_record_deadline,
    record_deadline_left,
    timing,
)
from sandcrawler.web.http.errors import describe, failure
from sandcrawler.web.http.hosts import HostGate, Slot, host_of
from sandcrawler.web.http.urls import absolute_url, header_text, redirect_target, without_fragment

#: the default: globally routable addresses only
PUBLIC_ONLY = AddressPolicy()

CHUNK = 1024 * 1024
#: a content-encoded body is let expand this much before its ratio is judged
EXPANSION_FLOOR = 1024 * 1024
#: control characters but tab, in header values
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: what is read of an answer not wanted, so that its connection can be reused
DRAIN_BYTES = 64 * 1024
RETRY_STATUSES = (429, 502, 503, 504)
#: answers that slow the whole host (the server is overloaded or rate-limiting us)
BUSY_STATUSES = (429, 503)


def rate_limited(status: int, header: Callable[[str], str | None]) -> bool:
    """Is this answer a rate limit, though its status is not 429 or 503?

    GitHub's API says "too many requests" with 403 as well as 429
    (docs/fileset.md, "GitHub releases"): a 403 is a rate limit only when it
    says so, with ``X-RateLimit-Remaining: 0`` (the hourly quota is spent) or a
    ``Retry-After`` (a secondary limit). Every other 403 is a refusal, and is
    not asked again."""
    if status != 403:
        return False
    remaining = header("X-RateLimit-Remaining")
    return (remaining is not None and remaining.strip() == "0") or bool(header("Retry-After"))


def busy_wait(header: Callable[[str], str | None]) -> float | None:
    """Seconds a busy or rate-limited answer asks us to wait: ``Retry-After``
    (seconds or an HTTP date), else, when the quota is spent
    (``X-RateLimit-Remaining: 0``), until ``X-RateLimit-Reset`` (epoch seconds:
    GitHub's); None when it says neither (the caller's back-off applies)."""
    wait = retry_after_seconds(header("Retry-After"))
    if wait is not None:
        return wait
    remaining, reset = header("X-RateLimit-Remaining"), header("X-RateLimit-Reset")
    if remaining is None or remaining.strip() != "0" or reset is None:
        return None
    try:
        return max(float(reset.strip()) - time.time(), 0.0)
    except ValueError:
        return None
REDIRECT_STATUSES = (301, 302, 303, 307, 308)


def user_agent_header(product: str = "sandcrawler", contact: str | None = None) -> str:
    """``sandcrawler/0.1.0 (+mailto:ops@example.org)``: the product, our version, and
    how a site's operator reaches whoever runs the crawl (``crawl.contact``); without
    a contact, ``sandcrawler/0.1.0`` (no one else's address stands in for it)."""
    return f"{product}/{__version__}" + (f" (+{contact})" if contact else "")


log = logging.getLogger(__name__)


def _loopback_name(host: str) -> bool:
    """``localhost`` or a loopback address (a name resolving to one is not looked up)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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
class SizeLimit:
    """A body size limit and the setting it comes from, which the ``too-large``
    message names (a page's limit is not a file's); None for a fixed limit."""

    max_bytes: int
    setting: str | None = None


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


#: one link of a Link header (RFC 8288): ``<target>; param; param``
_LINK = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,]+)*)")
_REL = re.compile(r"""\brel\s*=\s*(?:"([^"]*)"|([^\s;,]+))""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class JsonAnswer:
    """An API's answer: its status, its JSON (None when the body is not JSON, as
    HTML error pages are not), where it came from after redirects, and its
    headers (paging links, rate limits)."""

    status: int
    value: Any
    url: str
    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    @property
    def rate_limited(self) -> bool:
        """A 429, or a 403 that says it is a rate limit (``rate_limited``): the
        API is not refusing the record, it asks us to come back later."""
        return self.status == 429 or rate_limited(self.status, self.header)

    @property
    def rate_limit_wait(self) -> float | None:
        """How long the rate limit asks us to wait (``busy_wait``)."""
        return busy_wait(self.header)

    @property
    def next_link(self) -> str | None:
        """The Link header's ``rel="next"`` target, made absolute against ``url``
        (GitHub and the Hugging Face Hub page their listings so)."""
        for value in (v for k, v in self.headers if k.lower() == "link"):
            for target, params in _LINK.findall(value):
                # rel holds space-separated relation types: rel="next last" is next
                rels = " ".join((m.group(1) or m.group(2) or "").lower()
                                for m in _REL.finditer(params)).split()
                if "next" in rels:
                    return redirect_target(target.strip(), self.url)
        return None


@dataclass(slots=True, weakref_slot=True)
class Opened:
    """The final response, body not read yet (``response``), and every hop to it.
    Release it with ``close()``: the connection goes back to the pool and the
    request's place in its host's quota is given back."""

    response: urllib3.BaseHTTPResponse
    hops: list[Hop] = field(default_factory=list)
    slot: Slot | None = None
    clock: RequestClock | None = None

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
        if self.clock is not None:
            self.clock.done()  # before the connection can go back to the pool
        try:
            _release(self.response)
        finally:
            if self.slot is not None:
                self.slot.release()


class HttpFetcher:
    def __init__(
        self,
        *,
        timeout: float = 30.0,
        request_timeout: float = 30.0,
        min_rate: float = 4096.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_bytes: int = 1024 * 2**20,
        max_expansion: float = 100.0,
        pool_size: int = 4,
        max_redirects: int = 5,
        routes: Mapping[str, str] | None = None,
        user_agent: str = "sandcrawler",
        contact: str | None = None,
        gate: HostGate | None = None,
        retry_after_max: float = 120.0,
        addresses: AddressPolicy | None = PUBLIC_ONLY,
    ) -> None:
        """The parameters, by what they bound:

        - ``timeout``: seconds to connect (at most 10) and between two reads;
        - ``request_timeout``: seconds for a whole request, unless its body keeps
          coming at ``min_rate`` bytes/s or more (0: no minimum);
        - ``retries``: how many times one request is tried again after a
          connection could not be made or a 429/502/503/504 answer;
        - ``backoff``: urllib3's back-off factor for connection failures (0, 1, 2 s),
          and half the first wait after an answer without Retry-After (1, 2, 4 s);
        - ``retry_after_max``: the most one request waits in all before its 429/503
          is returned;
        - ``gate``: per-host politeness (None: no limits, as in tests of other things);
        - ``addresses``: which addresses may be connected to (None: any, for a
          fetcher of the operator's own services); the origins of ``routes`` are
          the operator's choice: their requests are not checked against it."""
        self.max_bytes = max_bytes
        self.max_expansion = max_expansion
        self.max_redirects = max_redirects
        self.retries = retries
        self.backoff = backoff
        self.retry_after_max = retry_after_max
        self.timeout = timeout
        self.request_timeout = request_timeout
        self.min_rate = min_rate
        self.gate = gate
        self.user_agent = user_agent_header(user_agent, contact)
        # a crawling fetcher (one that checks addresses) says once that it has no contact
        self._warn_no_contact = not contact and addresses is not None
        self.routes = {k.rstrip("/").lower(): v.rstrip("/") for k, v in (routes or {}).items()}
        options: dict[str, Any] = {
            "maxsize": pool_size,
            "block": False,
            "timeout": urllib3.Timeout(connect=min(timeout, 10.0), read=timeout),
            "retries": ConnectRetry(
                total=retries,
                # a request is sent again only when it could not be sent: a server
                # that answers garbage, hangs up or stalls is not asked again
                read=0,
                other=0,
                redirect=False,  # followed hop by hop in open()
                status_forcelist=(),  # answers are retried in _request, through the gate
                backoff_factor=backoff,
                backoff_max=30.0,
                respect_retry_after_header=False,
                raise_on_status=False,  # the last answer is returned and judged by the caller
                raise_on_redirect=False,
            ),
        }
        self._http = pool_manager(addresses, **options)
        # the operator's own origins (routes, WARC sources): no address check
        self._own = self._http if addresses is None else pool_manager(None, **options)

    def close(self) -> None:
        self._http.clear()
        self._own.clear()

    def _route(self, url: str) -> tuple[str, dict[str, str], bool]:
        """The URL to connect to and the headers to send for ``url``, and whether
        it is routed (to an origin of the operator's choice)."""
        parts = urlsplit(url)
        headers = {**REQUEST_HEADERS, "User-Agent": self.user_agent}
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        target = self.routes.get(origin)
        if target is None:
            return url, headers, False
        headers["Host"] = parts.netloc
        return target + url[len(origin):], headers, True

    def open(self, url: str, *, method: str = "GET",
             headers: Mapping[str, str] | None = None,
             check: Callable[[str], None] | None = None,
             own: bool = False) -> Opened:
        """Request ``url`` and follow redirects; the final response is returned
        unread, whatever its status. ``check`` is called with every URL before it
        is requested (``url`` and each redirect target) and may refuse it by
        raising (``CrawlPolicy.check``); ``own``: the URL is the operator's (a
        WARC source), its address is not checked. RecordError: ``bad-url``,
        ``fetch-error`` (no answer), ``fetch-timeout``, ``blocked-address``,
        ``redirect-loop`` (a URL seen twice, or too many hops)."""
        hops: list[Hop] = []
        seen = set()
        given = url
        while True:
            safe = absolute_url(url, "")
            if safe is None:
                where = f" (redirected from {hops[-1].url})" if hops else ""
                raise RecordError(f"not an http(s) URL: {shown(url)}{where}",
                                  status=FetchStatus.BAD_URL)
            url = without_fragment(safe)  # never sent, so never recorded
            if url in seen or len(hops) > self.max_redirects:
                what = "a loop" if url in seen else f"more than {self.max_redirects} redirects"
                raise RecordError(f"redirects from {hops[0].url} form {what} (at {url})",
                                  status=FetchStatus.REDIRECT_LOOP)
            seen.add(url)
            check_record_deadline(f"fetching {given}")
            if check is not None:
                check(url)
            resp, slot, sent, clock = self._request(method, url, headers, own)
            request_headers = [("Host", urlsplit(url).netloc)]
            request_headers += [(k, v) for k, v in sent.items() if k != "Host"]
            hop = Hop(url, resp.status, _reason(resp), _headers(resp), request_headers)
            hops.append(hop)
            location = resp.headers.get("Location")
            if resp.status in REDIRECT_STATUSES and location:
                # the next hop's URL as a browser makes it; one that is not an
                # http(s) URL is refused as bad-url at the top of the loop
                hop.location = redirect_target(location, url) or header_text(location)
                _discard(resp, slot, clock)
                url = hop.location
                continue
            return Opened(resp, hops, slot, clock)

    def _clock(self, url: str) -> RequestClock:
        """A new request's clock: ``request_timeout``, or the record's deadline
        when that comes first."""
        clock = RequestClock(self.request_timeout, min_rate=self.min_rate, url=url)
        record = record_deadline_left()
        if record is not None and record[0] < clock.deadline:
            clock = RequestClock(record[1], label="crawl.record_timeout",
                                 min_rate=self.min_rate, deadline=record[0], url=url)
        return clock

    def _request(self, method: str, url: str, headers: Mapping[str, str] | None, own: bool
                 ) -> tuple[urllib3.BaseHTTPResponse, Slot, dict[str, str], RequestClock]:
        """One hop: the answer (retried while the server is busy and the waits stay
        within ``retry_after_max``), the slot it holds, the headers sent and its
        clock (running until the answer is released)."""
        target, sent, routed = self._route(url)
        sent.update(headers or {})
        pool = self._own if routed or own else self._http
        host = host_of(url)
        if self._warn_no_contact and not (routed or own) and not _loopback_name(host):
            self._warn_no_contact = False
            log.warning("crawling %s with no contact in the User-Agent: set crawl.contact "
                        "(SANDCRAWLER_CRAWL_CONTACT) to a mailto: address or URL where the "
                        "operators of the sites crawled can reach you", host)
        waited = 0.0
        attempt = 0
        while True:
            slot = self.gate.acquire(host) if self.gate is not None else Slot(None, host)
            clock = self._clock(url)
            try:
                with timing(clock):
                    resp = pool.request(method, target, headers=sent, redirect=False,
                                        preload_content=False)
                if clock.expired:  # cut in the headers, where the end can look like theirs
                    _release(resp)
                    raise clock.timed_out(url)
                clock.body_started(resp.tell)
            except HTTPError as e:
                clock.done()
                slot.release()
                if clock.expired:
                    raise clock.timed_out(url) from None
                raise failure(url, e, read_timeout=self.timeout) from None
            except BaseException:
                clock.done()
                slot.release()
                raise
            # a rate limit slows the host like a 429, whatever its status (GitHub's 403)
            busy = resp.status in BUSY_STATUSES or rate_limited(resp.status, resp.headers.get)
            if resp.status not in RETRY_STATUSES and not busy:
                return resp, slot, sent, clock
            wait = busy_wait(resp.headers.get)
            if wait is None:
                wait = self.backoff * 2 ** (attempt + 1)
            if busy and self.gate is not None:
                # the host is slowed, for every request to it: the wait is in acquire()
                self.gate.back_off(host, min(wait, self.retry_after_max))
                pause = 0.0
            else:
                pause = wait  # this request only
            if attempt >= self.retries or waited + wait > self.retry_after_max:
                # a wait past retry_after_max is not waited here: the answer is
                # returned (the host stays slowed for up to retry_after_max), and
                # a platform API reads it as error-platform-api, never as a refusal
                # (JsonAnswer.rate_limited)
                return resp, slot, sent, clock
            _discard(resp, slot, clock)
            attempt += 1
            waited += wait
            if pause:
                time.sleep(pause)

    def download(self, url: str, dest: IO[bytes] | Writable,
                 max_bytes: int | SizeLimit | None = None) -> Download:
        """GET ``url`` into ``dest``, streamed, at most ``max_bytes`` (default: the
        fetcher's). RecordError for anything that keeps this file from us."""
        opened = self.open(url)
        try:
            if opened.status != 200:
                raise RecordError(f"HTTP {opened.status} from {opened.url}",
                                  status=FetchStatus.HTTP_ERROR)
            limit = SizeLimit(self.max_bytes, "http.max_mb") if max_bytes is None else max_bytes
            size = self.stream_body(opened, dest.write, limit)
            return Download(opened.url, opened.status, opened.final.header("Content-Type"), size)
        finally:
            opened.close()

    def get_json(self, url: str, *, max_bytes: int = 64 * 2**20) -> tuple[int, Any]:
        """GET ``url`` and parse the body as JSON: ``(status, value)``; ``value`` is
        None when the body is not JSON (HTML error pages)."""
        answer = self.get_answer(url, max_bytes=max_bytes)
        return answer.status, answer.value

    def get_answer(self, url: str, *, max_bytes: int = 64 * 2**20) -> JsonAnswer:
        """``get_json`` with the answer's final URL and headers."""
        opened = self.open(url, headers={"Accept": "application/json"})
        try:
            chunks: list[bytes] = []
            self.stream_body(opened, chunks.append, max_bytes)
        finally:
            opened.close()
        try:
            value = orjson.loads(b"".join(chunks))
        except orjson.JSONDecodeError:
            value = None
        return JsonAnswer(opened.status, value, opened.url, opened.final.headers)

    def stream_body(self, opened: Opened, write: Callable[[bytes], object],
                    limit: int | SizeLimit) -> int:
        """Pass the body of ``opened`` to ``write`` in pieces of up to ``CHUNK`` bytes
        (content encodings undone); its size. ``too-large`` past ``limit``, or
        when a content-encoded body expands more than ``max_expansion`` times (past
        its first MiB); ``fetch-timeout`` when the request's clock cut it or it
        stalled past the read timeout; ``fetch-error`` when the connection is lost,
        or ends before the Content-Length it announced."""
        url = opened.url
        resp = opened.response
        if not isinstance(limit, SizeLimit):
            limit = SizeLimit(limit)
        max_bytes = limit.max_bytes
        declared = opened.final.header("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise _too_large(url, limit)
        encoded = (opened.final.header("Content-Encoding") or "identity").strip().lower() \
            not in ("", "identity")
        size = 0
        pending: list[bytes] = []
        held = 0
        try:
            # read1: what has come, as it comes, so a slow body shows its progress to
            # the request's clock and a short one its true length; a body that is not
            # encoded is read raw (urllib3's decoding buffer would copy every byte twice)
            while chunk := resp.read1(CHUNK, decode_content=encoded):
                size += len(chunk)
                if size > max_bytes:
                    raise _too_large(url, limit)
                if encoded and size > EXPANSION_FLOOR and size > self.max_expansion * resp.tell():
                    raise TooLarge(f"{url}: a content-encoded body that expands more than "
                                   f"{self.max_expansion:g} times ({resp.tell():,} bytes became "
                                   f"{size:,}), refused as a compression bomb")
                pending.append(chunk)
                held += len(chunk)
                if held >= CHUNK:
                    write(b"".join(pending))
                    pending, held = [], 0
        except (HTTPError, OSError) as e:
            if opened.clock is not None and opened.clock.expired:
                raise opened.clock.timed_out(url) from None
            status, what = describe(e, read_timeout=self.timeout, received=resp.tell())
            raise RecordError(f"fetching {url}: {what}", status=status) from None
        if opened.clock is not None and opened.clock.expired:  # cut where EOF looks the same
            raise opened.clock.timed_out(url)
        if pending:
            write(b"".join(pending))
        return size

    def open_range(self, url: str, offset: int, length: int) -> Opened:
        """A stream of ``length`` bytes of ``url`` from ``offset`` (a WARC record),
        in ``.response``. NotFound for 404; StoreUnavailable when the source does
        not answer or keeps failing; the caller closes it. The source is the
        operator's: its address is not checked."""
        headers = {"Range": f"bytes={offset}-{offset + length - 1}"} if length else {}
        try:
            opened = self.open(url, headers=headers, own=True)
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


def _discard(resp: urllib3.BaseHTTPResponse, slot: Slot, clock: RequestClock) -> None:
    """Done with an answer we do not keep (a redirect, a busy answer retried): a
    few bytes of HTML, read so that the connection is reused; then the slot."""
    try:
        with contextlib.suppress(HTTPError, OSError):
            resp.read(DRAIN_BYTES)
    finally:
        clock.done()  # before the connection can go back to the pool
        try:
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


def _reason(resp: urllib3.BaseHTTPResponse) -> str:
    """The reason phrase as recorded: the server's when it is printable ASCII,
    else the standard one (a WARC status line is ASCII; clients ignore it)."""
    reason = resp.reason or ""
    if reason.isascii() and reason.isprintable():
        return reason
    try:
        return HTTPStatus(resp.status).phrase
    except ValueError:
        return ""


def _headers(resp: urllib3.BaseHTTPResponse) -> list[tuple[str, str]]:
    """The response headers as recorded: control characters in a value (a NUL
    or an escape sequence in a Location) percent-encoded, so they reach neither
    a WARC file nor a terminal."""
    return [(name, _CONTROL.sub(lambda m: f"%{ord(m.group()):02X}", value))
            for name, value in resp.headers.iteritems()]


def _too_large(url: str, limit: SizeLimit) -> TooLarge:
    setting = f" ({limit.setting})" if limit.setting else ""
    return TooLarge(f"{url} is larger than the {limit.max_bytes / 2**20:g} MB limit{setting}")
