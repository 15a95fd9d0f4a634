"""sandcrawler: harvest, archive, process and catalogue scholarly documents.

The library is the product; the ``sandcrawler`` command is a thin layer over it.
``__all__`` lists the public names (a test pins them; the rest is internal), each
loaded on first use so that ``import sandcrawler`` stays cheap. As README.md's quickstart::

    services = sandcrawler.open_services()            # settings from env/TOML, as the CLI
    entry = services.catalogue.add_file("paper.pdf", metadata={"DOI": "10.5555/x"})
    services.catalogue.get(entry.uuid)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandcrawler.core import moved
from sandcrawler.core.imports import load_object
from sandcrawler.version import __version__

moved.install()  # old import paths of moved modules still work, with a warning

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandcrawler.app.services import Services
    from sandcrawler.app.settings import Settings, load_settings
    from sandcrawler.app.workers import WORKERS, WorkerSpec
    from sandcrawler.citations.base import CitationParser
    from sandcrawler.citations.registry import CITATION_PARSERS
    from sandcrawler.config import CoreSettings
    from sandcrawler.core.errors import (
        ConfigError,
        InfrastructureError,
        RecordError,
        SandcrawlerError,
    )
    from sandcrawler.core.work import Item, Outcome, RecordWorker
    from sandcrawler.fileset.ingest import FilesetIngester
    from sandcrawler.fileset.platforms import PLATFORMS
    from sandcrawler.pdf.info import PdfExtract, extract_pdf
    from sandcrawler.pipeline.runner import Runner
    from sandcrawler.records.fileset import FilesetIngestResult, IngestRequest, IngestStrategy
    from sandcrawler.storage.blobs import BlobStore
    from sandcrawler.storage.catalogue import Catalogue
    from sandcrawler.storage.pdftable import PdfTable

#: public name -> the module that defines it
_EXPORTS = {
    "Services": "sandcrawler.app.services",
    "Settings": "sandcrawler.app.settings",
    "load_settings": "sandcrawler.app.settings",
    "WORKERS": "sandcrawler.app.workers",
    "WorkerSpec": "sandcrawler.app.workers",
    "CitationParser": "sandcrawler.citations.base",
    "CITATION_PARSERS": "sandcrawler.citations.registry",
    "SandcrawlerError": "sandcrawler.core.errors",
    "ConfigError": "sandcrawler.core.errors",
    "RecordError": "sandcrawler.core.errors",
    "InfrastructureError": "sandcrawler.core.errors",
    "FilesetIngester": "sandcrawler.fileset.ingest",
    "PLATFORMS": "sandcrawler.fileset.platforms",
    "IngestRequest": "sandcrawler.records.fileset",
    "IngestStrategy": "sandcrawler.records.fileset",
    "FilesetIngestResult": "sandcrawler.records.fileset",
    "PdfExtract": "sandcrawler.pdf.info",
    "extract_pdf": "sandcrawler.pdf.info",
    "Runner": "sandcrawler.pipeline.runner",
    "BlobStore": "sandcrawler.storage.blobs",
    "Catalogue": "sandcrawler.storage.catalogue",
    "PdfTable": "sandcrawler.storage.pdftable",
    "Item": "sandcrawler.core.work",
    "Outcome": "sandcrawler.core.work",
    "RecordWorker": "sandcrawler.core.work",
}

__all__ = [
    "CITATION_PARSERS",
    "PLATFORMS",
    "WORKERS",
    "BlobStore",
    "Catalogue",
    "CitationParser",
    "ConfigError",
    "FilesetIngestResult",
    "FilesetIngester",
    "InfrastructureError",
    "IngestRequest",
    "IngestStrategy",
    "Item",
    "Outcome",
    "PdfExtract",
    "PdfTable",
    "RecordError",
    "RecordWorker",
    "Runner",
    "SandcrawlerError",
    "Services",
    "Settings",
    "WorkerSpec",
    "__version__",
    "extract_pdf",
    "load_settings",
    "open_services",
]


def open_services(**overrides: Any) -> Services:
    """The services for the settings the CLI would use (environment, TOML file,
    defaults) with ``overrides`` (flat or dotted names: ``store_url=...``,
    ``"grobid.url": ...``). Close them with ``close()`` or a ``with`` block."""
    services: type[Services] = load_object("sandcrawler.app.services:Services")
    load: Callable[[dict[str, Any]], CoreSettings] = \
        load_object("sandcrawler.app.settings:load_settings")
    return services(load(overrides))


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sandcrawler' has no attribute {name!r}")
    value = load_object(f"{module}:{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
