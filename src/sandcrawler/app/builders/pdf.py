"""Builders of the PDF workers: processing, and the PDF table's CDX back-fill."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.pdf.cdx_backfill import BackfillCdxWorker
from sandcrawler.pdf.fulltext import fulltext_options
from sandcrawler.pdf.worker import ProcessPdfWorker
from sandcrawler.work import Worker


def backfill_cdx(_services: Services, mimetypes: frozenset[str] = frozenset()) -> Worker:
    return BackfillCdxWorker(mimetypes)


def process_pdf(services: Services, force: bool = False, timeout: float | None = None,
                memory_limit_mb: int | None = None) -> Worker:
    pdf, grobid = services.settings.pdf, services.settings.grobid
    return ProcessPdfWorker(
        services.catalogue, services.pdftable, force=force,
        timeout=timeout or pdf.timeout,
        memory_limit=(memory_limit_mb or pdf.memory_limit_mb) * 2**20,
        extract_options={"thumbnails": pdf.thumbnails, "listing_width": pdf.listing_width,
                         "max_text_chars": pdf.max_text_chars},
        grobid=services.grobid, grobid_options=fulltext_options(grobid),
        grobid_max_bytes=grobid.max_pdf_mb * 2**20,
        locator=services.file_locator())
