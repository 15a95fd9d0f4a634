"""Builders of the dataset (fileset) ingest workers."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.core.work import Worker
from sandcrawler.fileset.worker import IngestFilesetWorker, PersistIngestFilesetWorker
from sandcrawler.records.fileset import IngestStrategy


def ingest_fileset(services: Services, strategy: IngestStrategy | None = None) -> Worker:
    return IngestFilesetWorker(services.fileset_ingester(strategy))


def persist_ingest_fileset(_services: Services) -> Worker:
    return PersistIngestFilesetWorker()
