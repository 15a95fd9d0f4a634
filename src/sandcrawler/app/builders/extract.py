"""Builder of the ``extract`` worker: a module of its own, so that the command
imports the cascade and not PDF processing's store, catalogue and matching."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.core.work import Worker
from sandcrawler.pdf.extract_worker import ExtractPdfWorker
from sandcrawler.records.extraction import ExtractRequest


def extract_pdf(services: Services, timeout: float | None = None,
                memory_limit_mb: int | None = None, full: bool = False,
                header_only: bool = False) -> Worker:
    return ExtractPdfWorker(services.extractor(timeout=timeout,
                                               memory_limit_mb=memory_limit_mb),
                            ExtractRequest(full=full, header_only=header_only))
