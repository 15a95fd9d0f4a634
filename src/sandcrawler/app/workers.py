"""The worker registry: name -> how to build the worker from the services, its
records' models, its default batch size, its Kafka topics and where its outputs go.

``WORKERS`` is what the CLI's batch commands and ``worker ...`` commands, the
topic names and the docs read. ``worker_factory`` is the picklable function that
``-j N`` processes call to build their worker: each process builds its services
once (``Services.for_process``).

A new worker is its ``RecordWorker`` module and one ``WorkerSpec`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel

from sandcrawler.app.services import Services
from sandcrawler.citations.worker import ParseCitationsWorker
from sandcrawler.config import CoreSettings
from sandcrawler.fileset.worker import (
    IngestFilesetWorker,
    PersistIngestFilesetWorker,
    result_key,
)
from sandcrawler.models.fileset import (
    FilesetIngestResult,
    IngestRequest,
    IngestResultView,
    IngestStrategy,
)
from sandcrawler.models.pdf import ProcessResult
from sandcrawler.models.refs import GrobidRefsRow
from sandcrawler.pdf.cdx_backfill import BackfillCdxWorker
from sandcrawler.pdf.fulltext import fulltext_options
from sandcrawler.pdf.worker import ProcessPdfWorker
from sandcrawler.refs.worker import (
    ParseCrossrefRefsWorker,
    PersistCrossrefWorker,
    PersistGrobidRefsWorker,
)
from sandcrawler.work import Worker

Sink = Literal["stdout", "database", "kafka"]


@dataclass(frozen=True, slots=True)
class Topic:
    """A topic of ``<prefix>-<env>.<name>``: ours, or an upstream feed's (fatcat)."""

    name: str
    prefix: str = "sandcrawler"

    def full(self, env: str) -> str:
        return f"{self.prefix}-{env}.{self.name}"


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    name: str
    build: Callable[..., Worker]
    description: str
    batch_size: int = 100
    #: models of one input record and one output (None: not JSON, or several kinds)
    input: type[BaseModel] | None = None
    output: type[BaseModel] | None = None
    topics_in: tuple[Topic, ...] = ()
    topics_out: tuple[Topic, ...] = ()
    sink: Sink = "stdout"
    #: the Kafka message key of an output
    key: Callable[[Any], str | bytes | None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _parse_crossref_refs(services: Services, parser: str | None = None) -> Worker:
    return ParseCrossrefRefsWorker(services.citation_parser(parser))


def _persist_crossref(services: Services, parse_refs: bool = False,
                      parser: str | None = None) -> Worker:
    return PersistCrossrefWorker(services.citation_parser(parser) if parse_refs else None)


def _persist_grobid_refs(_services: Services) -> Worker:
    return PersistGrobidRefsWorker()


def _parse_citations(services: Services, parser: str | None = None) -> Worker:
    return ParseCitationsWorker(services.citation_parser(parser))


def _backfill_cdx(_services: Services, mimetypes: frozenset[str] = frozenset()) -> Worker:
    return BackfillCdxWorker(mimetypes)


def _process_pdf(services: Services, force: bool = False, timeout: float | None = None,
                 memory_limit_mb: int | None = None, cdx_input: bool = False,
                 warc_source: str | None = None) -> Worker:
    pdf, grobid = services.settings.pdf, services.settings.grobid
    return ProcessPdfWorker(
        services.catalogue, services.pdftable, force=force,
        timeout=timeout or pdf.timeout,
        memory_limit=(memory_limit_mb or pdf.memory_limit_mb) * 2**20,
        extract_options={"thumbnails": pdf.thumbnails, "listing_width": pdf.listing_width,
                         "max_text_chars": pdf.max_text_chars},
        grobid=services.grobid, grobid_options=fulltext_options(grobid),
        grobid_max_bytes=grobid.max_pdf_mb * 2**20,
        locator=services.file_locator(warc_source), cdx_input=cdx_input)


def _ingest_fileset(services: Services, strategy: IngestStrategy | None = None) -> Worker:
    return IngestFilesetWorker(services.fileset_ingester(strategy))


def _persist_ingest_fileset(_services: Services) -> Worker:
    return PersistIngestFilesetWorker()


def _sha1_key(out: Any) -> str | None:
    return out.get("sha1hex") if isinstance(out, dict) else None


INGEST_FILESET_RESULTS = Topic("ingest-fileset-results")
INGEST_FILE_RESULTS = Topic("ingest-file-results")

WORKERS: dict[str, WorkerSpec] = {s.name: s for s in (
    WorkerSpec("parse-crossref-refs", _parse_crossref_refs,
               "Crossref works -> grobid_refs rows", output=GrobidRefsRow),
    WorkerSpec("persist-crossref", _persist_crossref,
               "Crossref works (and their parsed references) -> the database",
               topics_in=(Topic("api-crossref", prefix="fatcat"),), sink="database"),
    WorkerSpec("persist-grobid-refs", _persist_grobid_refs,
               "grobid_refs rows -> the database", batch_size=2000, input=GrobidRefsRow,
               sink="database"),
    WorkerSpec("parse-citations", _parse_citations,
               "reference strings -> GrobidBiblio objects"),
    WorkerSpec("backfill-cdx", _backfill_cdx, "CDX lines -> PDF table file:cdx and file:mime",
               batch_size=2000, sink="database"),
    WorkerSpec("process-pdf", _process_pdf,
               "file records -> metadata, text, thumbnails, GROBID full text",
               batch_size=8, output=ProcessResult, topics_in=(Topic("pdf-files"),),
               topics_out=(Topic("pdf-results"),), key=_sha1_key),
    WorkerSpec("ingest-fileset", _ingest_fileset,
               "dataset ingest requests -> archived files and fileset results",
               batch_size=1, input=IngestRequest, output=FilesetIngestResult,
               topics_in=(Topic("ingest-file-requests"),),
               topics_out=(INGEST_FILESET_RESULTS, INGEST_FILE_RESULTS), key=result_key),
    WorkerSpec("persist-ingest-fileset", _persist_ingest_fileset,
               "fileset and file ingest results -> ingest_file_result, ingest_fileset_platform",
               batch_size=2000, input=IngestResultView,
               topics_in=(INGEST_FILESET_RESULTS, INGEST_FILE_RESULTS), sink="database"),
)}


def build_worker(name: str, settings: CoreSettings, options: dict[str, Any]) -> Worker:
    """The worker ``name`` with ``options``, on this process's services."""
    return WORKERS[name].build(Services.for_process(settings), **options)


def worker_factory(name: str, settings: CoreSettings, **options: Any) -> Callable[[], Worker]:
    """A picklable zero-argument factory (what the runner and ``-j N`` processes call)."""
    return partial(build_worker, name, settings, options)

