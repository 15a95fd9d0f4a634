"""``sandcrawler grobid-serve``: GROBID's REST API (its paths, form fields,
parameters, answers and statuses) answered by the embedded cascade, so that
GROBID's clients work against it unchanged (docs/grobid-service.md).

    request -> form read within its limits (400/408/413) -> a free worker or 503
            -> the cascade (or a text model) in the worker's sandbox
            -> consolidation against our catalog -> TEI or BibTeX (200/204/500)

Built from its parts by the composition root (``app.builders.grobid_serve``);
who may ask (Host, token) is the site's ``Guard``, put around it by the command.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from http import HTTPStatus
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import orjson
from grobid_tei_xml.types import GrobidBiblio
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandcrawler.config import GrobidServeSettings
from sandcrawler.core.errors import SandcrawlerError
from sandcrawler.docparse.assembly.tei import TeiOptions, extraction_tei
from sandcrawler.grobid import tasks
from sandcrawler.grobid.bibtex import bibtex_entries, bibtex_entry
from sandcrawler.grobid.dates import parse_date
from sandcrawler.grobid.forms import Form, FormRejected, Limits, read_form
from sandcrawler.grobid.fragments import (
    affiliations_tei,
    citation_list_tei,
    citation_tei,
    date_tei,
    persons_tei,
)
from sandcrawler.grobid.metrics import ServiceMetrics
from sandcrawler.grobid.params import ParamError, Params, citation_params, document_params
from sandcrawler.grobid.pool import Worker, WorkerPool, run_task
from sandcrawler.match.consolidate import Consolidator
from sandcrawler.process.sandbox import START_TIMEOUT, SandboxError
from sandcrawler.records.extraction import USABLE, Extraction, ExtractRequest
from sandcrawler.records.statuses import ExtractStatus, LayoutStatus, SandboxStatus
from sandcrawler.version import __version__

log = logging.getLogger(__name__)
T = TypeVar("T")

HEADER, FULLTEXT, REFERENCES = "processHeaderDocument", "processFulltextDocument", \
    "processReferences"
XML = "application/xml; charset=UTF-8"
TEXT = "text/plain; charset=UTF-8"
BIBTEX = "application/x-bibtex; charset=UTF-8"
#: GROBID's error kind (its GrobidExceptionStatus) of each status the cascade gives
ERROR_KINDS: dict[str, str] = {
    ExtractStatus.NOT_PDF: "BAD_INPUT_DATA", ExtractStatus.BAD_PDF: "BAD_INPUT_DATA",
    ExtractStatus.ENCRYPTED: "BAD_INPUT_DATA", ExtractStatus.EMPTY_PDF: "BAD_INPUT_DATA",
    LayoutStatus.NO_TEXT: "NO_BLOCKS", LayoutStatus.LAYOUT_FAILED: "PDFALTO_CONVERSION_FAILURE",
    LayoutStatus.LAYOUT_TIMEOUT: "TIMEOUT", LayoutStatus.LAYOUT_MEMORY_LIMIT: "GENERAL",
    SandboxStatus.TIMEOUT: "TIMEOUT", SandboxStatus.MEMORY_LIMIT: "GENERAL",
    SandboxStatus.CRASHED: "GENERAL",
}
_SANDBOX = frozenset(SandboxStatus)


@dataclass(frozen=True, slots=True)
class ModelPaths:
    """The models a worker loads: ``extract.models`` and ``citation.model``
    (None: the shipped ones)."""

    models: Path | None = None
    citation: Path | None = None


@dataclass
class ServiceParts:
    settings: GrobidServeSettings
    pool: WorkerPool
    models: ModelPaths
    #: None when there is no catalog to consolidate against
    consolidator: Consolidator | None = None
    spool_dir: Path | None = None
    version: str = __version__


def _line(status: int, message: str) -> Response:
    phrase = HTTPStatus(status).phrase
    return Response(f"{status} {phrase}: {message}\n".encode(), status, media_type=TEXT)


def _error(kind: str, status: str, message: str | None) -> Response:
    """A 500 as GROBID gives one: ``[KIND] message`` (here with the status too)."""
    text = f"[{kind}] {status}: {message or status}"
    return Response(" ".join(text.split()).encode() + b"\n", 500, media_type=TEXT)


def _busy(size: int) -> Response:
    return _line(503, f"all {size} workers are busy; retry in a few seconds")


def _wants_bibtex(request: Request) -> bool:
    return "application/x-bibtex" in request.headers.get("accept", "").lower()


def _header_empty(x: Extraction) -> bool:
    return (x.header is None or x.header.is_empty()) and not x.abstract and not x.keywords


def _nothing(x: Extraction) -> bool:
    body = x.body is not None and bool(x.body.text().strip())
    return _header_empty(x) and not x.references and not body


def extract_request(endpoint: str, params: Params, header_pages: int) -> ExtractRequest:
    """What the cascade reads for each PDF service and its ``start``/``end``."""
    if endpoint == HEADER:
        return ExtractRequest(header_only=True, references=False, first_page=params.start,
                              last_page=params.end, header_pages=params.end or header_pages)
    return ExtractRequest(full=endpoint == FULLTEXT, references=True,
                          first_page=params.start, last_page=params.end)


class GrobidService:
    def __init__(self, parts: ServiceParts) -> None:
        self.parts = parts
        self.settings = parts.settings
        self.pool = parts.pool
        self.metrics = ServiceMetrics(workers=self.pool.size, version=parts.version)
        self.pool.on_change = self.metrics.busy.set
        self.limits = Limits(max_bytes=self.settings.max_upload_mb * 2**20,
                             deadline=self.settings.upload_timeout, spool_dir=parts.spool_dir)
        # a thread per worker, never waiting behind other threads of the process
        self._limiter = anyio.CapacityLimiter(self.pool.size)
        self._rewarming: set[asyncio.Task[None]] = set()

    # --- workers ----------------------------------------------------------------------

    def _warm(self, worker: Worker) -> None:
        m = self.parts.models
        worker.sandbox.call(tasks.warm, m.models, m.citation,
                            timeout=max(worker.timeout, START_TIMEOUT))

    def warm(self) -> None:
        """Start every worker's process and load its models (GROBID's model
        preloading): the first alone (it starts the sandboxes' fork server, which
        two first starts at once can break), the others side by side. A worker
        that cannot start is the SandboxError raised."""
        first, *others = self.pool.workers
        self._warm(first)
        errors: list[BaseException] = []

        def one(worker: Worker) -> None:
            try:
                self._warm(worker)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=one, args=(w,), daemon=True) for w in others]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]

    def _give_back(self, worker: Worker, failed: bool) -> None:
        """Return the worker; one whose process was killed or died is restarted
        (its models loaded) first, after the answer, so the next request on it
        pays nothing."""
        if not failed:
            self.pool.release(worker)
            return

        async def rewarm() -> None:
            try:
                await anyio.to_thread.run_sync(self._warm, worker)
            except Exception as e:  # the next call starts it again
                log.warning("restarting a worker failed: %s", e)
            finally:
                self.pool.release(worker)

        task = asyncio.get_running_loop().create_task(rewarm())
        self._rewarming.add(task)
        task.add_done_callback(self._rewarming.discard)

    async def _in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(partial(fn, *args), limiter=self._limiter)

    def close(self) -> None:
        self.pool.close()

    # --- requests ---------------------------------------------------------------------

    async def _form(self, request: Request) -> Form:
        return await read_form(request.headers.get("content-type"),
                               request.headers.get("content-length"), request.stream(),
                               self.limits)

    async def _consolidate(self, what: str, fn: Callable[..., Any], *args: Any) -> None:
        """Consolidation in a thread; a catalog that fails leaves the biblios as read
        (GROBID's answer when Crossref is down), said in the log."""
        try:
            await anyio.to_thread.run_sync(partial(fn, *args))
        except Exception as e:
            log.warning("consolidating %s failed, answered without: %s", what, e)

    async def document(self, request: Request, endpoint: str) -> Response:
        """processHeaderDocument, processFulltextDocument, processReferences."""
        form = await self._form(request)
        try:
            upload = form.files.get("input")
            if upload is None or upload.size == 0:
                raise ParamError("no PDF: the form's file field `input` is missing or empty")
            params = document_params(form, header=endpoint == HEADER,
                                     header_pages=self.settings.header_pages)
            worker = self.pool.try_acquire()
            if worker is None:
                return _busy(self.pool.size)
            failed = True
            try:
                found = await self._in_thread(
                    worker.extract, str(upload.path),
                    extract_request(endpoint, params, self.settings.header_pages))
                failed = found.status in _SANDBOX
            finally:
                self._give_back(worker, failed)
        finally:
            form.close()
        self.metrics.extractions.labels(str(found.status)).inc()
        if found.status not in USABLE:
            return _error(ERROR_KINDS.get(found.status, "GENERAL"), str(found.status),
                          found.error)
        return await self._render_document(request, endpoint, found, params)

    async def _render_document(self, request: Request, endpoint: str, found: Extraction,
                               params: Params) -> Response:
        c = self.parts.consolidator
        if endpoint == REFERENCES:
            if not found.references:
                return Response(status_code=204)
            if c is not None and params.consolidate_citations:
                await self._consolidate("references", c.citations, found.references,
                                        params.consolidate_citations)
            if _wants_bibtex(request):
                return Response(bibtex_entries(found.references, raw=params.raw_citations),
                                media_type=BIBTEX)
            return Response(citation_list_tei(found.references, raw=params.raw_citations),
                            media_type=XML)
        if (_header_empty(found) if endpoint == HEADER else _nothing(found)):
            return Response(status_code=204)
        if c is not None and params.consolidate_header and found.header is not None \
                and not found.header.is_empty():
            await self._consolidate("the header", c.header, found.header,
                                    params.consolidate_header)
        if c is not None and params.consolidate_citations and found.references \
                and endpoint == FULLTEXT:
            await self._consolidate("references", c.citations, found.references,
                                    params.consolidate_citations)
        if endpoint == HEADER and _wants_bibtex(request):
            header = found.header or GrobidBiblio(authors=[])
            return Response(bibtex_entry(header, "-1", abstract=found.abstract,
                                         keywords=found.keywords), media_type=BIBTEX)
        options = TeiOptions(coordinates=params.coordinates,
                             segment_sentences=params.segment_sentences,
                             raw_citations=params.raw_citations,
                             raw_affiliations=params.raw_affiliations,
                             generate_ids=params.generate_ids, header_only=endpoint == HEADER)
        tei = await anyio.to_thread.run_sync(extraction_tei, found, options)
        return Response(tei, media_type=XML)

    async def _text_task(self, fn: Callable[..., T], *args: Any) -> T | Response:
        """``fn`` in a free worker's sandbox: its result, or the answer to give (503,
        or 500 when the sandbox killed it)."""
        worker = self.pool.try_acquire()
        if worker is None:
            return _busy(self.pool.size)
        failed = True
        try:
            m = self.parts.models
            result: T = await self._in_thread(run_task, worker, fn, *args, m.models,
                                              m.citation)
            failed = False
            return result
        except SandboxError as e:
            status = str(e.status)
            return _error(ERROR_KINDS.get(status, "GENERAL"), status, str(e))
        finally:
            self._give_back(worker, failed)

    async def citations(self, request: Request, endpoint: str) -> Response:
        """processCitation (one ``citations`` field) and processCitationList (many)."""
        form = await self._form(request)
        form.close()
        strings = form.getlist("citations")
        if not strings:
            raise ParamError("no citation: the form has no `citations` field")
        if endpoint == "processCitation":
            strings = strings[:1]
        elif len(strings) > self.settings.max_citations:
            raise ParamError(f"{len(strings)} citations in one request, more than "
                             f"{self.settings.max_citations} (setting "
                             "grobid_serve.max_citations): send them in batches")
        params = citation_params(form)
        if not any(s.strip() for s in strings):
            return Response(status_code=204)
        parsed = await self._text_task(tasks.parse_citations, strings)
        if isinstance(parsed, Response):
            return parsed
        c = self.parts.consolidator
        if c is not None and params.consolidate_citations:
            await self._consolidate("citations", c.citations, parsed,
                                    params.consolidate_citations)
        bibtex = _wants_bibtex(request)
        if endpoint == "processCitation":
            if bibtex:
                return Response(bibtex_entry(parsed[0], "-1", raw=params.raw_citations),
                                media_type=BIBTEX)
            return Response(citation_tei(parsed[0], raw=params.raw_citations), media_type=XML)
        if bibtex:
            return Response(bibtex_entries(parsed, raw=params.raw_citations), media_type=BIBTEX)
        return Response(citation_list_tei(parsed, raw=params.raw_citations), media_type=XML)

    async def _text_field(self, request: Request, name: str) -> str | None:
        """The form's one text field ``name`` (400 when missing); None when blank."""
        form = await self._form(request)
        form.close()
        value = form.get(name)
        if value is None:
            raise ParamError(f"the form has no `{name}` field")
        return value if value.strip() else None

    async def names(self, request: Request) -> Response:
        """processHeaderNames, processCitationNames."""
        text = await self._text_field(request, "names")
        if text is None:
            return Response(status_code=204)
        persons = await self._text_task(tasks.parse_person_names, text)
        if isinstance(persons, Response):
            return persons
        body = persons_tei(persons)
        return Response(body, media_type=TEXT) if body else Response(status_code=204)

    async def affiliations(self, request: Request) -> Response:
        text = await self._text_field(request, "affiliations")
        if text is None:
            return Response(status_code=204)
        found = await self._text_task(tasks.parse_affiliation_text, text)
        if isinstance(found, Response):
            return found
        body = affiliations_tei(found)
        return Response(body, media_type=TEXT) if body else Response(status_code=204)

    async def date(self, request: Request) -> Response:
        """processDate: rules in this process (no worker: microseconds of work)."""
        text = await self._text_field(request, "date")
        found = parse_date(text[:1000]) if text is not None else None
        if found is None:
            return Response(status_code=204)
        return Response(date_tei(found), media_type=TEXT)

    # --- the service's own ------------------------------------------------------------

    async def isalive(self, request: Request) -> Response:
        return Response(b"true", media_type=TEXT)

    async def version(self, request: Request) -> Response:
        """GROBID's answer, JSON with the version and revision; plain text for a
        client that asks for text only (GROBID before 0.6 answered so)."""
        accept = request.headers.get("accept", "")
        if "text/plain" in accept and "json" not in accept and "*/*" not in accept:
            return Response(self.parts.version.encode(), media_type=TEXT)
        return Response(orjson.dumps({"version": self.parts.version,
                                      "revision": "sandcrawler"}),
                        media_type="application/json")

    async def description(self, request: Request) -> Response:
        return Response(b"<h4>grobid-service documentation</h4>This service is sandcrawler's "
                        b"GROBID-compatible REST API (sandcrawler grobid-serve): the paths, "
                        b"parameters and answers of GROBID's, from sandcrawler's own "
                        b"extraction cascade.", media_type="text/html; charset=UTF-8")

    async def health(self, request: Request) -> Response:
        """Ready, and the pool (what grobid_client_python reads to size its threads)."""
        pool = self.pool
        return Response(orjson.dumps({"ready": True, "pool": {
            "maxActive": pool.size, "active": pool.busy, "idle": pool.size - pool.busy}}),
            media_type="application/json")

    async def prometheus(self, request: Request) -> Response:
        return Response(self.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    # --- the application --------------------------------------------------------------

    def routes(self) -> list[Route]:
        both = ["POST", "PUT"]
        pdf = [(HEADER, both), (FULLTEXT, both), (REFERENCES, both)]
        out = [Route(f"/api/{name}", self._handle(partial(self.document, endpoint=name)),
                     methods=methods) for name, methods in pdf]
        out += [
            Route("/api/processCitation",
                  self._handle(partial(self.citations, endpoint="processCitation")),
                  methods=both),
            Route("/api/processCitationList",
                  self._handle(partial(self.citations, endpoint="processCitationList")),
                  methods=["POST"]),
            Route("/api/processHeaderNames", self._handle(self.names), methods=both),
            Route("/api/processCitationNames", self._handle(self.names), methods=both),
            Route("/api/processAffiliations", self._handle(self.affiliations), methods=both),
            Route("/api/processDate", self._handle(self.date), methods=both),
            Route("/api/isalive", self.isalive, methods=["GET"]),
            Route("/api/version", self.version, methods=["GET"]),
            Route("/api/grobid", self.description, methods=["GET"]),
            Route("/api/health", self.health, methods=["GET"]),
            Route("/metrics", self.prometheus, methods=["GET"]),
        ]
        return out

    def _handle(self, endpoint: Callable[[Request], Awaitable[Response]]
                ) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                return await endpoint(request)
            except FormRejected as e:
                return _line(e.status, str(e))
            except ParamError as e:
                return _line(400, str(e))
            except ClientDisconnect:
                return _line(400, "the client went away before its request was read")
            except SandcrawlerError as e:  # from a worker: a model missing, say
                log.warning("%s: %s", request.url.path, e)
                return _error("GENERAL", "error", str(e))
            except Exception:
                log.exception("%s: unexpected error", request.url.path)
                return _error("GENERAL", "internal-error", "unexpected error: see the "
                              "server's log")
        return run

    def app(self) -> ASGIApp:
        """The application, its every answer measured (``/metrics``)."""
        return Measured(Starlette(routes=self.routes()), self.metrics)


class Measured:
    """Counts and times every answer by endpoint (the path's last part for the API's
    own paths, ``other`` for the rest) and status."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        path = str(scope.get("path", ""))
        name = path.rsplit("/", 1)[-1]
        endpoint = name if path.startswith("/api/") and name in _API else (
            "metrics" if path == "/metrics" else "other")
        status = 500

        async def measured(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, measured)
        finally:
            self.metrics.observe(endpoint, status, time.monotonic() - started)


_API = frozenset({HEADER, FULLTEXT, REFERENCES, "processCitation", "processCitationList",
                  "processHeaderNames", "processCitationNames", "processAffiliations",
                  "processDate", "isalive", "version", "grobid", "health"})
