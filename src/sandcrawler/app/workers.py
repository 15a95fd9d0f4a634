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
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from sandcrawler.app.services import Services
from sandcrawler.config import CoreSettings
from sandcrawler.core.errors import SchemaError
from sandcrawler.core.imports import load_object
from sandcrawler.core.work import Worker
from sandcrawler.kafka.topics import (
    API_CROSSREF,
    GROBID_OUTPUT,
    GROBID_REFS,
    INGEST_FILE_REQUESTS,
    INGEST_FILE_RESULTS,
    INGEST_FILESET_RESULTS,
    PDF_FILES,
    PDF_RESULTS,
    PDF_TEXT,
    TOPICS,
    TopicSpec,
)

Sink = Literal["stdout", "database", "kafka"]

_GROBID_REFS_ROW = "sandcrawler.records.refs:GrobidRefsRow"
_PROCESS_RESULT = "sandcrawler.records.pdf:ProcessResult"
_INGEST_REQUEST = "sandcrawler.records.ingest:IngestRequest"
_FILESET_INGEST_RESULT = "sandcrawler.records.fileset:FilesetIngestResult"
_INGEST_RESULT_VIEW = "sandcrawler.records.fileset:IngestResultView"
_FILE_INGEST_RESULT = "sandcrawler.records.ingest:FileIngestResult"


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    name: str
    #: ``package.module:function`` (in ``sandcrawler.app.builders``), like every registry
    #: entry: (services, **options) -> worker
    build: str
    description: str
    batch_size: int = 100
    #: another default batch size when an option is set: (option, size)
    batch_size_when: tuple[str, int] | None = None
    #: ``module:Class``, the models of one input record and one output (None: not
    #: JSON, or several kinds); named, not imported: every command reads this registry
    input: str | None = None
    output: str | None = None
    #: entries of the topic registry (``kafka_topics.TOPICS``), never ad hoc names
    topics_in: tuple[TopicSpec, ...] = ()
    topics_out: tuple[TopicSpec, ...] = ()
    #: what it writes instead with ``kafka.message_format = "original"``: the original
    #: system's results topic first, then its GROBID output and PDF text topics
    topics_original: tuple[TopicSpec, ...] = ()
    sink: Sink = "stdout"
    #: ``module:function`` giving the Kafka message key of an output
    key: str | None = None

    def __post_init__(self) -> None:
        # a topic the registry does not know would be missing from `kafka topics --create`
        unknown = [t.full("<env>") for t in (*self.topics_in, *self.topics_out,
                                             *self.topics_original)
                   if TOPICS.get(t.name) != t]
        if unknown:
            raise SchemaError(f"worker {self.name}: topics not in kafka_topics.TOPICS: "
                              f"{', '.join(unknown)}")

    def default_batch(self, options: dict[str, Any]) -> int:
        if self.batch_size_when and options.get(self.batch_size_when[0]):
            return self.batch_size_when[1]
        return self.batch_size

    @property
    def reads(self) -> str:
        """What one input record is, in words (the description's left side)."""
        return self.description.split(" -> ")[0]

    def batch_help(self) -> str:
        """The default batch size as ``--help`` says it."""
        text = f"{self.batch_size:,}"
        if self.batch_size_when:
            option, size = self.batch_size_when
            text += f"; {size:,} with --{option.replace('_', '-')}"
        return text


WORKERS: dict[str, WorkerSpec] = {s.name: s for s in (
    WorkerSpec("parse-crossref-refs", "sandcrawler.app.builders.refs:parse_crossref_refs",
               "Crossref works -> grobid_refs rows", output=_GROBID_REFS_ROW),
    WorkerSpec("persist-crossref", "sandcrawler.app.builders.refs:persist_crossref",
               "Crossref works (and their parsed references) -> the database",
               # nothing slow in the loop: large batches amortise the COPY and the
               # upsert; with a parser in it, results come back sooner
               batch_size=2000, batch_size_when=("parse_refs", 100),
               topics_in=(API_CROSSREF,), sink="database"),
    WorkerSpec("persist-grobid-refs", "sandcrawler.app.builders.refs:persist_grobid_refs",
               "grobid_refs rows -> the database", batch_size=2000, input=_GROBID_REFS_ROW,
               sink="database"),
    WorkerSpec("parse-citations", "sandcrawler.app.builders.citations:parse_citations",
               "reference strings -> GrobidBiblio objects"),
    WorkerSpec("match-biblio", "sandcrawler.app.builders.match:match_biblio",
               "biblios (refs_json objects or reference strings) -> match results",
               batch_size=200),
    # a work has tens of references: 20 works are a few hundred matches per transaction
    WorkerSpec("match-refs", "sandcrawler.app.builders.match:match_refs",
               "grobid_refs rows -> citation rows (references resolved)", batch_size=20,
               input=_GROBID_REFS_ROW, topics_in=(GROBID_REFS,), sink="database"),
    WorkerSpec("backfill-cdx", "sandcrawler.app.builders.pdf:backfill_cdx",
               "CDX lines -> PDF table file:cdx and file:mime",
               batch_size=2000, sink="database"),
    WorkerSpec("extract-pdf", "sandcrawler.app.builders.extract:extract_pdf",
               "PDF paths -> header and references (the embedded extraction cascade)",
               batch_size=4),
    WorkerSpec("process-pdf", "sandcrawler.app.builders.pdf:process_pdf",
               "file records -> metadata, text, thumbnails, GROBID full text",
               batch_size=8, output=_PROCESS_RESULT, topics_in=(PDF_FILES,),
               topics_out=(PDF_RESULTS,), topics_original=(GROBID_OUTPUT, PDF_TEXT),
               key="sandcrawler.pdf.worker:result_key"),
    WorkerSpec("ingest-fileset", "sandcrawler.app.builders.fileset:ingest_fileset",
               "dataset ingest requests -> archived files and fileset results",
               batch_size=1, input=_INGEST_REQUEST, output=_FILESET_INGEST_RESULT,
               topics_in=(INGEST_FILE_REQUESTS,),
               topics_out=(INGEST_FILESET_RESULTS, INGEST_FILE_RESULTS),
               key="sandcrawler.fileset.worker:result_key"),
    WorkerSpec("ingest", "sandcrawler.app.builders.ingest:ingest",
               "ingest requests of every type -> file and fileset ingest results",
               batch_size=20, input=_INGEST_REQUEST),
    WorkerSpec("ingest-file", "sandcrawler.app.builders.ingest:ingest_file",
               "file ingest requests (pdf, xml, html) -> crawled, archived, processed full "
               "text and file ingest results",
               # one WARC file per batch: fewer, larger files; a batch is redone whole
               batch_size=20, input=_INGEST_REQUEST, output=_FILE_INGEST_RESULT,
               topics_in=(INGEST_FILE_REQUESTS,), topics_out=(INGEST_FILE_RESULTS,),
               topics_original=(INGEST_FILE_RESULTS, GROBID_OUTPUT, PDF_TEXT),
               key="sandcrawler.fileset.worker:result_key"),
    WorkerSpec("persist-ingest-file", "sandcrawler.app.builders.ingest:persist_ingest_file",
               "file ingest results -> ingest_file_result, ingest_request",
               batch_size=2000, input=_INGEST_RESULT_VIEW, topics_in=(INGEST_FILE_RESULTS,),
               sink="database"),
    WorkerSpec("persist-ingest-fileset", "sandcrawler.app.builders.fileset:persist_ingest_fileset",
               "fileset and file ingest results -> ingest_file_result, ingest_fileset_platform",
               batch_size=2000, input=_INGEST_RESULT_VIEW,
               topics_in=(INGEST_FILESET_RESULTS, INGEST_FILE_RESULTS), sink="database"),
)}


def build_worker(name: str, settings: CoreSettings, options: dict[str, Any]) -> Worker:
    """The worker ``name`` with ``options``, on this process's services."""
    builder: Callable[..., Worker] = load_object(WORKERS[name].build)
    return builder(Services.for_process(settings), **options)


def message_key(name: str) -> Callable[[Any], str | bytes | None]:
    """The Kafka message key of worker ``name``'s outputs (none: no key)."""
    key = WORKERS[name].key
    if key is None:
        return lambda _: None
    function: Callable[[Any], str | bytes | None] = load_object(key)
    return function


def worker_factory(name: str, settings: CoreSettings, **options: Any) -> Callable[[], Worker]:
    """A picklable zero-argument factory (what the runner and ``-j N`` processes call)."""
    return partial(build_worker, name, settings, options)

