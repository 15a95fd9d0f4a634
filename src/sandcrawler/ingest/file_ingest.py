"""The file ingester: ingest requests of type ``pdf``, ``xml`` and ``html`` in,
file ingest results (``models.ingest.FileIngestResult``) out.

For a batch of requests:

1. a request that is not one (no http(s) ``base_url``) is ``bad-request``; one
   of another type ``skip-ingest-type``; a recorded hit is ``success-existing``
   without a fetch (unless ``force_recrawl``);
2. the requests are crawled (``ingest.crawl``), ``concurrency`` at a time (a
   slow host holds one crawler, not the batch), each crawling thread into a
   WARC file of its own;
3. the WARC files are committed (made visible, indexed) before anything refers
   to them: a crash before then leaves no capture and no result;
4. each full text found is processed by its kind's processor (stored,
   catalogued, references parsed), unless it was processed before.

Every status is in the table of ``docs/ingest.md``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sandcrawler.errors import RecordError
from sandcrawler.ingest.crawl import Crawler, CrawlResult, close_all
from sandcrawler.ingest.found import FoundFile, Processor
from sandcrawler.ingest.history import IngestHistory
from sandcrawler.models.ingest import (
    FILE_INGEST_TYPES,
    FileIngestResult,
    IngestRequest,
    IngestType,
    Processing,
)
from sandcrawler.models.statuses import INGEST_FILE_SUCCESS, IngestFileStatus, ProcessingStatus
from sandcrawler.storage.catalogue import identifiers_from_metadata
from sandcrawler.web.archive import WarcSession, WebArchive
from sandcrawler.web.urls import request_url

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

    def ingest(self, request: IngestRequest) -> dict[str, Any]:
        return self.ingest_batch([request])[0]

    def ingest_batch(self, requests: list[IngestRequest]) -> list[dict[str, Any]]:
        """One result per request, in order; a store or database failure raises
        (the batch is retried whole: nothing of it was made visible)."""
        results: list[dict[str, Any]] = [{"hit": False, "request": r.to_json()}
                                         for r in requests]
        hits = self.history.hits((r.ingest_type, r.base_url) for r in requests
                                 if not r.force_recrawl)
        todo: list[tuple[int, str]] = []
        for i, request in enumerate(requests):
            try:
                url = self._before_crawl(request, results[i], hits)
            except RecordError as e:
                results[i].update(status=e.status, error_message=str(e))
                continue
            if url is not None:
                todo.append((i, url))
        crawls: list[tuple[int, CrawlResult]] = []
        try:
            crawls = self._crawl_all(requests, todo)
            for i, crawl in crawls:
                self._after_crawl(requests[i], crawl, results[i])
        finally:
            close_all([c for _, c in crawls])
        return [_final(r) for r in results]

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

    def _before_crawl(self, request: IngestRequest, result: dict[str, Any],
                      hits: Mapping[tuple[str, str], dict[str, Any]]) -> str | None:
        """Settle what needs no crawl (None: the result is final); else the URL to
        crawl (``base_url`` with spaces and non-ASCII characters encoded)."""
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
        result["status"] = IngestFileStatus.SUCCESS_EXISTING
        if row.get("terminal_url") and row.get("terminal_dt"):
            result["terminal"] = {k: row[k] for k in ("terminal_url", "terminal_dt",
                                                      "terminal_status_code", "terminal_sha1hex")}
        if sha1 := row.get("terminal_sha1hex"):
            # where the file is: its document, and its capture
            result["processing"] = self.history.processed(request.ingest_type, sha1)
            if (cdx := self.archive.find_sha1(sha1)) is not None:
                result["cdx"] = cdx
        return None

    def _after_crawl(self, request: IngestRequest, crawl: CrawlResult,
                     result: dict[str, Any]) -> None:
        result.update(status=crawl.status, hops=crawl.hops, html_biblio=crawl.biblio,
                      error_message=crawl.error)
        fetched = crawl.fetched
        if fetched is not None:
            terminal = fetched.terminal
            result.update(terminal=terminal.to_terminal(), cdx=terminal,
                          revisit_cdx=fetched.revisit_of, file_meta=fetched.file_meta)
        if not crawl.found or fetched is None or fetched.file_meta is None:
            return
        kind = IngestType(request.ingest_type)
        processing = None
        if not request.force_recrawl:
            processing = self.history.processed(kind, fetched.file_meta.sha1hex)
        if processing is None:
            found = FoundFile(
                path=fetched.path(), file_meta=fetched.file_meta, cdx=fetched.terminal,
                request=request, biblio=crawl.biblio or {}, references=crawl.references,
                identifiers=identifiers_from_metadata({**(crawl.biblio or {}),
                                                       **(request.ext_ids or {})}),
                landing_url=crawl.landing_url)
            processing = self.processor(kind).process(found)
        elif crawl.replayed:
            # archived and processed before, nothing fetched now
            result["status"] = IngestFileStatus.SUCCESS_EXISTING
        result["processing"] = processing
        if kind == IngestType.HTML and processing.status in NOT_FULLTEXT:
            result.update(status=IngestFileStatus.NO_HTML_FULLTEXT,
                          error_message=processing.error or f"{fetched.terminal.url}: "
                          "a page without an article's main text")


def _final(result: dict[str, Any]) -> dict[str, Any]:
    result["hit"] = result.get("status") in INGEST_FILE_SUCCESS
    if isinstance(result.get("processing"), Processing):
        result["processing"] = result["processing"].to_json()
    return FileIngestResult.model_validate(result).to_json()
