"""Builder of ``sandcrawler grobid-serve``: one sandboxed extractor per worker
slot, the models they load, and consolidation against the catalog when there
is one (the match index over a ``crossref`` table that holds works)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from sandcrawler.app.services import Services
from sandcrawler.core.errors import InfrastructureError
from sandcrawler.db.schema import crossref
from sandcrawler.grobid.consolidate import Consolidator
from sandcrawler.grobid.pool import Worker, WorkerPool
from sandcrawler.grobid.service import GrobidService, ModelPaths, ServiceParts
from sandcrawler.match.index import IndexMissing

log = logging.getLogger(__name__)


def consolidator(services: Services) -> Consolidator | None:
    """Consolidation on our catalog; None (consolidation answered as 0) when the
    crossref table holds no work, the match index is missing or empty, or the
    database cannot be reached now (said in the log)."""
    try:
        with services.engine.connect() as conn:
            if conn.execute(select(crossref.c.doi).limit(1)).first() is None:
                return None
        matcher = services.matcher
        if matcher.catalog_empty():
            return None
    except IndexMissing:
        return None
    except InfrastructureError as e:
        log.warning("no consolidation (the catalog cannot be read: %s)", e)
        return None
    reader = services.reader

    def work(doi: str) -> Mapping[str, Any] | None:
        row = reader.crossref_with_refs(doi)
        return None if row is None else row["record"]

    return Consolidator(matcher, work)


def grobid_service(services: Services) -> GrobidService:
    """The service on ``services`` (which the caller closes; the service's
    workers are closed by ``GrobidService.close``)."""
    section = services.settings.grobid_serve
    workers: list[Worker] = []
    try:
        for _ in range(section.concurrency):
            workers.append(services.extractor(timeout=section.timeout,
                                              memory_limit_mb=section.memory_limit_mb))
        pool = WorkerPool(workers)
    except BaseException:
        for worker in workers:
            worker.close()
        raise
    models = ModelPaths(services.settings.extract.models, services.settings.citation.model)
    parts = ServiceParts(settings=section, pool=pool, models=models,
                         consolidator=consolidator(services), spool_dir=services.spool_dir)
    return GrobidService(parts)
