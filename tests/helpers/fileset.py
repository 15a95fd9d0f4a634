"""A fileset ingester with services of its own, for the dataset-ingest tests."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.config import CoreSettings
from sandcrawler.fileset.ingest import FilesetIngester
from sandcrawler.records.fileset import IngestStrategy


def open_ingester(settings: CoreSettings,
                  strategy: IngestStrategy | None = None) -> FilesetIngester:
    """A fileset ingester on its own services, which its ``close()`` closes (in the
    product the services belong to the command, not to the ingester)."""
    services = Services(settings)
    ingester = services.fileset_ingester(strategy)
    ingester.close = services.close  # type: ignore[method-assign]
    return ingester
