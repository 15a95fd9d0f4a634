"""The composition root: the services of one process, built once from the settings.

Every command, and every ``-j N`` worker process, has one ``Services``. It owns
what is expensive or holds connections and derives the rest from them;
components get the collaborators and the settings section they use, never the
whole configuration. The picture of what it builds and the rules of who closes
what (tests/app/test_services_ownership.py checks each) are in
docs/architecture.md, "The composition root" and "Services owns what it builds".
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sandcrawler.citations.registry import choose_parser
from sandcrawler.config import CoreSettings
from sandcrawler.core.errors import ConfigError
from sandcrawler.core.imports import call_builder, load_object

# Each service's modules are imported where it is first built, not here: a
# command pays only for what it uses (`citations parse` needs neither SQLAlchemy
# nor urllib3; start-up figures in docs/benchmarks.md).
if TYPE_CHECKING:
    from sqlalchemy import Engine

    from sandcrawler.citations.base import CitationParser
    from sandcrawler.fileset.ingest import FilesetIngester
    from sandcrawler.fileset.platforms.base import PlatformHelper
    from sandcrawler.grobid.client import GrobidClient
    from sandcrawler.ingest.file_ingest import FileIngester
    from sandcrawler.ingest.history import IngestHistory
    from sandcrawler.kafka.client import BrokerLog
    from sandcrawler.match.document import DocumentMatcher
    from sandcrawler.match.engines import Engine as MatchEngine
    from sandcrawler.match.index import CandidateIndex, IndexWriter
    from sandcrawler.match.matcher import Matcher
    from sandcrawler.pdf.extractor import Extractor
    from sandcrawler.pdf.processor import PdfProcessor
    from sandcrawler.pipeline.db_sink import DatabaseSink
    from sandcrawler.readers.base import Reader
    from sandcrawler.records.fileset import IngestStrategy
    from sandcrawler.storage.blobs import BlobStore
    from sandcrawler.storage.catalogue import Catalogue
    from sandcrawler.storage.items import ItemStore
    from sandcrawler.storage.pdftable import PdfTable
    from sandcrawler.storage.resources import ResourceStore
    from sandcrawler.web.archive.captures import WebArchive
    from sandcrawler.web.file_records import FileLocator
    from sandcrawler.web.http.fetch import HttpFetcher
    from sandcrawler.web.http.hosts import HostGate
    from sandcrawler.web.policy import CrawlPolicy

T = TypeVar("T")


class ServicesClosedError(RuntimeError):
    """A closed ``Services`` was asked for a service: a bug in the caller, which
    must open new services rather than use ones it (or its command) closed."""


class Services:
    def __init__(self, settings: CoreSettings) -> None:
        self.settings = settings
        self._closers: list[Callable[[], Any]] = []
        self._schema_checked = False
        self._lock = threading.Lock()
        self._closed = False

    # --- the process's own ----------------------------------------------------------

    _current: Services | None = None
    _current_pid: int | None = None

    @classmethod
    def for_process(cls, settings: CoreSettings) -> Services:
        """This process's services for ``settings``: the CLI's sink and the worker it
        runs inline share one engine; a ``-j N`` child builds its own, once. The
        services it replaces are closed (in a forked child: abandoned)."""
        current, pid = cls._current, os.getpid()
        if current is not None and cls._current_pid == pid and not current.closed \
                and current.settings == settings:
            return current
        if current is not None:
            if cls._current_pid != pid:
                current.abandon()
            else:
                current.close()
        cls._current, cls._current_pid = cls(settings), pid
        return cls._current

    @property
    def closed(self) -> bool:
        return self._closed

    def _require_open(self) -> None:
        if self._closed:
            raise ServicesClosedError("these services are closed: open new ones "
                                      "(Services(settings) or Services.for_process)")

    def _owned(self, thing: T, close: Callable[[], Any]) -> T:
        self._closers.append(close)
        return thing

    def close(self) -> None:
        """Close everything built, the most recent first (each one, even when an
        earlier one fails: the first failure is raised after). Then every use raises."""
        if self._closed:
            return
        self._closed = True
        self._forget()
        first: BaseException | None = None
        while self._closers:
            try:
                self._closers.pop()()
            except Exception as e:  # close the rest; report the first
                first = first or e
        if first is not None:
            raise first

    def abandon(self) -> None:
        """After ``os.fork``, in the child: give up the parent's services without
        closing them (closing a database connection would end the parent's
        session). The engine's pool forgets its connections (SQLAlchemy's
        ``dispose(close=False)``), so nothing in this process uses them again."""
        if self._closed:
            return
        self._closed = True
        engine = vars(self).get("raw_engine")
        self._forget()
        self._closers.clear()
        if engine is not None:
            engine.dispose(close=False)

    def _forget(self) -> None:
        for name in list(vars(self)):
            if name in _BUILT:
                delattr(self, name)
        self._schema_checked = False
        if Services._current is self:
            Services._current = None

    def __enter__(self) -> Services:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- infrastructure ---------------------------------------------------------------

    @cached_property
    def raw_engine(self) -> Engine:
        """The engine, schema not checked: for ``db init``/``upgrade``/``status``."""
        self._require_open()
        from sandcrawler.db.engine import make_engine

        engine = make_engine(self.settings.database.url)
        return self._owned(engine, engine.dispose)

    def check_schema(self) -> None:
        """Once per process: the embedded database brings itself up to date; any
        other must be at this version's schema (ConfigError otherwise)."""
        with self._lock:
            if not self._schema_checked:
                from sandcrawler.db.revision import at_head

                if not at_head(self.raw_engine):
                    from sandcrawler.db.migrate import ensure_schema

                    ensure_schema(self.raw_engine)
                self._schema_checked = True

    @property
    def engine(self) -> Engine:
        """The engine of a database whose schema is current."""
        self.check_schema()
        return self.raw_engine

    @cached_property
    def blobs(self) -> BlobStore:
        self._require_open()
        from sandcrawler.storage.schemes import open_blob_store

        store = self.settings.store
        backend = open_blob_store(store.url, self._sections(), store.schemes)
        return self._owned(backend, backend.close)

    @cached_property
    def host_gate(self) -> HostGate:
        """This process's per-host politeness, shared by every fetch (crawl.*)."""
        self._require_open()
        from sandcrawler.web.http.hosts import HostGate

        crawl = self.settings.crawl
        return HostGate(concurrency=crawl.host_concurrency, delay=crawl.host_delay)

    @cached_property
    def fetcher(self) -> HttpFetcher:
        self._require_open()
        from sandcrawler.web.http.addresses import AddressPolicy
        from sandcrawler.web.http.fetch import HttpFetcher

        http, crawl = self.settings.http, self.settings.crawl
        fetcher = HttpFetcher(timeout=http.timeout, request_timeout=http.request_timeout,
                              min_rate=http.min_bytes_per_second,
                              max_bytes=http.max_mb * 2**20,
                              routes=http.routes, user_agent=crawl.user_agent,
                              contact=crawl.contact, gate=self.host_gate,
                              retry_after_max=crawl.retry_after_max,
                              addresses=AddressPolicy(http.allow_networks))
        return self._owned(fetcher, fetcher.close)

    @cached_property
    def crawl_policy(self) -> CrawlPolicy:
        """What the crawler may fetch: the blocklist, then robots.txt (crawl.*)."""
        self._require_open()
        from sandcrawler.web.blocklist import UrlBlocklist
        from sandcrawler.web.policy import CrawlPolicy
        from sandcrawler.web.robots import RobotsRules

        crawl = self.settings.crawl
        robots = RobotsRules(self.fetcher, agent=crawl.user_agent,
                             ignore_hosts=crawl.robots_ignore_hosts,
                             gate=self.host_gate) if crawl.robots else None
        return CrawlPolicy(UrlBlocklist(crawl.blocklist_domains, crawl.blocklist_patterns),
                           robots)

    @cached_property
    def grobid(self) -> GrobidClient | None:
        """The GROBID client, or None when no GROBID URL is configured."""
        self._require_open()
        from sandcrawler.grobid.client import GrobidClient

        g = self.settings.grobid
        if not g.url:
            return None
        client = GrobidClient(g.url, timeout=g.timeout, retries=g.retries,
                              pool_size=g.concurrency)
        return self._owned(client, client.close)

    def require_grobid(self) -> GrobidClient:
        if self.grobid is None:
            raise ConfigError("no GROBID URL configured: set SANDCRAWLER_GROBID_URL "
                              "(or url in the [grobid] table of the configuration file)")
        return self.grobid

    @cached_property
    def reader(self) -> Reader:
        """The system's lookups of its own records: SQL, or PostgREST over HTTP with
        a fetcher of its own (no politeness gate: it is our server) (api.*)."""
        self._require_open()
        from sandcrawler.readers.postgrest import PostgrestReader
        from sandcrawler.readers.sql import SqlReader
        from sandcrawler.web.http.fetch import HttpFetcher

        api = self.settings.api
        if api.reader == "sql":
            return SqlReader(self.engine)
        if not api.postgrest_url:
            raise ConfigError("api.reader is postgrest but no PostgREST URL is configured: "
                              "set SANDCRAWLER_API_POSTGREST_URL (or postgrest_url in the "
                              "[api] table of the configuration file)")
        fetcher = HttpFetcher(timeout=api.timeout, request_timeout=api.timeout, retries=3,
                              pool_size=8, user_agent=self.settings.crawl.user_agent,
                              addresses=None)  # the operator's own server
        self._owned(fetcher, fetcher.close)
        return PostgrestReader(api.postgrest_url, fetcher)

    # --- storage ------------------------------------------------------------------------

    @cached_property
    def resources(self) -> ResourceStore:
        self._require_open()
        from sandcrawler.storage.resources import ResourceStore

        return ResourceStore(self.blobs)

    @cached_property
    def catalogue(self) -> Catalogue:
        self._require_open()
        from sandcrawler.storage.catalogue import Catalogue

        return Catalogue(self.engine, self.resources)

    @property
    def pdftable_name(self) -> str:
        from sandcrawler.storage.pdftable import table_name

        self._require_open()
        return table_name(self.settings.pdftable.version, self.settings.env)

    @cached_property
    def pdftable(self) -> PdfTable:
        self._require_open()
        from sandcrawler.storage.pdftable import PdfTable

        return PdfTable(self.engine, self.pdftable_name)

    @cached_property
    def items(self) -> ItemStore:
        """The item store; its writers of one item take turns under the database's
        lock, among every process that shares the database."""
        self._require_open()
        from sandcrawler.db.locks import exclusive
        from sandcrawler.storage.items import ItemStore

        return ItemStore(self.blobs, partial(exclusive, self.engine))

    @cached_property
    def web_archive(self) -> WebArchive:
        self._require_open()
        from sandcrawler.web.archive.captures import WarcInfo, WebArchive

        crawl = self.settings.crawl
        info = WarcInfo(self.fetcher.user_agent, operator=crawl.operator or crawl.contact,
                        robots="obey" if crawl.robots else "ignore")
        return WebArchive(self.blobs, self.engine, self.fetcher,
                          gzip_level=self.settings.warc.gzip_level,
                          block_digest=self.settings.warc.block_digest,
                          spool_dir=self.spool_dir, info=info)

    @cached_property
    def spool_dir(self) -> Path:
        """Where downloads wait on disk (``fileset.tmp_dir``, else ``<data_dir>/spool``);
        what processes killed before they could clean up left there is removed now."""
        self._require_open()
        from sandcrawler.core.spool import sweep

        directory = self.settings.fileset.tmp_dir or self.settings.data_dir / "spool"
        directory.mkdir(parents=True, exist_ok=True)
        sweep(directory)
        return directory

    def database_sink(self) -> DatabaseSink:
        """A sink that checks the schema at its first write, so a database that is
        down when a worker starts is waited out like any outage."""
        from sandcrawler.pipeline.db_sink import DatabaseSink

        return DatabaseSink(self.raw_engine, prepare=self.check_schema)

    def file_locator(self) -> FileLocator:
        """Where file records' bytes come from (``warc.source`` for WARC captures)."""
        from sandcrawler.web.file_records import FileLocator

        return FileLocator(catalogue=self.catalogue, fetcher=self.fetcher,
                           warc_source=self.settings.warc.source, spool_dir=self.spool_dir)

    def extractor(self, *, timeout: float | None = None,
                  memory_limit_mb: int | None = None) -> Extractor:
        """The embedded extraction cascade in its own sandbox (the caller closes it)."""
        self._require_open()
        from sandcrawler.pdf.extractor import Extractor

        return Extractor(self.settings.extract, timeout=timeout,
                         memory_limit_mb=memory_limit_mb,
                         citation_model=self.settings.citation.model)

    def pdf_processor(self, *, timeout: float | None = None,
                      memory_limit_mb: int | None = None) -> PdfProcessor:
        """A PDF processor (its own sandbox: the caller closes it); it identifies
        documents and resolves their references when there is a catalog
        (``document_matcher``)."""
        from sandcrawler.pdf.fulltext import fulltext_options
        from sandcrawler.pdf.processor import PdfProcessor
        from sandcrawler.refs.reading import refs_from_tei

        pdf, grobid = self.settings.pdf, self.settings.grobid
        return PdfProcessor(
            self.catalogue, self.pdftable,
            timeout=timeout or pdf.timeout,
            memory_limit=(memory_limit_mb or pdf.memory_limit_mb) * 2**20,
            extract_options={"thumbnails": pdf.thumbnails, "listing_width": pdf.listing_width,
                             "max_text_chars": pdf.max_text_chars},
            grobid=self.grobid, grobid_options=fulltext_options(grobid),
            grobid_max_bytes=grobid.max_pdf_mb * 2**20,
            documents=self.document_matcher(), tei_references=refs_from_tei,
            extractor=self.extractor(timeout=timeout, memory_limit_mb=memory_limit_mb)
            if self.settings.extract.enabled else None)

    def document_matcher(self) -> DocumentMatcher | None:
        """What identifies documents and resolves their references after
        ``process`` and file ingest (docs/matching-documents.md), on ``matcher``;
        None when there is no catalog to match against: the crossref table holds
        no works, or the match index is empty (or missing, with ``match.update``
        off). Then nothing is written, rather than a status that a catalog
        loaded later would make stale."""
        self._require_open()
        from sqlalchemy import select

        from sandcrawler.db.schema import crossref
        from sandcrawler.match.document import DocumentMatcher
        from sandcrawler.match.index import IndexMissing

        with self.engine.connect() as conn:
            if conn.execute(select(crossref.c.doi).limit(1)).first() is None:
                return None
        try:
            matcher = self.matcher
        except IndexMissing:
            return None
        if matcher.catalog_empty():
            return None
        return DocumentMatcher(matcher, self.catalogue, self.pdftable, self.engine)

    # --- parsers, platforms, ingest -----------------------------------------------------

    def citation_parser(self, name: str | None = None) -> CitationParser:
        """The parser ``name`` (a registry name, or None for the setting); the
        caller closes it. Its builder gets what its parameters name: a settings
        section, or ``grobid_client`` (this process's GROBID client)."""
        self._require_open()
        spec = choose_parser(name or self.settings.citation.parser, self.settings.grobid.url)
        offers = {**self._sections(), "grobid_client": self.require_grobid}
        parser: CitationParser = call_builder(spec.load(), offers)
        return parser

    def check_citation_parser(self, name: str | None = None) -> None:
        """Fail before any input is read when the parser cannot work (ConfigError,
        InfrastructureError)."""
        parser = self.citation_parser(name)
        try:
            parser.check()
        finally:
            parser.close()

    # --- matching ---------------------------------------------------------------------

    def match_index_writer(self, *, rebuild: bool = False
                           ) -> tuple[IndexWriter, Callable[[], None]]:
        """The match index of ``match.engine`` (``match/engines.py``), open for
        writing, and what makes the writes the index readers see (with
        ``rebuild``: a fresh index, put in place by that call); the caller closes
        the writer. The embedded index is created when missing (with ``rebuild``,
        replaced when of another schema); a search engine's collection too."""
        self._require_open()
        writer: tuple[IndexWriter, Callable[[], None]] = load_object(
            self._match_engine().writer)(self.settings.match, rebuild=rebuild)
        return writer

    def _match_engine(self) -> MatchEngine:
        from sandcrawler.match.engines import ENGINES

        engine = ENGINES.get(self.settings.match.engine)
        if engine is None:
            raise ConfigError(f"match.engine {self.settings.match.engine!r} is not one of "
                              f"{', '.join(ENGINES)}")
        return engine

    def match_index_reader(self) -> CandidateIndex:
        """The match index of ``match.engine``, for reading; the caller closes it.
        ConfigError (IndexMissing for the embedded one) when there is none."""
        self._require_open()
        index: CandidateIndex = load_object(self._match_engine().reader)(self.settings.match)
        return index

    def sync_match_index(self) -> int:
        """Bring the match index up to date with the crossref table when it is
        behind (``match.update``); returns how many works it read."""
        from sandcrawler.match.sync import sync

        if not self._match_engine().made_on_demand:
            # a search engine's index is built by `match index --engine`, never as a
            # side effect of matching: without one, say so (ConfigError) and make none
            self.match_index_reader().close()
        writer, finish = self.match_index_writer()
        try:
            read = sync(self.engine, writer).read
            if read:
                finish()
            return read
        finally:
            writer.close()

    @cached_property
    def matcher(self) -> Matcher:
        """The matcher on the index of ``match.engine``, with the citation parser
        of ``match.parser`` for reference strings. Brings the index up to date
        first (``match.update``), so a match never reads an index older than the
        table."""
        self._require_open()
        from sandcrawler.match.matcher import Matcher, parse_with

        if self.settings.match.update:
            self.sync_match_index()
        index = self._owned(self.match_index_reader(), lambda: index.close())
        parser = self._owned(self.citation_parser(self.settings.match.parser),
                             lambda: parser.close())
        return Matcher(index, parse_with(parser))

    def platform_helpers(self) -> list[PlatformHelper[Any]]:
        from sandcrawler.app.settings import platform_sections
        from sandcrawler.fileset.platforms import platform_helpers

        return platform_helpers(platform_sections(self.settings), self.fetcher,
                                self.settings.fileset)

    def fileset_ingester(self, strategy: IngestStrategy | None = None) -> FilesetIngester:
        from sandcrawler.fileset.ingest import FilesetIngester
        from sandcrawler.fileset.strategies import ArchiveContext

        ctx = ArchiveContext(self.settings.fileset, self.fetcher, self.web_archive, self.items,
                             spool_dir=self.spool_dir)
        return FilesetIngester(ctx, self.platform_helpers(), strategy)

    @cached_property
    def ingest_history(self) -> IngestHistory:
        self._require_open()
        from sandcrawler.ingest.history import IngestHistory

        return IngestHistory(self.reader, self.catalogue, self.pdftable)

    def file_ingester(self) -> FileIngester:
        """The file ingester: the crawler on the web archive, with the crawl policy,
        and one processor per ingest type (``PROCESSORS``); the caller closes it."""
        from sandcrawler.ingest.crawl import Crawler
        from sandcrawler.ingest.file_ingest import FileIngester

        crawl = self.settings.crawl
        crawler = Crawler(self.web_archive, policy=self.crawl_policy,
                          max_hops=crawl.max_hops, max_bytes=self.settings.http.max_mb * 2**20,
                          max_html_bytes=crawl.max_html_mb * 2**20,
                          record_timeout=crawl.record_timeout, spool_dir=self.spool_dir)
        processors = {kind: partial(self._build, path) for kind, path in PROCESSORS.items()}
        return FileIngester(self.web_archive, crawler, processors, self.ingest_history,
                            concurrency=crawl.concurrency)

    def _sections(self) -> dict[str, Callable[[], object]]:
        """Each settings section by its name, for a builder that asks for it."""
        return {name: partial(getattr, self.settings, name) for name in self.settings.sections()}

    def _build(self, path: str) -> Any:
        """What the builder a registry names as ``module:function`` makes of these
        services (the module is imported now, not before)."""
        return load_object(path)(self)

    # --- Kafka --------------------------------------------------------------------------

    def topic(self, name: str, prefix: str = "sandcrawler") -> str:
        from sandcrawler.kafka.client import topic_name

        self._require_open()
        return topic_name(self.settings.env, name, prefix)

    @cached_property
    def broker_log(self) -> BrokerLog:
        """One for the process's clients: an outage is said once, not per client."""
        self._require_open()
        from sandcrawler.kafka.client import BrokerLog, require_brokers

        return BrokerLog(require_brokers(self.settings.kafka))

    def consumer_config(self, group_id: str) -> dict[str, Any]:
        from sandcrawler.kafka.client import consumer_config

        return consumer_config(self.settings.kafka, group_id, broker_log=self.broker_log)

    def producer_config(self) -> dict[str, Any]:
        from sandcrawler.kafka.client import producer_config

        return producer_config(self.settings.kafka, broker_log=self.broker_log)


#: ingest type (an ``IngestType`` value) -> ``module:function`` building its
#: processor from the services; imported when a file ingester is built (the HTML
#: one loads trafilatura)
PROCESSORS = {
    "pdf": "sandcrawler.app.builders.processors:pdf",
    "xml": "sandcrawler.app.builders.processors:xml",
    "html": "sandcrawler.app.builders.processors:html",
}


#: the cached properties, forgotten by close() so a closed Services can be reused
_BUILT = {name for name, value in vars(Services).items() if isinstance(value, cached_property)}
