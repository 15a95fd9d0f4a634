"""Builder of ``sandcrawler grobid-serve``: one sandboxed extractor per worker
slot, the models they load, and consolidation against the catalog when there
is one (the match index over a ``crossref`` table that holds works)."""

from __future__ import annotations

from sandcrawler.app.builders.consolidation import consolidator
from sandcrawler.app.services import Services
from sandcrawler.grobid.pool import Worker, WorkerPool
from sandcrawler.grobid.service import GrobidService, ModelPaths, ServiceParts


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
