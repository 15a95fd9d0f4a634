"""The web pages of ``sandcrawler serve``: a read-only Starlette application.

Every page is server-rendered HTML from an autoescaped Jinja2 template and the
same data as JSON; no page runs a script (the CSP forbids them; charts are SVG).

    request ─▶ Guard (Host, token, security headers) ─▶ route ─▶ reads.* (Services) ─▶ page | JSON

Who may ask is ``exposure``'s. No page names the Host it was asked under or
repeats a token: links are relative (docs/api.md, "Web pages").
"""

from __future__ import annotations

import hmac
import logging
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from http.cookies import SimpleCookie
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, parse_qsl, quote, urlencode

import anyio.to_thread
import orjson
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandcrawler.app.services import Services
from sandcrawler.core.errors import (
    CorruptData,
    InfrastructureError,
    InvalidName,
    NotFound,
    RecordError,
    SandcrawlerError,
)
from sandcrawler.core.textfix import readable
from sandcrawler.site import (
    cdx_api,
    charts,
    citations,
    exposure,
    formats,
    lists,
    reads,
    search,
)
from sandcrawler.site.page_data import ErrorPage, PageData
from sandcrawler.storage.resources import KINDS
from sandcrawler.version import __version__
from sandcrawler.web.archive.warc import BadWarc

log = logging.getLogger(__name__)

CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
#: what stored and captured files are served under: a sandbox (a unique origin, no
#: scripts, no forms), nothing loaded from anywhere. Chromium's PDF viewer still
#: shows a PDF under it, and its image viewer styles an image inline (a violation
#: with style-src 'self', logged in the console for every thumbnail).
FILE_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
TOKEN_COOKIE = "sandcrawler_token"
TOKEN_PARAM = "token"
#: what a resource is served as: images, PDFs and the metadata shown (under
#: FILE_CSP), everything else downloaded
_INLINE = {"thumb-small": "image/png", "thumb-medium": "image/png", "thumb-large": "image/png",
           "thumb-listing": "image/jpeg", "pdf": "application/pdf",
           "metadata": "application/json"}
_SPOOL = 8 * 2**20
_STATIC = Path(__file__).parent / "static"
_FAVICON = (_STATIC / "favicon.svg").read_bytes()


class Guard:
    """Security headers on every answer; a Host the server does not answer to is
    421 (400 when malformed); with a token, a request without it is 401
    (``Authorization: Bearer TOKEN``, ``?token=TOKEN``, which sets a cookie, or the
    cookie). Connections other than HTTP never reach the application."""

    def __init__(self, app: ASGIApp, token: str = "",
                 hosts: exposure.Hosts = exposure.LOOPBACK) -> None:
        self.app = app
        self.token = token.encode()
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # the server starting and stopping: not a client
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            # websockets (the site has none) and whatever else a server may pass are
            # refused here, so no route added later escapes the checks below
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})  # policy violation
            return
        refusal = self.hosts.refusal([v for k, v in scope["headers"] if k == b"host"])
        if refusal is not None:
            await _send(send, *refusal, [])
            return
        if self.token:
            given, from_query = self._given(scope)
            if not hmac.compare_digest(given, self.token):
                await _send(send, 401, b"401 Unauthorized: this server needs its token "
                            b"(Authorization: Bearer TOKEN, or ?token=TOKEN)\n",
                            [(b"www-authenticate", b"Bearer")])
                return
            if from_query:
                # the cookie from now on, and the address without the token: it stays
                # out of the history, bookmarks and what a user copies to others
                await _send(send, 303, b"", [
                    (b"location", _without_token(scope).encode("ascii")),
                    (b"set-cookie", f"{TOKEN_COOKIE}={self.token.decode()}; "
                     "HttpOnly; SameSite=Strict; Path=/".encode())])
                return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"content-security-policy" for k, _ in headers):
                    headers.append((b"content-security-policy", CSP.encode()))
                headers += SECURITY_HEADERS
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)

    def _given(self, scope: Scope) -> tuple[bytes, bool]:
        headers = dict(scope.get("headers", []))
        auth = headers.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer ":
            return auth[7:].strip(), False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if TOKEN_PARAM in query:
            return query[TOKEN_PARAM][0].encode(), True
        cookie = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
        if TOKEN_COOKIE in cookie:
            return cookie[TOKEN_COOKIE].value.encode(), False
        return b"", False


def _without_token(scope: Scope) -> str:
    """The path and query a request asked for, less ``token``: a path of this site
    (one leading slash: ``//name`` would be another site's), its query re-encoded."""
    path = "/" + quote(scope.get("path", "/"), safe="/:@!$&'()*+,;=-._~").lstrip("/")
    query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                                          keep_blank_values=True) if k != TOKEN_PARAM]
    return path + ("?" + urlencode(query) if query else "")


async def _send(send: Send, status: int, body: bytes,
                headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                            (b"content-security-policy", CSP.encode()),
                            *SECURITY_HEADERS, *headers]})
    await send({"type": "http.response.body", "body": body})


def _jinja() -> Environment:
    env = Environment(loader=PackageLoader("sandcrawler.site", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.globals.update(version=__version__, bar_chart=charts.bar_chart,
                       kinds=KINDS, clip=_clip)
    env.filters["pretty"] = lambda value: orjson.dumps(
        value, option=orjson.OPT_INDENT_2, default=str).decode()
    env.filters["intcomma"] = lambda n: f"{n:,}" if isinstance(n, int) else n
    env.filters["when"] = formats.when
    env.filters["iso"] = formats.iso
    env.filters["size"] = formats.size
    env.filters["readable"] = lambda t: readable(t) if isinstance(t, str) else t
    return env


def _clip(value: Any, limit: int = reads.CELL_CHARS) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"


def json_link(request: Request) -> str:
    """This page as JSON, relative to the page (a query alone): it names neither the
    Host asked under nor a path that could read as another site's (``//name/``), and
    it drops the token a ``?token=`` brought."""
    query = [(k, v) for k, v in request.query_params.multi_items()
             if k not in (TOKEN_PARAM, "format")]
    return "?" + urlencode([*query, ("format", "json")])


def wants_json(request: Request) -> bool:
    fmt = request.query_params.get("format")
    if fmt is not None:
        return fmt == "json"
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


class Pages:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.env = _jinja()

    def render(self, request: Request, template: str, data: PageData,
               status: int = 200) -> Response:
        if wants_json(request):
            return Response(orjson.dumps(data, default=str,
                                         option=orjson.OPT_NON_STR_KEYS), status,
                            media_type="application/json")
        html = self.env.get_template(template).render(data=data, request=request,
                                                      json_link=json_link(request))
        return HTMLResponse(html, status)

    def error(self, request: Request, status: int, message: str) -> Response:
        data: ErrorPage = {"error": HTTPStatus(status).phrase, "status": status,
                           "message": message}
        return self.render(request, "error.html", data, status)

    @staticmethod
    def _cited_page(request: Request) -> int:
        """The page of a work's "cited by" list (``?cited_page=N``)."""
        return _int(request.query_params.get(citations.PAGE_PARAM, "1"), citations.PAGE_PARAM)

    # --- pages

    def dashboard(self, request: Request) -> Response:
        return self.render(request, "dashboard.html", reads.dashboard(self.services))

    def document(self, request: Request) -> Response:
        data = reads.document(self.services, request.path_params["uuid"], self._cited_page(request))
        if data is None:
            raise NotFound(f"no document {request.path_params['uuid']} in the catalogue")
        return self.render(request, "document.html", data)

    def resource(self, request: Request) -> Response:
        """A stored file: images, PDFs and the metadata shown in the browser
        (``?download=1``: saved), under FILE_CSP; every other kind downloaded."""
        doc, kind = reads.resource_kind(request.path_params["uuid"], request.path_params["kind"])
        stream = self.services.resources.open(doc, kind)
        media = None if request.query_params.get("download") else _INLINE.get(kind)
        name = f"{doc}{KINDS[kind].suffix}"
        headers = {"content-disposition": f'{"inline" if media else "attachment"}; '
                                          f'filename="{name}"',
                   "content-security-policy": FILE_CSP}
        return StreamingResponse(_chunks(stream), media_type=media or "application/octet-stream",
                                 headers=headers)

    def ingest_list(self, request: Request) -> Response:
        q = request.query_params
        data = lists.ingest_list(self.services, q.get("type", ""), q.get("status", ""),
                                 _int(q.get("page", "1"), "page"), q.get("sort", "-date"))
        return self.render(request, "ingest_list.html", data)

    def timeline(self, request: Request) -> Response:
        url = request.query_params.get("url", "")
        data = lists.timeline(self.services, url,
                              _int(request.query_params.get("page", "1"), "page"))
        if data is None:
            raise NotFound(f"no capture of {url[:200]} in our web archive")
        return self.render(request, "timeline.html", data)

    def search(self, request: Request) -> Response:
        page = _int(request.query_params.get("page", "1"), "page")
        data = search.search(self.services, request.query_params.get("q", ""), page)
        return self.render(request, "search.html", data)

    def ingest(self, request: Request) -> Response:
        kind, url = request.path_params["ingest_type"], request.query_params.get("url", "")
        data = reads.ingest_result(self.services, kind, url)
        if data is None:
            raise NotFound(f"no {kind} ingest result for {url}")
        return self.render(request, "ingest.html", data)

    def _capture(self, request: Request) -> Any:
        q = request.query_params
        row = reads.capture_row(self.services, q.get("warc", ""), q.get("offset", ""))
        if row is None:
            raise NotFound(f"no capture at {q.get('warc')} offset {q.get('offset')}")
        return row

    def capture(self, request: Request) -> Response:
        return self.render(request, "capture.html",
                           reads.capture(self.services, self._capture(request),
                                         self.services.settings.serve.replay_url))

    def payload(self, request: Request) -> Response:
        row = self._capture(request)
        if row.status_code != 200 and not row.is_revisit:
            raise NotFound(f"the capture of {row.url} is an HTTP {row.status_code or '-'} "
                           "answer: it has no payload to download")
        spool: IO[bytes] = tempfile.SpooledTemporaryFile(_SPOOL)  # noqa: SIM115 (the response closes it)
        try:
            got = self.services.web_archive.read_payload(row, spool)
        except BaseException:
            spool.close()
            raise
        spool.seek(0)
        name = (row.url.rstrip("/").rsplit("/", 1)[-1].split("?")[0] or "payload")[:100]
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
        return StreamingResponse(
            _chunks(spool), media_type="application/octet-stream",
            # a download, never a page of ours: captured HTML runs nothing here
            headers={"content-disposition": f'attachment; filename="{safe}"',
                     "content-security-policy": FILE_CSP,
                     "content-length": str(got.size),
                     "x-captured-content-type": (got.content_type or "")[:200]})

    def crossref(self, request: Request) -> Response:
        doi = request.path_params["doi"]
        data = reads.crossref_refs(self.services, doi, self._cited_page(request))
        if data is None:
            raise NotFound(f"no Crossref record for {doi} in the database")
        return self.render(request, "crossref.html", data)


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    with stream:
        while chunk := stream.read(256 * 1024):
            yield chunk


def _int(text: str, name: str) -> int:
    if not text.isdigit() or len(text) > 9:
        raise InvalidName(f"{name} must be a whole number from 1, not {text[:40]!r}")
    return int(text)


def create_app(services: Services) -> ASGIApp:
    """The application on ``services`` (which the caller closes), exposed as their
    ``serve`` settings say; ConfigError when those would expose it unprotected."""
    settings = services.settings.serve
    exposure.check(settings)
    pages = Pages(services)

    def handle(endpoint: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def run(request: Request) -> Response:
            try:
                return endpoint(request)
            except InvalidName as e:
                return pages.error(request, 400, str(e))
            except NotFound as e:
                return pages.error(request, 404, str(e))
            except (CorruptData, BadWarc) as e:
                log.warning("%s: %s", request.url.path, e)
                return pages.error(request, 500, str(e))
            except RecordError as e:
                return pages.error(request, 400, str(e))
            except InfrastructureError as e:
                log.warning("%s: %s", request.url.path, e)
                return pages.error(request, 503, str(e))
            except SandcrawlerError as e:
                log.warning("%s: %s", request.url.path, e)
                return pages.error(request, 500, str(e))
        return run

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = {404: f"nothing at {request.url.path[:200]}",
                   405: "these pages are read-only"}.get(exc.status_code, str(exc.detail))
        return pages.error(request, exc.status_code, message)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("%s: unexpected error", request.url.path)
        return pages.error(request, 500, "unexpected error: see the server's log")

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.workers
        services.check_schema()  # once, before the first request
        yield

    def favicon(request: Request) -> Response:
        # browsers ask for /favicon.ico whatever the page links to
        return Response(_FAVICON, media_type="image/svg+xml",
                        headers={"cache-control": "max-age=86400"})

    routes = [
        Route("/", handle(pages.dashboard)),
        Route("/search", handle(pages.search)),
        Route("/document/{uuid}", handle(pages.document)),
        Route("/document/{uuid}/resource/{kind}", handle(pages.resource)),
        Route("/ingest", handle(pages.ingest_list)),
        Route("/ingest/{ingest_type}", handle(pages.ingest)),
        Route("/timeline", handle(pages.timeline)),
        Route("/capture", handle(pages.capture)),
        Route("/capture/payload", handle(pages.payload)),
        Route("/crossref/{doi:path}", handle(pages.crossref)),
        cdx_api.route(services),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=_STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error, Exception: server_error})
    return Guard(app, settings.token, exposure.Hosts.of(settings))
