"""A loopback HTTP server that plays dataset platforms, for fileset-ingest tests.

It answers like Zenodo, figshare, Dataverse installations and archive.org,
with their APIs' JSON shapes, landing pages, downloads and "download all"
zips, under the platforms' real hosts (``routes()`` for the client's
``http_routes``). Datasets are added with ``add_zenodo`` and the like, files are
``FakeFile`` s that may lie or misbehave, and real recorded answers are served
with ``add_recorded`` (docs/testing.md, "The loopback platform server").
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import json
import re
import socket
import threading
import time
import uuid
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any, Self
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from sandcrawler_testkit import _cli
from sandcrawler_testkit.loopback import LoopbackHTTPServer
from sandcrawler_testkit.recorded import Recorded

CHUNK = 64 * 1024
ZENODO = "zenodo.org"
FIGSHARE = "figshare.com"
FIGSHARE_API = "api.figshare.com"
FIGSHARE_DOWNLOADS = "ndownloader.figshare.com"
ARCHIVEORG = "archive.org"
ARCHIVEORG_NODE = "ia800100.us.archive.org"
FIXED_HOSTS = (ZENODO, FIGSHARE, FIGSHARE_API, FIGSHARE_DOWNLOADS, ARCHIVEORG, ARCHIVEORG_NODE)
HTML = "text/html; charset=utf-8"
JSON = "application/json"
TAB = "text/tab-separated-values"
DATAVERSE_FORBIDDEN = (
    "Not authorized to access this object via this API endpoint. Please check your code for "
    "typos, or consult our API guide at http://guides.dataverse.org."
)

Json = dict[str, Any]


@dataclass
class FakeFile:
    """One file of a fake dataset: its bytes, what the API says of it, how it downloads."""

    name: str  # file name; for archive.org may contain "/" (a path in the item)
    data: bytes
    directory: str | None = None  # dataverse directoryLabel (the zip bundle puts the file there)
    mimetype: str = "application/octet-stream"
    restricted: bool = False  # dataverse: restricted file, its download answers 403
    embargoed_until: str | None = None  # dataverse: dataFile.embargo.dateAvailable; 403
    private: bool = False  # archive.org: listed with "private": "true"; its download answers 403
    # dataverse: an ingested tabular file. ``name``/``data``/``mimetype`` are then the
    # uploaded original (what ``md5`` describes, served with ``?format=original``), and
    # these bytes the derived ``.tab`` Dataverse serves by default, named from ``name``
    tabular: bytes | None = None
    # what the platform's API reports (defaults: the truth); set to lie
    reported_size: int | None = None
    reported_md5: str | None = None
    reported_sha1: str | None = None  # archive.org only
    # how its download misbehaves
    status: int | None = None  # answer this status with a short body instead of the bytes
    served: bytes | None = None  # serve these bytes instead of data (wrong content)
    truncate_at: int | None = None  # full Content-Length, this many bytes, then close
    stall_at: int | None = None  # send this many bytes, sleep stall_seconds, then the rest
    stall_seconds: float = 30.0
    redirects: int = 1  # 302 hops before the bytes (0 = direct)
    redirect_loop: bool = False  # the download URL redirects A -> B -> A forever
    chunked: bool = False  # Transfer-Encoding: chunked, no Content-Length


@dataclass
class _Entry:
    """A registered file, its checksums computed once, and its numeric id."""

    file: FakeFile
    id: int
    md5: str
    sha1: str
    crc32: str

    @classmethod
    def of(cls, file: FakeFile, file_id: int) -> _Entry:
        data = memoryview(file.data)
        return cls(
            file,
            file_id,
            hashlib.md5(data).hexdigest(),
            hashlib.sha1(data).hexdigest(),
            f"{zlib.crc32(data):08x}",
        )

    @property
    def size(self) -> int:
        return len(self.file.data)

    @property
    def api_size(self) -> int:
        return self.size if self.file.reported_size is None else self.file.reported_size

    @property
    def api_md5(self) -> str:
        return self.md5 if self.file.reported_md5 is None else self.file.reported_md5

    @property
    def api_sha1(self) -> str:
        return self.sha1 if self.file.reported_sha1 is None else self.file.reported_sha1


@dataclass
class _Page:
    body: bytes
    status: int
    content_type: str
    location: str | None
    headers: dict[str, str] | None = None


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _landing(
    title: str, *, meta: dict[str, str] | None = None, links: Iterable[tuple[str, str]] = ()
) -> bytes:
    """A small HTML page: <title>, <meta name=... content=...>, a list of links."""
    text = html.escape(title)
    heads = "".join(
        f'<meta name="{html.escape(k)}" content="{html.escape(v)}">'
        for k, v in (meta or {}).items()
    )
    items = "".join(
        f'<li><a href="{html.escape(url)}">{html.escape(label)}</a></li>' for label, url in links
    )
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{text}</title>{heads}</head>'
        f"<body><h1>{text}</h1><ul>{items}</ul></body></html>\n"
    ).encode()


def _zip(members: Iterable[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def _version_number(text: str) -> tuple[int, int] | None:
    """'1.0' -> (1, 0), '2' -> (2, 0); None when it is not a version number."""
    match = re.fullmatch(r"(\d+)(?:\.(\d+))?", text)
    return (int(match[1]), int(match[2] or 0)) if match else None


class _Handler(BaseHTTPRequestHandler):
    """Parses a request, logs it, hands it to the server's router; response helpers."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in separate writes
    platforms: PlatformServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").strip().lower()
        if not host.startswith("["):
            host = host.partition(":")[0]
        split = urlsplit(self.path)
        path = unquote(split.path)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        logged = path + ("?" + unquote(split.query) if split.query else "")
        self.platforms._log(host, self.command, logged)
        self.platforms._enter(host)
        try:
            if self.platforms.answer_delay:
                time.sleep(self.platforms.answer_delay)
            self.platforms._route(self, host, path, query, logged)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
        finally:
            self.platforms._leave(host)

    do_HEAD = do_GET

    def send(
        self,
        status: int,
        body: bytes | memoryview = b"",
        content_type: str = "text/plain; charset=utf-8",
        headers: dict[str, str] | None = None,
        *,
        fault: FakeFile | None = None,
    ) -> None:
        """Answer ``status`` with ``body``, misbehaving as ``fault`` says (a file download)."""
        view = memoryview(body)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if status in (429, 503) and "Retry-After" not in (headers or {}):
            self.send_header("Retry-After", "0")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        chunked = fault is not None and fault.chunked
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(view)))
        self.end_headers()
        if self.command == "HEAD":
            return
        end = len(view)
        truncated = False
        pause: int | None = None
        if fault is not None:
            if fault.truncate_at is not None and fault.truncate_at < end:
                end, truncated = fault.truncate_at, True
            if fault.stall_at is not None:
                pause = min(fault.stall_at, end)
        if fault is not None and pause is not None:
            self._write(view, 0, pause, chunked)
            self.platforms._stopping.wait(fault.stall_seconds)
            self._write(view, pause, end, chunked)
        else:
            self._write(view, 0, end, chunked)
        if truncated:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _write(self, view: memoryview, start: int, end: int, chunked: bool) -> None:
        for pos in range(start, end, CHUNK):
            piece = view[pos : min(pos + CHUNK, end)]
            if chunked:
                self.wfile.write(b"%x\r\n" % len(piece))
                self.wfile.write(piece)
                self.wfile.write(b"\r\n")
            else:
                self.wfile.write(piece)

    def send_json(self, status: int, obj: object) -> None:
        self.send(status, json.dumps(obj).encode(), JSON)

    def send_html(self, status: int, body: bytes) -> None:
        self.send(status, body, HTML)

    def not_found(self) -> None:
        self.send_html(404, _landing("404 Not Found"))

    def redirect(self, location: str) -> None:
        self.send(302, b"", HTML, {"Location": location})

    def send_file(
        self,
        entry: _Entry,
        hop: int,
        hop_url: Callable[[int], str],
        *,
        min_hops: int = 0,
        derived: bool = False,
    ) -> None:
        """The download of ``entry`` at redirect hop ``hop`` (0: the first URL);
        ``hop_url(n)`` is the absolute URL of hop n."""
        f = entry.file
        if f.redirect_loop:
            self.redirect(hop_url(1 if hop == 0 else 0))
        elif hop < max(f.redirects, min_hops):
            self.redirect(hop_url(hop + 1))
        elif f.status is not None:
            self.send(f.status, f"{f.status} {_phrase(f.status)}\n".encode())
        else:
            body = f.data if f.served is None else f.served
            name, mimetype = f.name, f.mimetype
            if derived and f.tabular is not None:
                body, name, mimetype = f.tabular, _tab_name(f.name), TAB
            filename = quote(name.rsplit("/", 1)[-1])
            disposition = {"Content-Disposition": f"attachment; filename*=UTF-8''{filename}"}
            self.send(200, body, mimetype, disposition, fault=f)

    def send_zip(self, data: bytes, filename: str) -> None:
        self.send(
            200,
            data,
            "application/zip",
            {"Content-Disposition": f'attachment; filename="{filename}"'},
        )


def _tab_name(name: str) -> str:
    """The name Dataverse gives the derived ``.tab`` of an ingested table."""
    stem = name.rsplit(".", 1)[0] if "." in name.rsplit("/", 1)[-1] else name
    return f"{stem}.tab"


def _hop_of(query: dict[str, str], final: int) -> int:
    """The hop number in a ``?hop=N`` query; without one, the hop that serves the bytes."""
    value = query.get("hop", "")
    return int(value) if value.isdigit() else final


# --- Zenodo -------------------------------------------------------------------------------


@dataclass
class _ZenodoRecord:
    id: int
    concept_id: int | None
    version: str
    access_right: str
    title: str
    status: int | None
    bundle: bytes | None
    bucket: str
    files: dict[str, _Entry]
    zip_cache: bytes | None = None


_ZENODO_MESSAGES = {
    403: "Permission denied.",
    404: "The persistent identifier does not exist.",
    410: "The record has been deleted.",
    429: "Too many requests.",
    500: "Internal server error.",
}


class _Zenodo:
    hosts = (ZENODO,)

    def __init__(self, server: PlatformServer) -> None:
        self.server = server
        self.records: dict[int, _ZenodoRecord] = {}
        self.buckets: dict[str, _ZenodoRecord] = {}

    def add(
        self,
        record_id: int,
        files: list[FakeFile],
        *,
        concept_id: int | None,
        version: str,
        access_right: str,
        title: str,
        status: int | None,
        bundle: bytes | None,
    ) -> None:
        bucket = str(uuid.uuid5(uuid.NAMESPACE_URL, f"zenodo-bucket:{record_id}"))
        entries = {f.name: _Entry.of(f, self.server._next_id()) for f in files}
        record = _ZenodoRecord(
            record_id, concept_id, version, access_right, title, status, bundle, bucket, entries
        )
        with self.server._lock:
            self.records[record_id] = record
            self.buckets[bucket] = record

    def latest(self, concept_id: int) -> int | None:
        ids = [r.id for r in self.records.values() if r.concept_id == concept_id]
        return max(ids) if ids else None

    def route(self, h: _Handler, host: str, path: str, query: dict[str, str]) -> bool:
        if m := re.fullmatch(r"/records?/(\d+)/?", path):
            self.landing(h, int(m[1]))
        elif m := re.fullmatch(r"/api/records/(\d+)/?", path):
            self.api(h, int(m[1]))
        elif m := re.fullmatch(r"/api/records/(\d+)/versions/latest/?", path):
            record = self.records.get(int(m[1]))
            concept = record.concept_id if record else int(m[1])
            latest = self.latest(concept) if concept is not None else None
            if record is None and latest is None:
                self.error(h, 404)
            else:
                h.redirect(f"https://{ZENODO}/api/records/{latest or int(m[1])}")
        elif m := re.fullmatch(r"/api/records/(\d+)/files/(.+)/content", path):
            record = self.records.get(int(m[1]))
            entry = record.files.get(m[2]) if record else None
            if record is None or entry is None:
                self.error(h, 404)
            elif record.access_right != "open":
                self.error(h, 403)
            else:
                h.send_file(entry, 0, lambda n: self.hop_url(record, entry, n))
        elif m := re.fullmatch(r"/api/files/([^/]+)/(.+)", path):
            record = self.buckets.get(m[1])
            entry = record.files.get(m[2]) if record else None
            if record is None or entry is None:
                self.error(h, 404)
            else:
                hop = _hop_of(query, entry.file.redirects)
                h.send_file(entry, hop, lambda n: self.hop_url(record, entry, n))
        elif m := re.fullmatch(r"/api/records/(\d+)/files-archive/?", path):
            self.archive(h, int(m[1]))
        else:
            return False
        return True

    def hop_url(self, record: _ZenodoRecord, entry: _Entry, hop: int) -> str:
        key = quote(entry.file.name)
        if hop == 0:
            return f"https://{ZENODO}/api/records/{record.id}/files/{key}/content"
        return f"https://{ZENODO}/api/files/{record.bucket}/{key}?hop={hop}"

    def error(self, h: _Handler, status: int) -> None:
        h.send_json(
            status, {"status": status, "message": _ZENODO_MESSAGES.get(status, _phrase(status))}
        )

    def landing(self, h: _Handler, record_id: int) -> None:
        record = self.records.get(record_id)
        if record is None:
            latest = self.latest(record_id)
            if latest is None:
                h.not_found()
            else:
                h.redirect(f"https://{ZENODO}/records/{latest}")
            return
        links = [(k, self.hop_url(record, e, 0)) for k, e in record.files.items()]
        h.send_html(
            200,
            _landing(
                record.title,
                meta={
                    "citation_title": record.title,
                    "citation_doi": f"10.5281/zenodo.{record.id}",
                },
                links=links if record.access_right == "open" else (),
            ),
        )

    def api(self, h: _Handler, record_id: int) -> None:
        record = self.records.get(record_id)
        if record is None:
            latest = self.latest(record_id)
            if latest is None:
                self.error(h, 404)
            else:
                h.redirect(f"https://{ZENODO}/api/records/{latest}")
            return
        if record.status is not None:
            self.error(h, record.status)
            return
        concept = record.concept_id if record.concept_id is not None else record.id
        files = [
            {
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"zenodo-file:{record.id}:{key}")),
                "key": key,
                "size": e.api_size,
                "checksum": f"md5:{e.api_md5}",
                "links": {"self": self.hop_url(record, e, 0)},
            }
            for key, e in record.files.items()
        ]
        api = f"https://{ZENODO}/api/records/{record.id}"
        h.send_json(
            200,
            {
                "id": record.id,
                "recid": str(record.id),
                "conceptrecid": str(concept),
                "doi": f"10.5281/zenodo.{record.id}",
                "conceptdoi": f"10.5281/zenodo.{concept}",
                "created": "2021-01-01T00:00:00+00:00",
                "metadata": {
                    "title": record.title,
                    "version": record.version,
                    "access_right": record.access_right,
                    "publication_date": "2021-01-01",
                    "resource_type": {"type": "dataset", "title": "Dataset"},
                    "creators": [{"name": "Doe, Jane"}],
                    "license": {"id": "cc-by-4.0"},
                },
                "files": files if record.access_right == "open" else [],
                "links": {
                    "self": api,
                    "html": f"https://{ZENODO}/records/{record.id}",
                    "archive": f"{api}/files-archive",
                    "latest": f"{api}/versions/latest",
                },
            },
        )

    def archive(self, h: _Handler, record_id: int) -> None:
        record = self.records.get(record_id)
        if record is None:
            self.error(h, 404)
        elif record.access_right != "open":
            self.error(h, 403)
        elif record.bundle is not None:
            h.send_zip(record.bundle, f"{record.id}.zip")
        else:
            with self.server._lock:
                if record.zip_cache is None:
                    record.zip_cache = _zip((k, e.file.data) for k, e in record.files.items())
            h.send_zip(record.zip_cache, f"{record.id}.zip")


# --- figshare -----------------------------------------------------------------------------


@dataclass
class _FigshareVersion:
    article_id: int
    version: int
    title: str
    is_embargoed: bool
    status: int | None
    bundle: bytes | None
    files: list[_Entry]
    zip_cache: bytes | None = None

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "_", self.title).strip("_") or "dataset"


class _Figshare:
    hosts = (FIGSHARE, FIGSHARE_API, FIGSHARE_DOWNLOADS)

    def __init__(self, server: PlatformServer) -> None:
        self.server = server
        self.articles: dict[int, dict[int, _FigshareVersion]] = {}
        self.files: dict[int, tuple[_FigshareVersion, _Entry]] = {}

    def add(
        self,
        article_id: int,
        version: int,
        files: list[FakeFile],
        *,
        is_embargoed: bool,
        title: str,
        status: int | None,
        bundle: bytes | None,
    ) -> None:
        entries = [_Entry.of(f, self.server._next_id()) for f in files]
        item = _FigshareVersion(article_id, version, title, is_embargoed, status, bundle, entries)
        with self.server._lock:
            self.articles.setdefault(article_id, {})[version] = item
            for entry in entries:
                self.files[entry.id] = (item, entry)

    def find(self, article_id: int, version: int | None) -> _FigshareVersion | None:
        versions = self.articles.get(article_id, {})
        if version is None:
            return versions[max(versions)] if versions else None
        return versions.get(version)

    def route(self, h: _Handler, host: str, path: str, query: dict[str, str]) -> bool:
        if host == FIGSHARE:
            if m := re.fullmatch(r"/articles/[^/]+/[^/]+/(\d+)(?:/(\d+))?/?", path):
                self.landing(h, int(m[1]), int(m[2]) if m[2] else None)
                return True
        elif host == FIGSHARE_API:
            if m := re.fullmatch(r"/v2/articles/(\d+)(?:/versions/(\d+))?/?", path):
                self.api(h, int(m[1]), int(m[2]) if m[2] else None)
                return True
            if m := re.fullmatch(r"/v2/articles/(\d+)/versions/?", path):
                self.versions(h, int(m[1]))
                return True
        elif host == FIGSHARE_DOWNLOADS:
            if m := re.fullmatch(r"/files/(\d+)(?:/hop/(\d+))?/?", path):
                self.download(h, int(m[1]), int(m[2]) if m[2] else None)
                return True
            if m := re.fullmatch(r"/articles/(\d+)(?:/versions/(\d+))?/?", path):
                self.archive(h, int(m[1]), int(m[2]) if m[2] else None)
                return True
        return False

    def error(self, h: _Handler, status: int) -> None:
        if status == 404:
            h.send_json(404, {"message": "Entity not found: article", "code": "EntityNotFound"})
        else:
            phrase = _phrase(status)
            h.send_json(status, {"message": phrase, "code": phrase.replace(" ", "")})

    def html_url(self, item: _FigshareVersion) -> str:
        return f"https://{FIGSHARE}/articles/dataset/{item.slug}/{item.article_id}/{item.version}"

    def download_url(self, entry: _Entry, hop: int = 0) -> str:
        base = f"https://{FIGSHARE_DOWNLOADS}/files/{entry.id}"
        return base if hop == 0 else f"{base}/hop/{hop}"

    def landing(self, h: _Handler, article_id: int, version: int | None) -> None:
        item = self.find(article_id, version)
        if item is None:
            h.not_found()
            return
        doi = f"10.6084/m9.figshare.{item.article_id}.v{item.version}"
        links = (
            () if item.is_embargoed else [(e.file.name, self.download_url(e)) for e in item.files]
        )
        h.send_html(
            200,
            _landing(
                item.title, meta={"citation_title": item.title, "citation_doi": doi}, links=links
            ),
        )

    def api(self, h: _Handler, article_id: int, version: int | None) -> None:
        item = self.find(article_id, version)
        if item is None:
            self.error(h, 404)
            return
        if item.status is not None:
            self.error(h, item.status)
            return
        files = [
            {
                "id": e.id,
                "name": e.file.name,
                "size": e.api_size,
                "is_link_only": False,
                "download_url": self.download_url(e),
                "supplied_md5": "",
                "computed_md5": e.api_md5,
                "mimetype": e.file.mimetype,
            }
            for e in item.files
        ]
        api = f"https://{FIGSHARE_API}/v2/articles/{item.article_id}"
        h.send_json(
            200,
            {
                "id": item.article_id,
                "title": item.title,
                "doi": f"10.6084/m9.figshare.{item.article_id}.v{item.version}",
                "version": item.version,
                "url": api,
                "url_public_api": api,
                "url_public_html": self.html_url(item),
                "defined_type": 3,
                "defined_type_name": "dataset",
                "is_embargoed": item.is_embargoed,
                "embargo_date": "2099-01-01" if item.is_embargoed else None,
                "embargo_type": "file" if item.is_embargoed else None,
                "published_date": "2021-01-01T00:00:00Z",
                "license": {
                    "value": 1,
                    "name": "CC BY 4.0",
                    "url": "https://creativecommons.org/licenses/by/4.0/",
                },
                "authors": [{"full_name": "Jane Doe"}],
                "files": [] if item.is_embargoed else files,
            },
        )

    def versions(self, h: _Handler, article_id: int) -> None:
        versions = self.articles.get(article_id)
        if not versions:
            self.error(h, 404)
            return
        api = f"https://{FIGSHARE_API}/v2/articles/{article_id}/versions"
        h.send_json(200, [{"version": v, "url": f"{api}/{v}"} for v in sorted(versions)])

    def download(self, h: _Handler, file_id: int, hop: int | None) -> None:
        found = self.files.get(file_id)
        if found is None:
            h.send(404, b"404 Not Found\n")
            return
        item, entry = found
        if item.is_embargoed:
            h.send(403, b"403 Forbidden\n")
            return
        h.send_file(entry, hop or 0, lambda n: self.download_url(entry, n))

    def archive(self, h: _Handler, article_id: int, version: int | None) -> None:
        item = self.find(article_id, version)
        if item is None:
            h.send(404, b"404 Not Found\n")
        elif item.is_embargoed:
            h.send(403, b"403 Forbidden\n")
        elif item.bundle is not None:
            h.send_zip(item.bundle, f"{item.article_id}.zip")
        else:
            with self.server._lock:
                if item.zip_cache is None:
                    item.zip_cache = _zip((e.file.name, e.file.data) for e in item.files)
            h.send_zip(item.zip_cache, f"{item.article_id}.zip")


# --- Dataverse ----------------------------------------------------------------------------


@dataclass
class _DataverseVersion:
    id: int
    number: tuple[int, int]
    title: str
    status: int | None
    bundle: bytes | None
    files: list[_Entry]  # the file at index i has the PID ``{pid}/F{i + 1}``
    zip_cache: dict[bool, bytes] = field(default_factory=dict)  # by ?format=original

    @property
    def label(self) -> str:
        return f"{self.number[0]}.{self.number[1]}"


@dataclass
class _DataverseDataset:
    id: int
    host: str
    pid: str
    versions: dict[tuple[int, int], _DataverseVersion]

    @property
    def latest(self) -> _DataverseVersion:
        return self.versions[max(self.versions)]

    def version(self, text: str) -> _DataverseVersion | None:
        if text in (":latest", ":latest-published"):
            return self.latest
        number = _version_number(text)
        return self.versions.get(number) if number else None


def _denied(entry: _Entry) -> bool:
    return entry.file.restricted or entry.file.embargoed_until is not None


class _Dataverse:
    def __init__(self, server: PlatformServer) -> None:
        self.server = server
        self.datasets: dict[tuple[str, str], _DataverseDataset] = {}  # (host, pid)
        self.files: dict[tuple[str, int], tuple[_DataverseDataset, _DataverseVersion, int]] = {}

    @property
    def hosts(self) -> set[str]:
        return {host for host, _ in self.datasets}

    def add(
        self,
        host: str,
        pid: str,
        files: list[FakeFile],
        *,
        version: tuple[int, int],
        title: str,
        status: int | None,
        bundle: bytes | None,
    ) -> None:
        host = host.lower()
        entries = [_Entry.of(f, self.server._next_id()) for f in files]
        item = _DataverseVersion(self.server._next_id(), version, title, status, bundle, entries)
        with self.server._lock:
            dataset = self.datasets.get((host, pid))
            if dataset is None:
                dataset = _DataverseDataset(self.server._next_id(), host, pid, {})
                self.datasets[(host, pid)] = dataset
            dataset.versions[version] = item
            for index, entry in enumerate(entries):
                self.files[(host, entry.id)] = (dataset, item, index)

    def by_file_pid(
        self, host: str, file_pid: str
    ) -> tuple[_DataverseDataset, _DataverseVersion, int] | None:
        """The file of that PID in the latest version of its dataset that has it."""
        match = re.fullmatch(r"(.+)/F(\d+)", file_pid)
        dataset = self.datasets.get((host, match[1])) if match else None
        if match is None or dataset is None:
            return None
        index = int(match[2]) - 1
        for number in sorted(dataset.versions, reverse=True):
            item = dataset.versions[number]
            if 0 <= index < len(item.files):
                return dataset, item, index
        return None

    def route(self, h: _Handler, host: str, path: str, query: dict[str, str]) -> bool:
        pid = query.get("persistentId", "")
        dataset = self.datasets.get((host, pid))
        # ?format=original: an ingested table as uploaded (else its derived .tab)
        original = query.get("format") == "original"
        if path == "/dataset.xhtml":
            self.landing(h, dataset, query.get("version"))
        elif path == "/file.xhtml":
            self.file_landing(h, self.by_file_pid(host, pid))
        elif re.fullmatch(r"/api/datasets/:persistentId/?", path):
            self.dataset_api(h, dataset, pid)
        elif m := re.fullmatch(r"/api/datasets/:persistentId/versions/([^/]+)/?", path):
            self.version_api(h, dataset, pid, m[1])
        elif re.fullmatch(r"/api/files/:persistentId/?", path):
            found = self.by_file_pid(host, pid)
            if found is None:
                self.error(h, 404, f"File with Persistent ID {pid} not found.")
            else:
                h.send_json(200, {"status": "OK", "data": self.file_json(*found)})
        elif re.fullmatch(r"/api/access/datafile/:persistentId/?", path):
            found = self.by_file_pid(host, pid)
            if found is None:
                self.error(h, 404, f"File with Persistent ID {pid} not found.")
            else:
                self.download(h, host, found[1].files[found[2]], 0, original, access_url=path,
                              pid=pid)
        elif m := re.fullmatch(r"/api/access/datafile/(\d+)/?", path):
            found = self.files.get((host, int(m[1])))
            if found is None:
                self.error(h, 404, f"Datafile {m[1]}: File not found.")
            else:
                self.download(h, host, found[1].files[found[2]], 0, original)
        elif m := re.fullmatch(r"/s3/[^/]+/(\d+)", path):
            found = self.files.get((host, int(m[1])))
            if found is None:
                h.send(404, b"404 Not Found\n")
            else:
                entry = found[1].files[found[2]]
                self.download(h, host, entry, _hop_of(query, entry.file.redirects), original)
        elif m := re.fullmatch(r"/api/access/dataset/:persistentId(?:/versions/([^/]+))?/?", path):
            self.archive(h, dataset, pid, m[1] or ":latest", original)
        else:
            return False
        return True

    def error(self, h: _Handler, status: int, message: str | None = None) -> None:
        h.send_json(status, {"status": "ERROR", "message": message or _phrase(status)})

    def not_found(self, h: _Handler, pid: str) -> None:
        self.error(h, 404, f"Dataset with Persistent ID {pid} not found.")

    def download(
        self,
        h: _Handler,
        host: str,
        entry: _Entry,
        hop: int,
        original: bool,
        *,
        access_url: str | None = None,
        pid: str = "",
    ) -> None:
        if _denied(entry):
            self.error(h, 403, DATAVERSE_FORBIDDEN)
            return
        first = f"https://{host}/api/access/datafile/{entry.id}"
        if access_url is not None:
            first = f"https://{host}{access_url}?persistentId={quote(pid, safe=':/')}"
        fmt = "format=original"
        if original:
            first += ("&" if "?" in first else "?") + fmt

        def hop_url(n: int) -> str:
            if n == 0:
                return first
            tail = f"&{fmt}" if original else ""
            return f"https://{host}/s3/dvn-bucket/{entry.id}?hop={n}{tail}"

        h.send_file(entry, hop, hop_url, derived=not original)

    def file_json(self, dataset: _DataverseDataset, item: _DataverseVersion, index: int) -> Json:
        entry = item.files[index]
        f = entry.file
        data_file: Json = {
            "id": entry.id,
            "persistentId": f"{dataset.pid}/F{index + 1}",
            "filename": f.name,
            "contentType": f.mimetype,
            "filesize": entry.api_size,
            "description": "",
            "md5": entry.api_md5,
            "checksum": {"type": "MD5", "value": entry.api_md5},
        }
        if f.tabular is not None:
            # as Dataverse describes an ingested table: name, type and size of the
            # derived .tab; checksum and original* fields of the upload
            data_file.update(
                filename=_tab_name(f.name),
                contentType=TAB,
                filesize=len(f.tabular),
                tabularData=True,
                originalFileFormat=f.mimetype,
                originalFormatLabel=f.mimetype,
                originalFileSize=entry.api_size,
                originalFileName=f.name,
            )
        if f.embargoed_until is not None:
            data_file["embargo"] = {"dateAvailable": f.embargoed_until, "reason": "Embargoed"}
        out: Json = {"label": data_file["filename"], "restricted": f.restricted}
        if f.directory is not None:
            out["directoryLabel"] = f.directory
        out.update(
            version=1,
            datasetVersionId=item.id,
            datasetPersistentId=dataset.pid,
            dataFile=data_file,
        )
        return out

    def version_json(self, dataset: _DataverseDataset, item: _DataverseVersion) -> Json:
        title = {
            "typeName": "title",
            "multiple": False,
            "typeClass": "primitive",
            "value": item.title,
        }
        return {
            "id": item.id,
            "datasetId": dataset.id,
            "datasetPersistentId": dataset.pid,
            "versionNumber": item.number[0],
            "versionMinorNumber": item.number[1],
            "versionState": "RELEASED",
            "releaseTime": "2021-01-01T00:00:00Z",
            "license": {
                "name": "CC0 1.0",
                "uri": "http://creativecommons.org/publicdomain/zero/1.0",
            },
            "metadataBlocks": {"citation": {"displayName": "Citation Metadata", "fields": [title]}},
            "files": [self.file_json(dataset, item, i) for i in range(len(item.files))],
        }

    def dataset_api(self, h: _Handler, dataset: _DataverseDataset | None, pid: str) -> None:
        if dataset is None:
            self.not_found(h, pid)
            return
        if dataset.latest.status is not None:
            self.error(h, dataset.latest.status)
            return
        protocol, _, rest = dataset.pid.partition(":")
        authority, _, identifier = rest.partition("/")
        resolver = "https://doi.org" if protocol == "doi" else "https://hdl.handle.net"
        h.send_json(
            200,
            {
                "status": "OK",
                "data": {
                    "id": dataset.id,
                    "identifier": identifier,
                    "persistentUrl": f"{resolver}/{rest}",
                    "protocol": protocol,
                    "authority": authority,
                    "publisher": "Root",
                    "publicationDate": "2021-01-01",
                    "latestVersion": self.version_json(dataset, dataset.latest),
                },
            },
        )

    def _version(
        self, h: _Handler, dataset: _DataverseDataset | None, pid: str, version: str
    ) -> _DataverseVersion | None:
        """The dataset's version, or None once the 404 (of either) is answered."""
        if dataset is None:
            self.not_found(h, pid)
            return None
        item = dataset.version(version)
        if item is None:
            self.error(h, 404, f"Dataset version {version} of dataset {dataset.id} not found")
        return item

    def version_api(
        self, h: _Handler, dataset: _DataverseDataset | None, pid: str, version: str
    ) -> None:
        item = self._version(h, dataset, pid, version)
        if item is None:
            return
        if item.status is not None:
            self.error(h, item.status)
        else:
            h.send_json(200, {"status": "OK", "data": self.version_json(dataset, item)})

    def landing(self, h: _Handler, dataset: _DataverseDataset | None, version: str | None) -> None:
        item = dataset.version(version or ":latest") if dataset else None
        if dataset is None or item is None:
            h.not_found()
            return
        meta = {"citation_title": item.title}
        if dataset.pid.startswith("doi:"):
            meta["citation_doi"] = dataset.pid.removeprefix("doi:")
        links = [
            (e.file.name, f"https://{dataset.host}/api/access/datafile/{e.id}")
            for e in item.files
            if not _denied(e)
        ]
        h.send_html(200, _landing(item.title, meta=meta, links=links))

    def file_landing(
        self, h: _Handler, found: tuple[_DataverseDataset, _DataverseVersion, int] | None
    ) -> None:
        if found is None:
            h.not_found()
            return
        dataset, item, index = found
        entry = item.files[index]
        meta = {"citation_title": entry.file.name}
        if dataset.pid.startswith("doi:"):
            meta["citation_doi"] = f"{dataset.pid.removeprefix('doi:')}/F{index + 1}"
        h.send_html(200, _landing(entry.file.name, meta=meta))

    def archive(
        self,
        h: _Handler,
        dataset: _DataverseDataset | None,
        pid: str,
        version: str,
        original: bool,
    ) -> None:
        item = self._version(h, dataset, pid, version)
        if item is None:
            return
        if item.bundle is not None:
            h.send_zip(item.bundle, "dataverse_files.zip")
        else:
            with self.server._lock:
                if original not in item.zip_cache:
                    item.zip_cache[original] = self.build_zip(item, original)
            h.send_zip(item.zip_cache[original], "dataverse_files.zip")

    @staticmethod
    def build_zip(item: _DataverseVersion, original: bool) -> bytes:
        members: list[tuple[str, bytes]] = []
        manifest = ["Files in this archive:", ""]
        skipped = []
        for entry in item.files:
            f = entry.file
            if _denied(entry):
                skipped.append(f"{f.name} (restricted or embargoed)")
                continue
            directory = (f.directory or "").strip("/")
            filename, data, mimetype = f.name, f.data, f.mimetype
            if f.tabular is not None and not original:
                filename, data, mimetype = _tab_name(f.name), f.tabular, TAB
            name = f"{directory}/{filename}" if directory else filename
            members.append((name, data))
            manifest.append(f"{name} ({mimetype} {len(data)} bytes)")
        if skipped:
            manifest += ["", "The following files could not be included:", *skipped]
        members.append(("MANIFEST.TXT", ("\n".join(manifest) + "\n").encode()))
        return _zip(members)


# --- archive.org --------------------------------------------------------------------------


@dataclass
class _ArchiveItem:
    identifier: str
    title: str
    is_dark: bool
    restricted: bool
    status: int | None
    files: dict[str, _Entry]  # every downloadable file, by name
    listing: list[Json]


def _ia_format(name: str) -> str:
    return "Comma-Separated Values" if name.lower().endswith(".csv") else "Data"


class _ArchiveOrg:
    hosts = (ARCHIVEORG, ARCHIVEORG_NODE)
    created = 1600000000

    def __init__(self, server: PlatformServer) -> None:
        self.server = server
        self.items: dict[str, _ArchiveItem] = {}

    def add(
        self,
        identifier: str,
        files: list[FakeFile],
        *,
        is_dark: bool,
        restricted: bool,
        status: int | None,
        title: str,
    ) -> None:
        def file_json(entry: _Entry, source: str, format: str) -> Json:
            return {
                "name": entry.file.name,
                "source": source,
                "format": format,
                "size": str(entry.api_size),
                "md5": entry.api_md5,
                "sha1": entry.api_sha1,
                "crc32": entry.crc32,
                "mtime": "1600000000",
            } | ({"private": "true"} if entry.file.private else {})

        entries = [_Entry.of(f, self.server._next_id()) for f in files]
        listing = [file_json(e, "original", _ia_format(e.file.name)) for e in entries]
        text = html.escape
        meta_xml = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<metadata>'
            f"<identifier>{text(identifier)}</identifier><mediatype>data</mediatype>"
            f"<collection>opensource</collection><title>{text(title)}</title></metadata>\n"
        ).encode()
        files_xml = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<files>\n'
            + "".join(
                f'  <file name="{text(e.file.name)}" source="original">'
                f"<md5>{e.md5}</md5><sha1>{e.sha1}</sha1><size>{e.size}</size></file>\n"
                for e in entries
            )
            + "</files>\n"
        ).encode()
        announce = "http://bt1.archive.org/announce.php"
        torrent = (
            f"d8:announce{len(announce)}:{announce}4:infod4:name{len(identifier)}:{identifier}ee"
        )
        extras = [
            (
                FakeFile(f"{identifier}_meta.xml", meta_xml, mimetype="application/xml"),
                "original",
                "Metadata",
            ),
            (
                FakeFile(f"{identifier}_files.xml", files_xml, mimetype="application/xml"),
                "original",
                "Metadata",
            ),
            (
                FakeFile(
                    f"{identifier}_archive.torrent",
                    torrent.encode(),
                    mimetype="application/x-bittorrent",
                ),
                "metadata",
                "Archive BitTorrent",
            ),
            (
                FakeFile(
                    "__ia_thumb.jpg",
                    b"\xff\xd8\xff\xe0" + bytes(16) + b"\xff\xd9",
                    mimetype="image/jpeg",
                ),
                "derivative",
                "Item Tile",
            ),
        ]
        for extra, source, format in extras:
            entry = _Entry.of(extra, self.server._next_id())
            entries.append(entry)
            listed = file_json(entry, source, format)
            if extra.name.endswith("_files.xml"):
                # as on archive.org: the listing cannot hold its own checksum or size
                listed = {k: listed[k] for k in ("name", "source", "format")}
            listing.append(listed)
        item = _ArchiveItem(
            identifier,
            title,
            is_dark,
            restricted,
            status,
            {e.file.name: e for e in entries},
            listing,
        )
        with self.server._lock:
            self.items[identifier] = item

    def route(self, h: _Handler, host: str, path: str, query: dict[str, str]) -> bool:
        if host == ARCHIVEORG:
            if m := re.fullmatch(r"/details/([^/]+)/?", path):
                self.landing(h, m[1])
            elif m := re.fullmatch(r"/metadata/([^/]+)/?", path):
                self.metadata(h, m[1])
            elif m := re.fullmatch(r"/download/([^/]+)/(.+)", path):
                self.download(h, m[1], m[2], 0)
            else:
                return False
        elif m := re.fullmatch(r"/1/items/([^/]+)/(.+)", path):
            self.download(h, m[1], m[2], None, query)
        else:
            return False
        return True

    def landing(self, h: _Handler, identifier: str) -> None:
        item = self.items.get(identifier)
        if item is None:
            h.not_found()
        elif item.is_dark:
            h.send_html(403, _landing("Item not available"))
        else:
            links = [(name, self.hop_url(item, name, 0)) for name in item.files]
            h.send_html(
                200,
                _landing(
                    f"{item.title} : Free Download : Internet Archive",
                    meta={"citation_title": item.title},
                    links=links,
                ),
            )

    def metadata(self, h: _Handler, identifier: str) -> None:
        item = self.items.get(identifier)
        if item is None:
            h.send_json(200, {})
            return
        if item.status is not None:
            h.send_json(item.status, {"error": _phrase(item.status)})
            return
        base: Json = {
            "created": self.created,
            "d1": ARCHIVEORG_NODE,
            "dir": f"/1/items/{identifier}",
            "server": ARCHIVEORG_NODE,
        }
        if item.is_dark:
            h.send_json(200, {"is_dark": True, **base})
            return
        metadata: Json = {
            "identifier": identifier,
            "mediatype": "data",
            "collection": ["opensource"],
            "title": item.title,
        }
        if item.restricted:
            metadata["access-restricted-item"] = "true"
        h.send_json(
            200,
            {
                **base,
                "files": item.listing,
                "files_count": len(item.listing),
                "item_size": sum(e.size for e in item.files.values()),
                "metadata": metadata,
            },
        )

    def hop_url(self, item: _ArchiveItem, name: str, hop: int) -> str:
        key = quote(name)
        if hop == 0:
            return f"https://{ARCHIVEORG}/download/{item.identifier}/{key}"
        node = f"https://{ARCHIVEORG_NODE}/1/items/{item.identifier}/{key}"
        return node if hop == 1 else f"{node}?hop={hop}"

    def download(
        self,
        h: _Handler,
        identifier: str,
        name: str,
        hop: int | None,
        query: dict[str, str] | None = None,
    ) -> None:
        """``/download/`` is hop 0, it always redirects to the node (hop 1, or ``?hop=N``)."""
        item = self.items.get(identifier)
        entry = item.files.get(name) if item else None
        if item is None or entry is None:
            h.send_html(404, _landing("404 Not Found"))
        elif item.is_dark or item.restricted or entry.file.private:
            h.send_html(403, _landing("403 Forbidden"))
        else:
            at = hop if hop is not None else _hop_of(query or {}, 1)
            h.send_file(entry, at, lambda n: self.hop_url(item, name, n), min_hops=1)


# --- the server ---------------------------------------------------------------------------


class PlatformServer(LoopbackHTTPServer):
    """Zenodo, figshare, Dataverse and archive.org on one loopback port, routed by Host."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.requests: list[tuple[str, str, str]] = []
        #: seconds every request waits before it is answered (a distant server)
        self.answer_delay = 0.0
        #: requests being answered now, and the most there were at once, by host
        self.in_flight: dict[str, int] = {}
        self.peak_in_flight: dict[str, int] = {}
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1001)
        self._pages: dict[tuple[str, str], _Page] = {}
        self._queued: dict[tuple[str, str], list[_Page]] = {}
        self._zenodo = _Zenodo(self)
        self._figshare = _Figshare(self)
        self._dataverse = _Dataverse(self)
        self._archiveorg = _ArchiveOrg(self)

    # lifecycle: as the base class, but polling for shutdown every 50 ms instead of 0.5 s
    # (suites start many of these), and a stalled download wakes up when the server stops
    def start(self) -> Self:
        self._stopping.clear()
        return super().start()

    def stop(self) -> None:
        self._stopping.set()
        super().stop()

    def routes(self) -> dict[str, str]:
        """``"https://<host>"`` -> ``url`` for every host this server answers for."""
        hosts = [*FIXED_HOSTS, *sorted(self._dataverse.hosts)]
        hosts += sorted({host for host, _ in [*self._pages, *self._queued]} - set(hosts))
        return {f"https://{host}": self.url for host in hosts}

    def clear_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    def add_zenodo(
        self,
        record_id: int,
        files: list[FakeFile],
        *,
        concept_id: int | None = None,
        version: str = "1.0",
        access_right: str = "open",
        title: str = "A Zenodo dataset",
        status: int | None = None,
        bundle: bytes | None = None,
    ) -> None:
        self._zenodo.add(
            record_id,
            files,
            concept_id=concept_id,
            version=version,
            access_right=access_right,
            title=title,
            status=status,
            bundle=bundle,
        )

    def add_figshare(
        self,
        article_id: int,
        version: int,
        files: list[FakeFile],
        *,
        is_embargoed: bool = False,
        title: str = "A figshare dataset",
        status: int | None = None,
        bundle: bytes | None = None,
    ) -> None:
        self._figshare.add(
            article_id,
            version,
            files,
            is_embargoed=is_embargoed,
            title=title,
            status=status,
            bundle=bundle,
        )

    def add_dataverse(
        self,
        host: str,
        pid: str,
        files: list[FakeFile],
        *,
        version: tuple[int, int] = (1, 0),
        title: str = "A Dataverse dataset",
        status: int | None = None,
        bundle: bytes | None = None,
    ) -> None:
        self._dataverse.add(
            host, pid, files, version=version, title=title, status=status, bundle=bundle
        )

    def add_archiveorg(
        self,
        identifier: str,
        files: list[FakeFile],
        *,
        is_dark: bool = False,
        restricted: bool = False,
        status: int | None = None,
        title: str = "An archive.org dataset",
    ) -> None:
        self._archiveorg.add(
            identifier,
            files,
            is_dark=is_dark,
            restricted=restricted,
            status=status,
            title=title,
        )

    def add_page(
        self,
        host: str,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = HTML,
        location: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Any other page; ``path`` may hold a query. It wins over the platform routes.
        ``headers``: more response headers (a paging ``Link``, rate limits)."""
        with self._lock:
            self._pages[(host.lower(), unquote(path))] = _Page(
                body, status, content_type, location, headers)

    def queue_page(
        self,
        host: str,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = HTML,
        headers: dict[str, str] | None = None,
    ) -> None:
        """An answer given once, to the next request for ``path`` (pages queued for
        one path go in order), before any ``add_page`` or platform route answers
        it: a rate limit, then the real answer."""
        with self._lock:
            self._queued.setdefault((host.lower(), unquote(path)), []).append(
                _Page(body, status, content_type, None, headers))

    def add_recorded(self, *answers: Recorded) -> None:
        """Answers the platforms really gave (``sandcrawler_testkit.recorded``),
        each at every request it is recorded for; they win over the platform routes."""
        for answer in answers:
            for served in answer.served:
                self.add_page(served.host, served.path, answer.body(served),
                              status=served.status, content_type=served.content_type)

    # -- internals used by the handler and the platforms --

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _enter(self, host: str) -> None:
        with self._lock:
            self.in_flight[host] = now = self.in_flight.get(host, 0) + 1
            self.peak_in_flight[host] = max(self.peak_in_flight.get(host, 0), now)

    def _leave(self, host: str) -> None:
        with self._lock:
            self.in_flight[host] -= 1

    def _log(self, host: str, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((host, method, path))

    def _route(self, h: _Handler, host: str, path: str, query: dict[str, str], logged: str) -> None:
        with self._lock:
            queued = self._queued.get((host, logged)) or self._queued.get((host, path))
            page = queued.pop(0) if queued else None
        page = page or self._pages.get((host, logged)) or self._pages.get((host, path))
        if page is not None:
            headers = dict(page.headers or {})
            if page.location is not None:
                headers["Location"] = page.location
            h.send(page.status, page.body, page.content_type, headers or None)
            return
        platforms: list[_Zenodo | _Figshare | _Dataverse | _ArchiveOrg] = [
            self._zenodo,
            self._figshare,
            self._archiveorg,
        ]
        if host in self._dataverse.hosts:
            platforms.insert(0, self._dataverse)
        for platform in platforms:
            if host in platform.hosts:
                if not platform.route(h, host, path, query):
                    h.not_found()
                return
        h.send(404, b"404 Not Found: unknown host\n")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(_Handler):
            platforms = server

        return Handler


def demo_server(port: int = 0) -> PlatformServer:
    """A server with a few small example datasets, for the quickstart."""
    server = PlatformServer(port)
    table = b"site,year,count\n" + b"".join(
        f"site{i % 7},{2000 + i % 20},{i * 37 % 101}\n".encode() for i in range(2000))
    server.add_zenodo(5703112, [FakeFile("observations.csv", table, mimetype="text/csv")],
                      title="Example observations (demo)")
    server.add_figshare(1234, 2, [
        FakeFile(f"run{i:02d}.txt", f"run {i}\n".encode() * (50 + i)) for i in range(12)],
        title="Twelve runs (demo)")
    server.add_dataverse("dataverse.harvard.edu", "doi:10.7910/DVN/DEMO01", [
        FakeFile("codebook.txt", b"variable: site\nvariable: year\n", directory="docs"),
        FakeFile("data.csv", table, mimetype="text/csv", directory="data")],
        version=(1, 1), title="A Dataverse demo dataset")
    server.add_archiveorg("DEMO_DATASET", [FakeFile("readme.txt", b"demo item\n"),
                                           FakeFile("data/values.csv", table)])
    return server


def main(argv: list[str] | None = None) -> None:
    """``python -m sandcrawler_testkit.platforms``: the quickstart's demo datasets."""
    parser = _cli.parser(
        "sandcrawler_testkit.platforms",
        "Serve demo datasets as Zenodo, figshare, Dataverse and archive.org on one\n"
        "loopback port, and print (one JSON line) the http_routes that send the\n"
        "platforms' URLs here: SANDCRAWLER_HTTP_ROUTES for sandcrawler. Serves until\n"
        "SIGTERM or Ctrl-C.")
    _cli.add_port(parser, 8765)
    args = parser.parse_args(argv)
    stop = _cli.stop_requested()
    try:
        server = demo_server(args.port).start()
    except OSError as e:
        _cli.fail(parser, _cli.listen_error(args.port, e))
    try:
        print(json.dumps(server.routes()), flush=True)
        stop.wait()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
