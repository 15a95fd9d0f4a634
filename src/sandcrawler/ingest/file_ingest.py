"""The file ingester: ingest requests of type ``pdf``, ``xml`` and ``html`` in,
file ingest results (``records.ingest.FileIngestResult``) out.

For a batch: bad requests and recorded hits are answered without a fetch; the
rest are crawled ``concurrency`` at a time, each thread into a WARC file of its
own; the WARC files are committed before anything refers to them; each full
text found is processed by its kind's processor (docs/ingest.md, "The file
ingester"). Every status is in the table of ``docs/ingest.md``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.ingest.crawl import Crawler, CrawlResult, close_all
from sandcrawler.ingest.found import FoundFile, Processor
from sandcrawler.ingest.history import IngestHistory
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.files import FileMeta, Terminal
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.ingest import (
    FILE_INGEST_TYPES,
    FileIngestResult,
    IngestRequest,
    IngestType,
    Processing,
)
from sandcrawler.records.statuses import IngestFileStatus, ProcessingStatus, Status
from sandcrawler.storage.catalogue import identifiers_from_metadata
from sandcrawler.web.archive.captures import WarcSession, WebArchive
from sandcrawler.web.http.urls import request_url

#: processing statuses that mean an HTML page is not the article's full text
NOT_FULLTEXT = frozenset({ProcessingStatus.NO_MAIN_TEXT})


class FileIngester:
    """Built by the composition root with the web archive, a crawler, one
    processor per ingest type and the ingest history."""

    def __init__(self, archive: WebArchive, crawler: Crawler,
                 processors: Mapping[str, Callable[[], Processor]],
                 history: IngestHistory, *, concurrency: int = 1) -> None:
        """``processors``: ingest type -> a function building its processor, called
        when the first file of that type is found (a run of recorded hits, or of
        HTML only, never starts a PDF sandbox or loads trafilatura);
        ``concurrency``: requests of a batch crawled at once."""
        self.archive = archive
        self.crawler = crawler
        self.factories = processors
        self.processors: dict[str, Processor] = {}
        self.history = history
        self.concurrency = concurrency

    def processor(self, kind: str) -> Processor:
        if kind not in self.processors:
            self.processors[kind] = self.factories[kind]()
        return self.processors[kind]

    def close(self) -> None:
        while self.processors:
            self.processors.popitem()[1].close()

    def ingest(self, request: IngestRequest) -> FileIngestResult:
        return self.ingest_batch([request])[0]

    def ingest_batch(self, requests: list[IngestRequest]) -> list[FileIngestResult]:
        """One result per request, in order; a store or database failure raises
        (the batch is retried whole: nothing of it was made visible)."""
        results: dict[int, FileIngestResult] = {}
        hits = self.history.hits((r.ingest_type, r.base_url) for r in requests
                                 if not r.force_recrawl)
        todo: list[tuple[int, str]] = []
        for i, request in enumerate(requests):
            try:
                settled = self._before_crawl(request, hits)
            except RecordError as e:
                results[i] = _result(request, e.status, error_message=str(e))
                continue
            if isinstance(settled, FileIngestResult):
                results[i] = settled
            else:
                todo.append((i, settled))
        crawls: list[tuple[int, CrawlResult]] = []
        try:
            crawls = self._crawl_all(requests, todo)
            for i, crawl in crawls:
                results[i] = self._after_crawl(requests[i], crawl)
        finally:
            close_all([c for _, c in crawls])
        return [results[i] for i in range(len(requests))]

    def _crawl_all(self, requests: list[IngestRequest], todo: list[tuple[int, str]]
                   ) -> list[tuple[int, CrawlResult]]:
        """Crawl ``todo`` (index, URL), ``concurrency`` at a time, so that a slow
        host holds one crawler and not the batch; each crawling thread writes a WARC
        file of its own. Every file is committed (made visible, indexed) before
        this returns; a store or database failure raises, and what any thread
        wrote stays invisible."""
        sessions: list[WarcSession] = []
        done: list[tuple[int, CrawlResult]] = []
        lock = threading.Lock()
        local = threading.local()

        def crawl(i: int, url: str) -> None:
            session = getattr(local, "session", None)
            if session is None:
                session = local.session = self.archive.session()
                with lock:
                    sessions.append(session)
            request = requests[i]
            result = self.crawler.crawl(session, url, request.ingest_type,
                                        force=request.force_recrawl)
            with lock:
                done.append((i, result))

        try:
            with ThreadPoolExecutor(max(1, min(self.concurrency, len(todo))),
                                    thread_name_prefix="sandcrawler-crawl") as pool:
                futures = [pool.submit(crawl, i, url) for i, url in todo]
                try:
                    for future in futures:
                        future.result()
                except BaseException:
                    pool.shutdown(cancel_futures=True)  # what has not started, never will
                    raise
            for session in sessions:
                session.commit()  # a session that captured nothing stores no file
        except BaseException:
            for session in sessions:
                session.abort()
            close_all([c for _, c in done])
            raise
        return sorted(done, key=lambda item: item[0])

    def _before_crawl(self, request: IngestRequest,
                      hits: Mapping[tuple[str, str], Mapping[str, Any]]
                      ) -> str | FileIngestResult:
        """The URL to crawl (``base_url`` with spaces and non-ASCII characters
        encoded), or the result when none is needed (a recorded hit)."""
        url = request_url(request.base_url)
        if url is None:
            raise RecordError(f"base_url {request.base_url!r} is not an http(s) URL",
                              IngestFileStatus.BAD_REQUEST)
        if request.ingest_type not in FILE_INGEST_TYPES:
            types = ", ".join(sorted(FILE_INGEST_TYPES))
            raise RecordError(f"ingest type {request.ingest_type!r} is not a file type "
                              f"({types})", IngestFileStatus.SKIP_INGEST_TYPE)
        if request.force_recrawl:
            return url
        row = hits.get((request.ingest_type, request.base_url))
        if row is None:
            return url
        terminal = None
        if row.get("terminal_url") and row.get("terminal_dt"):
            terminal = Terminal.model_validate(
                {k: row[k] for k in ("terminal_url", "terminal_dt", "terminal_status_code",
                                     "terminal_sha1hex")})
        processing = cdx = None
        if sha1 := row.get("terminal_sha1hex"):
            # where the file is: its document, and its capture
            processing = self.history.processed(request.ingest_type, sha1)
            cdx = self.archive.find_sha1(sha1)
        return _result(request, IngestFileStatus.SUCCESS_EXISTING, terminal=terminal,
                       cdx=cdx, processing=processing)

    def _after_crawl(self, request: IngestRequest, crawl: CrawlResult) -> FileIngestResult:
        status: Status = crawl.status
        error = crawl.error
        fetched = crawl.fetched
        processing = None
        if crawl.found and fetched is not None and fetched.file_meta is not None:
            kind = IngestType(request.ingest_type)
            if not request.force_recrawl:
                processing = self.history.processed(kind, fetched.file_meta.sha1hex)
            if processing is None:
                found = FoundFile(
                    path=fetched.path(), file_meta=fetched.file_meta, cdx=fetched.terminal,
                    request=request, biblio=crawl.biblio, references=crawl.references,
                    identifiers=work_identifiers(crawl.biblio, request),
                    landing_url=crawl.landing_url)
                processing = self.processor(kind).process(found)
            elif crawl.replayed:
                # archived and processed before, nothing fetched now
                status = IngestFileStatus.SUCCESS_EXISTING
            if kind == IngestType.HTML and processing.status in NOT_FULLTEXT:
                status = IngestFileStatus.NO_HTML_FULLTEXT
                error = processing.error or (f"{fetched.terminal.url}: a page without an "
                                             "article's main text")
        if fetched is None:
            return _result(request, status, hops=crawl.hops, html_biblio=crawl.biblio,
                           processing=processing, error_message=error)
        return _result(request, status, hops=crawl.hops, terminal=fetched.terminal.to_terminal(),
                       file_meta=fetched.file_meta, cdx=fetched.terminal,
                       revisit_cdx=fetched.revisit_of, html_biblio=crawl.biblio,
                       processing=processing, error_message=error)


def _result(request: IngestRequest, status: Status, *, hops: list[str] | None = None,
            terminal: Terminal | None = None, file_meta: FileMeta | None = None,
            cdx: CdxRecord | None = None, revisit_cdx: CdxRecord | None = None,
            html_biblio: HtmlBiblio | None = None, processing: Processing | None = None,
            error_message: str | None = None) -> FileIngestResult:
    """The result of ``request``, built once its status is known."""
    return FileIngestResult(
        hit=FileIngestResult.is_hit(status), status=status, request=request.to_json(),
        hops=hops if hops is not None else [], terminal=terminal, file_meta=file_meta,
        cdx=cdx, revisit_cdx=revisit_cdx, html_biblio=html_biblio, processing=processing,
        error_message=error_message)


def work_identifiers(biblio: HtmlBiblio | None, request: IngestRequest) -> dict[str, str]:
    """The work's normalised identifiers: the request's ``ext_ids``, and the landing
    page's where the request names none of that name."""
    page: dict[str, str] = {}
    if biblio is not None:
        for name, value in (("doi", biblio.doi), ("pmid", biblio.pmid),
                            ("pmcid", biblio.pmcid), ("arxiv_id", biblio.arxiv_id)):
            if value is not None:
                page[name] = value
    return identifiers_from_metadata({**page, **(request.ext_ids or {})})
