"""robots.txt (RFC 9309), read with Protego (Scrapy's parser).

``RobotsRules.reason(url)`` says why our user agent may not fetch ``url``, or
None when it may. Each origin's ``/robots.txt`` is fetched once through the
fetcher and kept per process for ``ttl`` seconds; an unreachable one disallows
the whole origin, a missing one allows everything. A ``Crawl-delay`` slows the
host in the gate, and a robots.txt fetched for a crawl is archived with it
(docs/ingest.md, "robots.txt").
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from protego import Protego
from urllib3.exceptions import HTTPError

from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import FetchStatus, IngestFileStatus, Status
from sandcrawler.web.archive.captures import WarcSession
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler.web.http.hosts import HostGate, host_of

#: what a robots.txt that cannot be had for these reasons is: unavailable, not unreachable
UNAVAILABLE = frozenset({FetchStatus.REDIRECT_LOOP, FetchStatus.BLOCKED_ADDRESS,
                         FetchStatus.BAD_URL})
#: seconds before robots.txt of a host that did not answer (or answered 429/5xx) is
#: asked again
RETRY_UNREACHABLE = 60.0

log = logging.getLogger(__name__)

#: RFC 9309 2.5: crawlers must read at least 500 KiB
MAX_BYTES = 500 * 1024


@dataclass(frozen=True, slots=True)
class Refusal:
    status: Status  # robots-disallowed, or fetch-error for a host that does not answer
    reason: str


@dataclass(frozen=True, slots=True)
class _Entry:
    rules: Protego | None  # None: no rules (everything allowed, or everything not)
    blocked: Refusal | None  # why the whole origin is disallowed (unreachable robots.txt)
    expires: float


class RobotsRules:
    def __init__(
        self,
        fetcher: HttpFetcher,
        *,
        agent: str = "sandcrawler",
        ignore_hosts: Iterable[str] = (),
        gate: HostGate | None = None,
        ttl: float = 3600.0,
        max_origins: int = 10_000,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.fetcher = fetcher
        self.agent = agent
        self.ignore_hosts = frozenset(h.strip().lower() for h in ignore_hosts)
        self.gate = gate
        self.ttl = ttl
        self.max_origins = max_origins
        self.max_bytes = max_bytes
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._fetching: dict[str, threading.Event] = {}

    def allowed(self, url: str) -> bool:
        return self.refusal(url) is None

    def reason(self, url: str) -> str | None:
        """Why robots.txt keeps us from ``url``, or None when it does not."""
        refusal = self.refusal(url)
        return None if refusal is None else refusal.reason

    def refusal(self, url: str, session: WarcSession | None = None) -> Refusal | None:
        """Why robots.txt keeps us from ``url`` and the status to give, or None; a
        robots.txt fetched now is archived in ``session``, if given."""
        host = host_of(url)
        if not host or host in self.ignore_hosts:
            return None
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        if parts.path == "/robots.txt":
            return None
        entry = self._entry(origin, host, session)
        if entry.blocked is not None:
            return entry.blocked
        if entry.rules is None or entry.rules.can_fetch(url, self.agent):
            return None
        return Refusal(IngestFileStatus.ROBOTS_DISALLOWED,
                       f"{origin}/robots.txt disallows {parts.path or '/'} for {self.agent}")

    def _entry(self, origin: str, host: str, session: WarcSession | None) -> _Entry:
        """The origin's rules, fetched by one thread while the others wait."""
        while True:
            with self._lock:
                entry = self._cache.get(origin)
                if entry is not None and entry.expires > time.monotonic():
                    self._cache.move_to_end(origin)
                    return entry
                pending = self._fetching.get(origin)
                if pending is None:
                    pending = self._fetching[origin] = threading.Event()
                    break
            pending.wait()
        try:
            entry = self._fetch(origin, host, session)
            with self._lock:
                self._cache[origin] = entry
                self._cache.move_to_end(origin)
                while len(self._cache) > self.max_origins:
                    self._cache.popitem(last=False)
            return entry
        finally:
            with self._lock:
                del self._fetching[origin]
            pending.set()

    def _fetch(self, origin: str, host: str, session: WarcSession | None) -> _Entry:
        url = f"{origin}/robots.txt"
        expires = time.monotonic() + self.ttl
        try:
            opened = self.fetcher.open(url, headers={"Accept": "text/plain, */*"})
        except RecordError as e:
            if e.status in UNAVAILABLE:  # RFC 9309 2.3.1.2: unavailable
                # (a robots.txt on an address not fetched: so is the page, if it is
                # there too, and the page's own fetch says so)
                log.info("%s: %s; treated as unavailable, everything allowed", url, e)
                return _Entry(None, None, expires)
            if e.status in (FetchStatus.FETCH_ERROR, FetchStatus.FETCH_TIMEOUT):
                # the host does not answer at all, or not in time
                why, refused = f"the host does not answer ({e})", e.status
            else:
                why = f"{url} is unreachable ({e}); the whole site is disallowed (RFC 9309)"
                refused = IngestFileStatus.ROBOTS_DISALLOWED
            # one line per origin, not per record (dead hosts are common in a crawl)
            log.info("%s", why)
            # asked again soon: an outage is not a site's policy
            return _Entry(None, Refusal(refused, why), time.monotonic() + RETRY_UNREACHABLE)
        try:
            status = opened.status
            body, cut = b"", None
            if session is not None or 200 <= status < 300:
                body, cut = _read_prefix(opened.response, self.max_bytes)
                if opened.clock is not None and opened.clock.expired:
                    cut = "time"
            if session is not None:
                session.record_read(opened, body, truncated=cut)
            if status == 429 or status >= 500:
                why = (f"{url} answered HTTP {status}; the whole site is disallowed until "
                       "it answers (RFC 9309)")
                log.info("%s", why)
                expires = time.monotonic() + RETRY_UNREACHABLE
                return _Entry(None, Refusal(IngestFileStatus.ROBOTS_DISALLOWED, why), expires)
            if not 200 <= status < 300:  # 4xx, or a redirect without a Location
                return _Entry(None, None, expires)
            if cut == "time" and opened.clock is not None:
                why = f"the host does not answer in time ({url}: {opened.clock.describe()})"
                log.info("%s", why)
                return _Entry(None, Refusal(FetchStatus.FETCH_TIMEOUT, why),
                              time.monotonic() + RETRY_UNREACHABLE)
        finally:
            opened.close()
        rules = Protego.parse(body.decode("utf-8", errors="replace"))
        self._apply_delay(host, rules)
        return _Entry(rules, None, expires)

    def _apply_delay(self, host: str, rules: Protego) -> None:
        if self.gate is None:
            return
        delay = rules.crawl_delay(self.agent)
        rate = rules.request_rate(self.agent)
        if rate is not None and rate.requests > 0:
            delay = max(delay or 0.0, rate.seconds / rate.requests)
        self.gate.set_delay(host, delay)


def _read_prefix(response: urllib3.BaseHTTPResponse, limit: int) -> tuple[bytes, str | None]:
    """At most ``limit`` bytes of the body, and why that is not all of it (a WARC
    ``WARC-Truncated`` reason) or None; a connection lost midway keeps what came."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.stream(64 * 1024, decode_content=True):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return b"".join(chunks)[:limit], "length"
    except HTTPError as e:
        log.info("robots.txt body cut short after %d bytes (%s)", size, type(e).__name__)
        return b"".join(chunks), "disconnect"
    return b"".join(chunks), None
