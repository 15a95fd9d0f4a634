"""Builders of the file ingest workers."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.core.work import Worker
from sandcrawler.ingest.worker import IngestWorker, PersistIngestFileWorker
from sandcrawler.records.fileset import IngestStrategy


def ingest(services: Services, strategy: IngestStrategy | None = None) -> Worker:
    """Every ingest type: files crawled, datasets to fileset ingest."""
    return IngestWorker(services.file_ingester(), services.fileset_ingester(strategy))


def ingest_file(services: Services) -> Worker:
    return IngestWorker(services.file_ingester())


def persist_ingest_file(_services: Services) -> Worker:
    return PersistIngestFileWorker()
