"""Picklable worker factories: what ``-j N`` processes call to build their worker.

The storage and PDF workers are imported inside their factories: their modules
(SQLAlchemy, PDFium, Pillow) would otherwise add ~0.4 s to every command's start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandcrawler.citations import make_citation_parser
from sandcrawler.citations.worker import ParseCitationsWorker
from sandcrawler.config import Settings
from sandcrawler.refs.worker import (
    ParseCrossrefRefsWorker,
    PersistCrossrefWorker,
    PersistGrobidRefsWorker,
)

if TYPE_CHECKING:
    from sandcrawler.fileset.worker import IngestFilesetWorker, PersistIngestFilesetWorker
    from sandcrawler.models.fileset import IngestStrategy
    from sandcrawler.pdf.cdx_backfill import BackfillCdxWorker
    from sandcrawler.pdf.worker import ProcessPdfWorker


def parse_crossref_refs(settings: Settings, parser: str | None = None) -> ParseCrossrefRefsWorker:
    return ParseCrossrefRefsWorker(make_citation_parser(settings, parser))


def persist_crossref(
    settings: Settings, parse_refs: bool = False, parser: str | None = None
) -> PersistCrossrefWorker:
    return PersistCrossrefWorker(make_citation_parser(settings, parser) if parse_refs else None)


def persist_grobid_refs(settings: Settings) -> PersistGrobidRefsWorker:
    return PersistGrobidRefsWorker()


def parse_citations(settings: Settings, parser: str | None = None) -> ParseCitationsWorker:
    return ParseCitationsWorker(make_citation_parser(settings, parser))


def backfill_cdx(settings: Settings, mimetypes: frozenset[str] = frozenset()) -> BackfillCdxWorker:
    from sandcrawler.pdf.cdx_backfill import BackfillCdxWorker

    return BackfillCdxWorker(mimetypes)


def process_pdf(
    settings: Settings, force: bool = False, timeout: float = 120.0,
    memory_limit: int | None = 2 * 1024**3, cdx_input: bool = False,
) -> ProcessPdfWorker:
    from sandcrawler.file_records import FileLocator
    from sandcrawler.grobid_client import GrobidClient
    from sandcrawler.pdf.fulltext import fulltext_options
    from sandcrawler.pdf.worker import ProcessPdfWorker
    from sandcrawler.storage import open_catalogue, open_pdftable
    from sandcrawler.web.fetch import HttpFetcher

    catalogue = open_catalogue(settings)
    fetcher = HttpFetcher.from_settings(settings)
    locator = FileLocator(catalogue=catalogue, warc_source=settings.warc_source,
                          fetcher=fetcher)
    grobid = GrobidClient.from_settings(settings) if settings.grobid_url else None
    return ProcessPdfWorker(catalogue, open_pdftable(settings), force=force,
                            timeout=timeout, memory_limit=memory_limit, grobid=grobid,
                            grobid_options=fulltext_options(settings),
                            grobid_max_bytes=settings.grobid_max_pdf_mb * 2**20,
                            locator=locator, cdx_input=cdx_input)


def ingest_fileset(settings: Settings,
                   strategy: IngestStrategy | None = None) -> IngestFilesetWorker:
    from sandcrawler.fileset.ingest import FilesetIngester
    from sandcrawler.fileset.worker import IngestFilesetWorker

    return IngestFilesetWorker(FilesetIngester.from_settings(settings, strategy))


def persist_ingest_fileset(settings: Settings) -> PersistIngestFilesetWorker:
    from sandcrawler.fileset.worker import PersistIngestFilesetWorker

    return PersistIngestFilesetWorker()
