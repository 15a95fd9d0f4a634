"""The fileset ingester: one ingest request in, one fileset ingest result out
(and, for a single-file dataset archived now, an ingest-file result).

1. Capture the request's ``base_url`` (the landing page) into our web archive
   and read its ``html_biblio``.
2. Find the platform whose helper matches, and ask its API for the item and its
   manifest (``platform-*`` statuses when that fails).
3. Refuse what cannot or must not be archived: ``empty-manifest``,
   ``unsafe-path``, ``too-many-files``, ``too-large-size``.
4. Choose the strategy; unless the request asks for ``force_recrawl``, an
   existing archive of the same dataset is ``success-existing``.
5. Archive and verify (``fileset.strategies``); summarise in the seed's schema.

Every status is in the table of ``docs/fileset.md``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sandcrawler.errors import RecordError
from sandcrawler.fileset.platforms import PLATFORMS
from sandcrawler.fileset.platforms.base import LandingPage, PlatformHelper
from sandcrawler.fileset.strategies import ArchiveContext, make_strategy
from sandcrawler.models.fileset import (
    ArchiveStrategyResult,
    FilesetBundle,
    FilesetFile,
    FilesetIngestResult,
    FilesetPlatformItem,
    IngestRequest,
    IngestStrategy,
)
from sandcrawler.models.statuses import FILESET_SUCCESS, FilesetStatus
from sandcrawler.web.archive import WebCapture
from sandcrawler.web.html import MAX_HTML, html_biblio
from sandcrawler.web.urls import request_url

log = logging.getLogger("sandcrawler.fileset")

INGEST_TYPES = ("dataset",)
SKIP_INGEST_TYPE = FilesetStatus.SKIP_INGEST_TYPE
SUCCESS = FILESET_SUCCESS
#: landing pages larger than this are not read for metadata (still archived)
LANDING_MAX_BYTES = 64 * 2**20


@dataclass(slots=True)
class IngestOutcome:
    """The fileset result, and the ingest-file result a ``*-file`` success adds."""

    result: dict[str, Any]
    file_result: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        return str(self.result["status"])

    @property
    def error(self) -> str | None:
        return self.result.get("error_message")


class FilesetIngester:
    """Built by the composition root with what it archives with (``ctx``) and one
    helper per registered platform; the fetcher and store belong to the caller."""

    def __init__(self, ctx: ArchiveContext, helpers: list[PlatformHelper],
                 strategy: IngestStrategy | None = None) -> None:
        self.ctx = ctx
        self.helpers = helpers
        self.forced_strategy = strategy

    def close(self) -> None:
        """Nothing of its own to release: the services it was given are closed by
        whoever built them."""

    # --- the pipeline --------------------------------------------------------------

    def ingest(self, request: IngestRequest) -> IngestOutcome:
        result: dict[str, Any] = {"hit": False, "request": request.to_json()}
        try:
            self._ingest(request, result)
        except RecordError as e:
            result["status"] = e.status
            result["error_message"] = str(e)
        result["hit"] = result["status"] in SUCCESS
        final = FilesetIngestResult.model_validate(result).to_json()
        return IngestOutcome(final, file_result_of(final))

    def _ingest(self, request: IngestRequest, result: dict[str, Any]) -> None:
        if request.ingest_type not in INGEST_TYPES:
            raise RecordError(f"ingest type {request.ingest_type!r} is not a dataset type "
                              f"({', '.join(INGEST_TYPES)})", SKIP_INGEST_TYPE)
        if request_url(request.base_url) is None:
            # before any platform helper parses it: urlsplit raises on 'http://[::1'
            raise RecordError(f"base_url {request.base_url!r} is not an http(s) URL",
                              FilesetStatus.BAD_REQUEST)
        landing, landing_error = self._landing(request, result)
        biblio = html_biblio(landing.html) if landing.html else None
        if biblio:
            result["html_biblio"] = biblio
        helper = next((h for h in self.helpers if h.match_request(request, landing, biblio)),
                      None)
        if helper is None:
            if landing_error is not None:
                raise landing_error
            known = ", ".join(p.title for p in PLATFORMS.values())
            raise RecordError(f"{landing.terminal_url}: not a page of a known dataset platform "
                              f"({known})", FilesetStatus.NO_PLATFORM_MATCH)
        result["platform_name"] = helper.name
        item = helper.process_request(request, landing, biblio)
        result.update(platform_name=item.platform_name, platform_domain=item.platform_domain,
                      platform_id=item.platform_id, platform_base_url=item.web_base_url,
                      manifest=[f.to_json() for f in item.manifest or []])
        manifest = item.manifest or []
        result["file_count"] = len(manifest)
        result["total_size"] = sum(f.size or 0 for f in manifest)
        self._check_limits(item)
        strategy = self.forced_strategy or helper.choose_strategy(item)
        if strategy.bundled and not item.web_bundle_url:
            raise RecordError(f"{strategy}: {item.platform_name} offers no 'download all' "
                              "bundle for this item", FilesetStatus.PLATFORM_NO_BUNDLE)
        result["ingest_strategy"] = strategy.value
        if strategy.backend == "archiveorg":
            result["archiveorg_item_name"] = item.archiveorg_item_name
        archiver = make_strategy(strategy, self.ctx)
        archived = None if request.force_recrawl else archiver.check_existing(item)
        if archived is None:
            archived = archiver.process(item)
        self._summarise(archived, result)

    def _landing(self, request: IngestRequest,
                 result: dict[str, Any]) -> tuple[LandingPage, RecordError | None]:
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
                self._landing_fields(capture, landing, result)
            finally:
                capture.close()
        if capture.status_code != 200:
            return landing, RecordError(f"{url}: landing page answered HTTP "
                                        f"{capture.status_code}", FilesetStatus.TERMINAL_BAD_STATUS)
        return landing, None

    @staticmethod
    def _landing_fields(capture: WebCapture, landing: LandingPage,
                        result: dict[str, Any]) -> None:
        terminal = capture.terminal
        landing.terminal_url = terminal.url
        landing.hops = [row.url for row in capture.rows]
        landing.status_code = terminal.status_code
        landing.mimetype = terminal.mimetype
        result["terminal"] = terminal.to_terminal()
        result["cdx"] = terminal
        result["revisit_cdx"] = capture.revisit_of
        if capture.file_meta is not None:
            result["file_meta"] = capture.file_meta
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
    def _summarise(archived: ArchiveStrategyResult, result: dict[str, Any]) -> None:
        result["status"] = archived.status
        result["manifest"] = [f.to_json() for f in archived.manifest]
        result["error_message"] = archived.error_message
        if archived.archiveorg_item_name:
            result["archiveorg_item_name"] = archived.archiveorg_item_name
        strategy = IngestStrategy(archived.ingest_strategy)
        if archived.status in SUCCESS:
            result["file_count"] = len(archived.manifest)
            result["total_size"] = sum(f.size or 0 for f in archived.manifest)
        if strategy.entity == "file" and archived.file_file_meta:
            result["fileset_file"] = FilesetFile(
                file_meta=archived.file_file_meta, terminal=archived.file_terminal,
                cdx=archived.file_cdx, revisit_cdx=archived.file_revisit_cdx)
        if strategy.bundled and archived.bundle_file_meta:
            result["fileset_bundle"] = FilesetBundle(
                file_meta=archived.bundle_file_meta, terminal=archived.bundle_terminal,
                cdx=archived.bundle_cdx, revisit_cdx=archived.bundle_revisit_cdx,
                archiveorg_bundle_path=archived.bundle_archiveorg_path)


def file_result_of(result: dict[str, Any]) -> dict[str, Any] | None:
    """The ingest-file result a ``*-file`` strategy's ``success-file`` adds: the
    single file as regular file ingest reports it, ingest type ``{type}-file``."""
    strategy = result.get("ingest_strategy") or ""
    single = result.get("fileset_file")
    if (result.get("status") != FilesetStatus.SUCCESS_FILE or not strategy.endswith("-file")
            or not single):
        return None
    request = dict(result["request"])
    request["ingest_type"] = f"{request['ingest_type']}-file"
    out = {"hit": True, "status": FilesetStatus.SUCCESS, "request": request}
    for key in ("file_meta", "terminal", "cdx", "revisit_cdx"):
        if single.get(key):
            out[key] = single[key]
    return out
