"""The crawl of one file ingest request: from ``base_url`` to the full text.

Each step fetches one URL (following its redirects) into the web archive, or
replays it from there when it was captured before, then judges what came back
by its bytes: the type asked for ends the crawl (``found``); an HTML page gives
its metadata and its next full-text link, or a status saying why there is none;
anything else is ``wrong-mimetype``. Every URL is checked against the crawl
policy first, within ``max_hops`` steps and the record's deadline
(docs/ingest.md, "The crawl").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from sandcrawler.core.errors import NotFound, RecordError
from sandcrawler.core.mime import SNIFF_BYTES, normalize_mime, sniff_mime
from sandcrawler.core.spool import spool_file
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.files import FileMeta
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.ingest import IngestType
from sandcrawler.records.statuses import FetchStatus, IngestFileStatus, Status
from sandcrawler.web.archive.captures import WarcSession, WebArchive
from sandcrawler.web.html.landing import HtmlPage, parse_html
from sandcrawler.web.http.deadlines import check_record_deadline, record_deadline
from sandcrawler.web.http.fetch import Hop, SizeLimit
from sandcrawler.web.http.urls import canonical_url
from sandcrawler.web.policy import CrawlPolicy

#: what the bytes of a terminal are, for the crawl
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
WANTED: dict[str, frozenset[str]] = {
    IngestType.PDF: frozenset({"application/pdf"}),
    IngestType.XML: frozenset({"application/xml", "text/xml", "application/jats+xml"}),
    IngestType.HTML: HTML_TYPES,
}
NO_LINK = {
    IngestType.PDF: IngestFileStatus.NO_PDF_LINK,
    IngestType.XML: IngestFileStatus.NO_XML_LINK,
    IngestType.HTML: IngestFileStatus.NO_HTML_FULLTEXT,
}


@dataclass(slots=True)
class Fetched:
    """One step's capture: its rows (redirects first, the terminal last), the
    terminal body's metadata (a 200), and the body itself, on disk or (for a
    replay) read from the archive when first asked for."""

    rows: list[CdxRecord]
    file_meta: FileMeta | None
    revisit_of: CdxRecord | None = None
    replayed: bool = False
    _spool: Path | None = None
    _load: Callable[[Path], None] | None = None
    _spool_dir: Path | None = None

    @property
    def terminal(self) -> CdxRecord:
        return self.rows[-1]

    def path(self) -> Path:
        """The body on disk (read from the archive now, for a replay)."""
        if self._spool is None:
            assert self._load is not None, "a capture without a body"
            self._spool = spool_file(self._spool_dir, ".body")
            try:
                self._load(self._spool)
            except BaseException:
                self.close()
                raise
        return self._spool

    def head(self, size: int = -1) -> bytes:
        with self.path().open("rb") as f:
            return f.read(size)

    def close(self) -> None:
        if self._spool is not None:
            self._spool.unlink(missing_ok=True)
            self._spool = None


@dataclass(slots=True)
class CrawlResult:
    """Where a crawl ended: its status, every step's URL, the terminal capture,
    and what the landing page said."""

    status: Status
    hops: list[str] = field(default_factory=list)
    fetched: Fetched | None = None
    error: str | None = None
    biblio: HtmlBiblio | None = None
    references: list[str] = field(default_factory=list)
    landing_url: str | None = None

    @property
    def found(self) -> bool:
        return self.status == IngestFileStatus.SUCCESS

    @property
    def replayed(self) -> bool:
        """Every step came from the archive: nothing was fetched."""
        return self.fetched is not None and all(s.replayed for s in self._steps)

    _steps: list[Fetched] = field(default_factory=list)

    def close(self) -> None:
        for step in self._steps:
            step.close()


class Crawler:
    def __init__(self, archive: WebArchive, *, policy: CrawlPolicy | None = None,
                 max_hops: int = 6, max_bytes: int = 1024 * 2**20,
                 max_html_bytes: int = 16 * 2**20, record_timeout: float | None = None,
                 spool_dir: Path | None = None) -> None:
        """``policy``: what may be fetched (the blocklist also keeps URLs from being
        replayed; robots.txt is asked only before a fetch); ``record_timeout``:
        seconds one crawl may take (its requests end with it, but for a download
        still coming at the fetcher's minimum rate); ``spool_dir``: where bodies
        replayed from the archive are put on disk (``sandcrawler.core.spool``)."""
        self.archive = archive
        self.policy = policy
        self.max_hops = max_hops
        self.max_bytes = max_bytes
        self.max_html_bytes = max_html_bytes
        self.record_timeout = record_timeout
        self.spool_dir = spool_dir

    def crawl(self, session: WarcSession, url: str, ingest_type: str, *,
              force: bool = False) -> CrawlResult:
        """Follow ``url`` to full text of ``ingest_type``. Record-level failures are
        the result's status; a store or database failure raises."""
        result = CrawlResult(status=IngestFileStatus.SUCCESS)
        visited: set[str] = set()
        try:
            with record_deadline(self.record_timeout):
                self._crawl(session, url, IngestType(ingest_type), force, result, visited)
        except RecordError as e:
            result.status, result.error = e.status, str(e)
        return result

    def _crawl(self, session: WarcSession, url: str, ingest_type: IngestType, force: bool,
               result: CrawlResult, visited: set[str]) -> None:
        wanted = WANTED[ingest_type]
        while True:
            if len(result.hops) >= self.max_hops:
                raise RecordError(f"no {ingest_type} full text within {self.max_hops} hops "
                                  f"of {result.hops[0]}", IngestFileStatus.MAX_HOPS_EXCEEDED)
            check_record_deadline(f"crawling {result.hops[0] if result.hops else url}")
            result.hops.append(url)
            fetched = self._fetch(session, url, force)
            result._steps.append(fetched)
            result.fetched = fetched
            terminal = fetched.terminal
            visited.update(_norm(row.url) for row in fetched.rows)
            if terminal.status_code != 200 or fetched.file_meta is None:
                raise RecordError(f"{terminal.url} answered HTTP {terminal.status_code}",
                                  IngestFileStatus.TERMINAL_BAD_STATUS)
            mime = fetched.file_meta.mimetype
            if mime in wanted and ingest_type != IngestType.HTML:
                return
            if mime not in HTML_TYPES:
                raise RecordError(f"{terminal.url} is {mime}, not {ingest_type} or a page "
                                  "linking to it", IngestFileStatus.WRONG_MIMETYPE)
            if fetched.file_meta.size_bytes > self.max_html_bytes:
                raise RecordError(f"{terminal.url}: a page of {fetched.file_meta.size_bytes:,} "
                                  f"bytes, over the {self.max_html_bytes / 2**20:g} MB limit "
                                  "for pages (crawl.max_html_mb)", FetchStatus.TOO_LARGE)
            page = parse_html(fetched.head(), terminal.url, mime)
            if result.biblio is None and result.landing_url is None:
                result.biblio = page.biblio
                result.references = list(page.references)
                result.landing_url = terminal.url
            if page.blocked:
                raise RecordError(f"{terminal.url}: {page.blocked}",
                                  IngestFileStatus.BLOCKED_COOKIE)
            following = self._next(page, ingest_type, visited)
            if following is None:
                if ingest_type == IngestType.HTML:
                    return  # the page itself is the candidate full text
                raise RecordError(f"{terminal.url}: no link to {ingest_type} full text",
                                  NO_LINK[ingest_type])
            url = following

    def _next(self, page: HtmlPage, ingest_type: IngestType, visited: set[str]) -> str | None:
        """The next URL: a meta refresh, else the best full-text link not visited;
        ``link-loop`` when every link leads back."""
        candidates = [page.meta_refresh] if page.meta_refresh else []
        candidates += [link.url for link in page.fulltext_links(ingest_type.value)]
        # the first fresh one only: a canonical form costs tens of microseconds,
        # and a landing page can list hundreds of links
        fresh = next((u for u in candidates if _norm(u) not in visited), None)
        if fresh is not None:
            return fresh
        if candidates and ingest_type != IngestType.HTML:
            raise RecordError(f"{page.url}: every full-text link leads back to a page "
                              f"already visited ({candidates[0]})", IngestFileStatus.LINK_LOOP)
        return None

    def _fetch(self, session: WarcSession, url: str, force: bool) -> Fetched:
        if self.policy is not None:
            self.policy.check_listed(url)
        if not force and (chain := self.archive.lookup(url)) is not None:
            replayed = self._replay(chain)
            if replayed is not None:
                return replayed
        # the fetcher asks the policy (blocklist, robots.txt) about this URL and
        # every redirect target before requesting it; a robots.txt fetched to
        # answer goes into this session's WARC file too
        check = partial(self.policy.check, session=session) if self.policy else None
        capture = session.capture(url, max_bytes=self._limit, check=check)
        spool, capture.spool = capture.spool, None  # the Fetched owns it now
        if capture.file_meta is None and spool is not None:
            spool.unlink(missing_ok=True)
            spool = None
        return Fetched(capture.rows, capture.file_meta, capture.revisit_of, _spool=spool)

    def _limit(self, hop: Hop) -> SizeLimit:
        """A page says it is HTML: the page limit, so an endless page stops early."""
        declared = normalize_mime(hop.header("Content-Type"))
        if declared in HTML_TYPES:
            return SizeLimit(self.max_html_bytes, "crawl.max_html_mb")
        return SizeLimit(self.max_bytes, "http.max_mb")

    def _replay(self, chain: list[CdxRecord]) -> Fetched | None:
        """The capture ``chain`` as a step, its body read from the archive; None
        when it cannot be replayed (a revisit whose capture is gone, a row
        without digests): then it is fetched again."""
        terminal = chain[-1]
        meta = self.archive.payload_meta(terminal)
        original = self.archive.original(terminal)
        if meta is None or original.is_revisit:
            return None

        def load(dest: Path) -> None:
            with dest.open("wb") as f:
                self.archive.read_payload(terminal, f, max_bytes=self.max_bytes)

        fetched = Fetched(chain, meta, revisit_of=original if terminal.is_revisit else None,
                          replayed=True, _load=load, _spool_dir=self.spool_dir)
        try:
            # the index keeps the declared type; the crawl goes by what the bytes are
            sniffed = sniff_mime(fetched.head(SNIFF_BYTES))
        except (NotFound, RecordError):  # the WARC file is gone or damaged
            fetched.close()
            return None
        fetched.file_meta = meta.model_copy(update={"mimetype": sniffed})
        return fetched


def _norm(url: str) -> str:
    """A URL as visited: its canonical form, so that ``?b=1&a=2`` and ``?a=2&b=1``,
    or ``/a/../b`` and ``/b``, are one page (and no link loop is crawled twice)."""
    return canonical_url(url)


def close_all(results: list[CrawlResult]) -> None:
    for r in results:
        with contextlib.suppress(OSError):
            r.close()
