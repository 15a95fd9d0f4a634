"""Builder of the ``extract`` worker: a module of its own, so that the command
imports the cascade and not PDF processing's store, catalogue and matching."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.core.errors import ConfigError
from sandcrawler.core.work import Worker
from sandcrawler.pdf.extract_worker import ExtractPdfWorker
from sandcrawler.records.extraction import ExtractRequest

NO_CATALOG = ("--consolidate needs a catalog to match against, and there is none: "
              "persist Crossref works (sandcrawler persist crossref) and build the match "
              "index (sandcrawler match index)")


def extract_pdf(services: Services, timeout: float | None = None,
                memory_limit_mb: int | None = None, full: bool = False,
                header_only: bool = False, consolidate: bool = False) -> Worker:
    # the catalog is read only when asked: extract needs no database otherwise
    consolidating = None
    if consolidate:
        from sandcrawler.app.builders.consolidation import consolidator

        consolidating = consolidator(services)
        if consolidating is None:
            raise ConfigError(NO_CATALOG)
    return ExtractPdfWorker(services.extractor(timeout=timeout,
                                               memory_limit_mb=memory_limit_mb),
                            ExtractRequest(full=full, header_only=header_only),
                            consolidator=consolidating)
