"""Builders of the PDF workers: processing, and the PDF table's CDX back-fill."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.core.work import Worker
from sandcrawler.pdf.cdx_backfill import BackfillCdxWorker
from sandcrawler.pdf.worker import ProcessPdfWorker


def backfill_cdx(_services: Services, mimetypes: frozenset[str] = frozenset()) -> Worker:
    return BackfillCdxWorker(mimetypes)


def process_pdf(services: Services, force: bool = False, timeout: float | None = None,
                memory_limit_mb: int | None = None) -> Worker:
    processor = services.pdf_processor(timeout=timeout, memory_limit_mb=memory_limit_mb)
    return ProcessPdfWorker(processor, force=force, locator=services.file_locator())
