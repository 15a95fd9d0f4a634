"""The fileset ingester: one ingest request in, one fileset ingest result out
(and, for a single-file dataset archived now, an ingest-file result).

It captures the landing page, asks the matching platform's API for the item
and its manifest, refuses what cannot or must not be archived, chooses the
strategy (an existing archive is ``success-existing`` unless ``force_recrawl``),
then archives, verifies and summarises in the seed's schema
(``fileset.strategies``). Every status is in the table of ``docs/fileset.md``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.fileset.platforms import PLATFORMS
from sandcrawler.fileset.platforms.base import LandingPage, PlatformHelper
from sandcrawler.fileset.strategies import ArchiveContext, make_strategy
from sandcrawler.records.fileset import (
    ArchiveStrategyResult,
    DatasetFileResult,
    FilesetBundle,
    FilesetFile,
    FilesetIngestResult,
    FilesetPlatformItem,
    IngestRequest,
    IngestStrategy,
)
from sandcrawler.records.statuses import FILESET_SUCCESS, FilesetStatus, Status
from sandcrawler.web.archive.captures import WebCapture
from sandcrawler.web.html.metadata import MAX_HTML, html_biblio
from sandcrawler.web.http.urls import request_url

log = logging.getLogger("sandcrawler.fileset")

INGEST_TYPES = ("dataset",)
SKIP_INGEST_TYPE = FilesetStatus.SKIP_INGEST_TYPE
SUCCESS = FILESET_SUCCESS
#: landing pages larger than this are not read for metadata (still archived)
LANDING_MAX_BYTES = 64 * 2**20


@dataclass(slots=True)
class IngestOutcome:
    """The fileset result, and the ingest-file result a ``*-file`` success adds."""

    result: FilesetIngestResult
    file_result: DatasetFileResult | None = None

    @property
    def status(self) -> Status:
        return self.result.status

    @property
    def error(self) -> str | None:
        return self.result.error_message


def _started(request: IngestRequest) -> FilesetIngestResult:
    """The result an ingest fills in as it finds things (the landing page's capture,
    the platform's item, ...), so a failure at any step still reports them. Built
    unvalidated: ``hit`` and ``status`` come with the outcome (``_finished``)."""
    started: dict[str, Any] = {"request": request.to_json()}  # hit, status: not yet known
    return FilesetIngestResult.model_construct(**started)


def _finished(found: FilesetIngestResult, status: Status,
              error_message: str | None) -> FilesetIngestResult:
    """``found`` with its outcome, validated as a whole."""
    fields = {name: getattr(found, name) for name in FilesetIngestResult.model_fields
              if name not in ("hit", "status", "error_message")}
    return FilesetIngestResult(**fields, hit=FilesetIngestResult.is_hit(status), status=status,
                               error_message=error_message)


class FilesetIngester:
    """Built by the composition root with what it archives with (``ctx``) and one
    helper per registered platform; the fetcher and store belong to the caller."""

    def __init__(self, ctx: ArchiveContext, helpers: list[PlatformHelper[Any]],
                 strategy: IngestStrategy | None = None) -> None:
        self.ctx = ctx
        self.helpers = helpers
        self.forced_strategy = strategy

    def close(self) -> None:
        """Nothing of its own to release: the services it was given are closed by
        whoever built them."""

    # --- the pipeline --------------------------------------------------------------

    def ingest(self, request: IngestRequest) -> IngestOutcome:
        found = _started(request)
        try:
            archived = self._ingest(request, found)
        except RecordError as e:
            result = _finished(found, e.status, str(e))
        else:
            result = _finished(found, archived.status, archived.error_message)
        return IngestOutcome(result, file_result_of(result))

    def _ingest(self, request: IngestRequest, found: FilesetIngestResult) -> ArchiveStrategyResult:
        """What archiving the dataset gave; a RecordError for a request refused
        before (what was found by then is in ``found``)."""
        if request.ingest_type not in INGEST_TYPES:
            raise RecordError(f"ingest type {request.ingest_type!r} is not a dataset type "
                              f"({', '.join(INGEST_TYPES)})", SKIP_INGEST_TYPE)
        if request_url(request.base_url) is None:
            # before any platform helper parses it: urlsplit raises on 'http://[::1'
            raise RecordError(f"base_url {request.base_url!r} is not an http(s) URL",
                              FilesetStatus.BAD_REQUEST)
        landing, landing_error = self._landing(request, found)
        biblio = html_biblio(landing.html) if landing.html else None
        if biblio:
            found.html_biblio = biblio
        helper = next((h for h in self.helpers if h.match_request(request, landing, biblio)),
                      None)
        if helper is None:
            if landing_error is not None:
                raise landing_error
            known = ", ".join(p.title for p in PLATFORMS.values())
            raise RecordError(f"{landing.terminal_url}: not a page of a known dataset platform "
                              f"({known})", FilesetStatus.NO_PLATFORM_MATCH)
        found.platform_name = helper.name
        item = helper.process_request(request, landing, biblio)
        manifest = list(item.manifest or [])
        found.platform_name, found.platform_domain = item.platform_name, item.platform_domain
        found.platform_id, found.platform_base_url = item.platform_id, item.web_base_url
        found.manifest = manifest
        found.file_count = len(manifest)
        found.total_size = sum(f.size or 0 for f in manifest)
        self._check_limits(item)
        strategy = self.forced_strategy or helper.choose_strategy(item)
        if strategy.bundled and not item.web_bundle_url:
            raise RecordError(f"{strategy}: {item.platform_name} offers no 'download all' "
                              "bundle for this item", FilesetStatus.PLATFORM_NO_BUNDLE)
        found.ingest_strategy = strategy
        if strategy.backend == "archiveorg":
            found.archiveorg_item_name = item.archiveorg_item_name
        archiver = make_strategy(strategy, self.ctx)
        archived = None if request.force_recrawl else archiver.check_existing(item)
        if archived is None:
            archived = archiver.process(item)
        self._summarise(archived, found)
        return archived

    def _landing(self, request: IngestRequest,
                 found: FilesetIngestResult) -> tuple[LandingPage, RecordError | None]:
        """Capture the landing page. Its failure is only the request's status if no
        platform recognises the URL: an API can still answer for a page that
        does not (a 404 page of a deleted record, a platform's page down)."""
        url = request.base_url
        landing = LandingPage(url=url, terminal_url=url)
        with self.ctx.web.session() as session:
            try:
                capture = session.capture(url, max_bytes=LANDING_MAX_BYTES)
            except RecordError as e:
                return landing, e
            try:
                session.commit()
                self._landing_fields(capture, landing, found)
            finally:
                capture.close()
        if capture.status_code != 200:
            return landing, RecordError(f"{url}: landing page answered HTTP "
                                        f"{capture.status_code}", FilesetStatus.TERMINAL_BAD_STATUS)
        return landing, None

    @staticmethod
    def _landing_fields(capture: WebCapture, landing: LandingPage,
                        found: FilesetIngestResult) -> None:
        terminal = capture.terminal
        landing.terminal_url = terminal.url
        landing.hops = [row.url for row in capture.rows]
        landing.status_code = terminal.status_code
        landing.mimetype = terminal.mimetype
        found.terminal = terminal.to_terminal()
        found.cdx = terminal
        found.revisit_cdx = capture.revisit_of
        if capture.file_meta is not None:
            found.file_meta = capture.file_meta
            if "html" in (capture.file_meta.mimetype + (terminal.mimetype or "")) and capture.spool:
                with capture.spool.open("rb") as f:
                    landing.html = f.read(MAX_HTML)

    def _check_limits(self, item: FilesetPlatformItem) -> None:
        manifest = item.manifest or []
        if not manifest:
            raise RecordError(f"{item.platform_name} {item.platform_id}: no files to archive",
                              FilesetStatus.EMPTY_MANIFEST)
        limit = self.ctx.fileset.max_file_count
        if len(manifest) > limit:
            raise RecordError(f"{len(manifest)} files, more than max_file_count {limit}",
                              FilesetStatus.TOO_MANY_FILES)
        total = sum(f.size or 0 for f in manifest)
        if total > self.ctx.fileset.max_total_size:
            raise RecordError(f"{total:,} bytes in all, more than max_total_size "
                              f"{self.ctx.fileset.max_total_size:,}", FilesetStatus.TOO_LARGE_SIZE)
        # the item store's rules are the strictest any backend needs: paths that
        # would leave an item, or clash in it, are refused whatever the strategy
        self.ctx.items.check_paths(item.archiveorg_item_name or "item",
                                   [f.path for f in manifest])

    @staticmethod
    def _summarise(archived: ArchiveStrategyResult, found: FilesetIngestResult) -> None:
        found.manifest = list(archived.manifest)
        if archived.archiveorg_item_name:
            found.archiveorg_item_name = archived.archiveorg_item_name
        strategy = IngestStrategy(archived.ingest_strategy)
        if archived.status in SUCCESS:
            found.file_count = len(archived.manifest)
            found.total_size = sum(f.size or 0 for f in archived.manifest)
        if strategy.entity == "file" and archived.file_file_meta:
            found.fileset_file = FilesetFile(
                file_meta=archived.file_file_meta, terminal=archived.file_terminal,
                cdx=archived.file_cdx, revisit_cdx=archived.file_revisit_cdx)
        if strategy.bundled and archived.bundle_file_meta:
            found.fileset_bundle = FilesetBundle(
                file_meta=archived.bundle_file_meta, terminal=archived.bundle_terminal,
                cdx=archived.bundle_cdx, revisit_cdx=archived.bundle_revisit_cdx,
                archiveorg_bundle_path=archived.bundle_archiveorg_path)


def file_result_of(result: FilesetIngestResult) -> DatasetFileResult | None:
    """The ingest-file result a ``*-file`` strategy's ``success-file`` adds: the
    single file as regular file ingest reports it, ingest type ``{type}-file``."""
    single = result.fileset_file
    if (result.status != FilesetStatus.SUCCESS_FILE or result.ingest_strategy is None
            or not result.ingest_strategy.endswith("-file") or single is None):
        return None
    request = dict(result.request)
    request["ingest_type"] = f"{request['ingest_type']}-file"
    return DatasetFileResult(hit=True, status=FilesetStatus.SUCCESS, request=request,
                             file_meta=single.file_meta, terminal=single.terminal,
                             cdx=single.cdx, revisit_cdx=single.revisit_cdx)
