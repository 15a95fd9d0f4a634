"""Our own web archive: captures written as WARC files into the blob store and
indexed in SQL (``web_cdx``), so a capture can be found by URL or by payload.

A capture fetches a URL hop by hop and writes, for every hop, a WARC ``request``
record and a ``response`` record (redirects included, so the chain can be
replayed); a final body whose sha1 the archive already holds is written as a
``revisit`` record (identical-payload-digest profile) that refers to the first
capture instead of storing the bytes again.

The body is spooled to disk while its sha1, sha256, md5, the WARC block digest
and MIME type are worked out in the same pass, so memory stays flat for any size
and the record can be written with its digests and length known; it is then
copied into the WARC once.

A ``WarcSession`` is one WARC file in the making. Nothing it holds is visible
(neither the file in the store nor its index rows) until ``commit()``; ``abort()``
leaves nothing behind. That is what lets a dataset be archived all or nothing.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import uuid
import zlib
from base64 import b32encode
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Self
from urllib.parse import urlsplit

from sqlalchemy import Engine, insert, select
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from sandcrawler.db.engine import begin
from sandcrawler.db.schema import web_cdx
from sandcrawler.errors import NotFound, RecordError
from sandcrawler.filemeta import MetaWriter
from sandcrawler.mime import normalize_mime
from sandcrawler.models.capture import REVISIT_MIME, CdxRecord
from sandcrawler.models.files import FileMeta
from sandcrawler.models.statuses import FetchStatus
from sandcrawler.storage.blobs import BlobStore, BlobWriter
from sandcrawler.timestamps import now14, warc_date
from sandcrawler.version import __version__
from sandcrawler.web.cdx import surt
from sandcrawler.web.fetch import Hop, HttpFetcher, Opened, TooLarge, stream_body
from sandcrawler.web.warc import WarcPayload, copy_payload

WARC_PREFIX = "warcs"
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
REDIRECT_CODES = (301, 302, 303, 307, 308)
# Hop-by-hop framing that no longer describes the body as recorded: urllib3
# de-chunks, and an encoded body is recorded decoded (what was hashed).
_FRAMING = {"transfer-encoding"}
_ENCODING = {"content-encoding", "content-length"}


def _sha1(data: bytes | None) -> Any:
    return hashlib.sha1(data or b"")


def _digest(hexdigest: str) -> str:
    return "sha1:" + b32encode(bytes.fromhex(hexdigest)).decode()


@dataclass(slots=True)
class WebCapture:
    """What one capture recorded: every hop's row (redirects first), the body's
    metadata for a 200, and the earlier capture a revisit refers to."""

    rows: list[CdxRecord]
    file_meta: FileMeta | None = None
    revisit_of: CdxRecord | None = None
    spool: Path | None = None  # the body on disk until close()

    @property
    def terminal(self) -> CdxRecord:
        return self.rows[-1]

    @property
    def status_code(self) -> int | None:
        return self.terminal.status_code

    def close(self) -> None:
        if self.spool is not None:
            self.spool.unlink(missing_ok=True)
            self.spool = None


class _GzipMember:
    """Write side of one gzip member: each WARC record is its own member, so a
    reader can start at any record's offset."""

    def __init__(self, out: IO[bytes] | BlobWriter, level: int) -> None:
        self._out = out
        self._z = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS | 16)

    def write(self, data: bytes) -> int:
        if out := self._z.compress(data):
            self._out.write(out)
        return len(data)

    def flush(self) -> None:
        pass  # the member is finished by close(); flushing mid-record only costs ratio

    def close(self) -> None:
        self._out.write(self._z.flush())


class WarcSession:
    """One WARC file being written, and the index rows for its records."""

    def __init__(self, archive: WebArchive, key: str, writer: BlobWriter) -> None:
        self.archive = archive
        self.key = key
        self._writer = writer
        self._rows: list[CdxRecord] = []
        self._by_sha1: dict[str, CdxRecord] = {}
        self._warcio = WARCWriter(None, gzip=False, warc_version="WARC/1.1")
        self.closed = False
        self._write(self._warcio.create_warcinfo_record(
            key.rsplit("/", 1)[-1],
            {"software": f"sandcrawler/{__version__}", "format": "WARC File Format 1.1"}))

    def _write(self, record: Any, *, compressible: bool = True) -> tuple[int, int]:
        """Append one record; its offset and compressed size. A payload that does
        not compress is still its own gzip member, stored (level 0): deflating
        already-compressed data costs several times the download for nothing."""
        offset = self._writer.size
        if self.archive.gzip_level:
            member = _GzipMember(self._writer, self.archive.gzip_level if compressible else 0)
            WARCWriter(member, gzip=False, warc_version="WARC/1.1").write_record(record)
            member.close()
        else:
            WARCWriter(self._writer, gzip=False, warc_version="WARC/1.1").write_record(record)
        return offset, self._writer.size - offset

    def capture(self, url: str, *, max_bytes: int | Callable[[Hop], int],
                check: Callable[[str], None] | None = None) -> WebCapture:
        """Fetch ``url`` and record every hop. RecordError (nothing recorded) when
        no answer could be had: ``fetch-error``, ``redirect-loop``, ``too-large``
        (a 200 body over ``max_bytes``: a number, or a function of the final
        response, so a page may have a lower limit than a file), ``http-error``
        (an error page over it), or what ``check`` raises for a redirect target."""
        opened = self.archive.fetcher.open(url, check=check)
        try:
            # redirect bodies were read and dropped by the fetcher: headers only
            rows = [self._record(hop, now14(), _http_headers(hop), io.BytesIO(), None)
                    for hop in opened.hops[:-1]]
            limit = max_bytes(opened.final) if callable(max_bytes) else max_bytes
            capture = self._record_final(opened, limit)
        finally:
            opened.close()
        capture.rows[:0] = rows
        return capture

    def _record_final(self, opened: Opened, max_bytes: int) -> WebCapture:
        hop = opened.final
        dt = now14()
        http = _http_headers(hop)
        fd, name = tempfile.mkstemp(prefix="sandcrawler-", suffix=".body",
                                    dir=self.archive.spool_dir)
        spool = Path(name)
        try:
            with os.fdopen(fd, "wb") as f:
                # the WARC block digest (HTTP headers + body) is worked out in the same pass
                writer = MetaWriter(f.write, extra={"block": _sha1(http.headers_buff)})
                try:
                    stream_body(opened, writer.write, max_bytes)
                except TooLarge as e:
                    if hop.status_code == 200:
                        raise
                    raise RecordError(f"HTTP {hop.status_code} from {hop.url}, with a body over "
                                      f"{max_bytes:,} bytes", FetchStatus.HTTP_ERROR) from e
                finally:
                    meta, extra = writer.finish()
            ok = hop.status_code == 200
            earlier = self.find_sha1(meta.sha1hex) if ok else None
            with spool.open("rb") as body:
                row = self._record(hop, dt, http, body, meta, block_sha1=extra["block"],
                                   refers_to=earlier)
            return WebCapture([row], meta if ok else None, revisit_of=earlier, spool=spool)
        except BaseException:
            spool.unlink(missing_ok=True)
            raise

    def _record(self, hop: Hop, dt: str, http: StatusAndHeaders, body: IO[bytes],
                meta: FileMeta | None, *, block_sha1: str | None = None,
                refers_to: CdxRecord | None = None) -> CdxRecord:
        """Write a response record (or, with ``refers_to``, a revisit record of the
        headers only) and its request record; index the response."""
        record_id = f"<urn:uuid:{uuid.uuid4()}>"
        headers = {"WARC-Record-ID": record_id, "WARC-Date": warc_date(dt)}
        if meta is None:  # no body: a redirect
            meta = FileMeta(size_bytes=0, sha1hex=_sha1(b"").hexdigest(), sha256hex="",
                            md5hex="", mimetype="")
            block_sha1 = _sha1(http.headers_buff).hexdigest()
        if refers_to is not None:
            rec_type, body, length = "revisit", io.BytesIO(), 0
            block_sha1 = _sha1(http.headers_buff).hexdigest()
            headers.update({"WARC-Profile": REVISIT_PROFILE,
                            "WARC-Refers-To-Target-URI": refers_to.url,
                            "WARC-Refers-To-Date": warc_date(refers_to.datetime)})
        else:
            rec_type, length = "response", meta.size_bytes
        assert block_sha1 is not None
        headers.update({"WARC-Block-Digest": _digest(block_sha1),
                        "WARC-Payload-Digest": _digest(meta.sha1hex)})
        record = self._warcio.create_warc_record(
            hop.url, rec_type, payload=body, length=length, http_headers=http,
            warc_headers_dict=headers)
        offset, csize = self._write(record, compressible=_compressible(body))
        self._write_request(hop, dt, record_id)
        row = CdxRecord(
            url=hop.url, datetime=dt, surt=surt(hop.url), status_code=hop.status_code,
            mimetype=REVISIT_MIME if refers_to is not None else _mimetype(hop, meta),
            warc_path=self.key, warc_offset=offset, warc_csize=csize, location=hop.location,
            sha1hex=meta.sha1hex, size=meta.size_bytes, sha256hex=meta.sha256hex or None,
            md5hex=meta.md5hex or None)
        self._add(row)
        return row

    def _write_request(self, hop: Hop, dt: str, concurrent_to: str) -> None:
        parts = urlsplit(hop.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        http = StatusAndHeaders(f"GET {target} HTTP/1.1", hop.request_headers,
                                is_http_request=True)
        request = self._warcio.create_warc_record(
            hop.url, "request", payload=io.BytesIO(), length=0, http_headers=http,
            warc_headers_dict={"WARC-Date": warc_date(dt),
                               "WARC-Concurrent-To": concurrent_to})
        self._write(request)

    def _add(self, row: CdxRecord) -> None:
        self._rows.append(row)
        if row.status_code == 200 and not row.is_revisit and row.sha1hex:
            self._by_sha1.setdefault(row.sha1hex, row)

    def find_sha1(self, sha1hex: str) -> CdxRecord | None:
        """A capture of this payload: one written in this session, or committed."""
        return self._by_sha1.get(sha1hex) or self.archive.find_sha1(sha1hex)

    @property
    def captured(self) -> int:
        """Records indexed so far (0: the file would hold only its warcinfo record)."""
        return len(self._rows)

    def commit(self) -> list[CdxRecord]:
        """Make the WARC file visible in the store, then index its records."""
        if self.closed:
            raise ValueError(f"WARC session {self.key} already closed")
        self.closed = True
        self._writer.commit()
        if self._rows:
            # set here, to the microsecond: the order of two captures of one URL
            # within the same second (CDX datetimes are to the second)
            created = datetime.now(UTC)
            with begin(self.archive.engine) as conn:
                conn.execute(insert(web_cdx),
                             [r.to_row() | {"row_created": created} for r in self._rows])
        return list(self._rows)

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            self._writer.abort()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is not None or not self.closed:
            self.abort()


class WebArchive:
    def __init__(self, store: BlobStore, engine: Engine, fetcher: HttpFetcher, *,
                 gzip_level: int = 1, spool_dir: str | Path | None = None) -> None:
        self.store = store
        self.engine = engine
        self.fetcher = fetcher
        self.gzip_level = gzip_level
        self.spool_dir = spool_dir

    def session(self) -> WarcSession:
        dt = now14()
        suffix = ".warc.gz" if self.gzip_level else ".warc"
        key = (f"{WARC_PREFIX}/{dt[0:4]}/{dt[4:6]}/{dt[6:8]}/"
               f"SANDCRAWLER-{dt}-{uuid.uuid4().hex[:12]}{suffix}")
        return WarcSession(self, key, self.store.open_write(key, hashes=()))

    def _rows(self, query: Any) -> list[CdxRecord]:
        with begin(self.engine) as conn:
            return [CdxRecord.from_row(r._mapping) for r in conn.execute(query)]

    def latest(self, url: str) -> CdxRecord | None:
        rows = self._rows(select(web_cdx).where(web_cdx.c.url == url)
                          .order_by(web_cdx.c.datetime.desc(), web_cdx.c.row_created.desc(),
                                    web_cdx.c.warc_offset.desc()).limit(1))
        return rows[0] if rows else None

    def lookup(self, url: str, *, max_hops: int = 10) -> list[CdxRecord] | None:
        """The latest capture of ``url`` through its recorded redirects, ending in a
        200 (a response or a revisit); None when there is no such capture."""
        chain: list[CdxRecord] = []
        while len(chain) <= max_hops:
            row = self.latest(url)
            if row is None:
                return None
            chain.append(row)
            if row.status_code in REDIRECT_CODES and row.location:
                url = row.location
                continue
            return chain if row.status_code == 200 else None
        return None

    def find_sha1(self, sha1hex: str) -> CdxRecord | None:
        """The first 200 capture holding this payload (not a revisit)."""
        rows = self._rows(select(web_cdx).where(web_cdx.c.sha1hex == sha1hex,
                                                web_cdx.c.status_code == 200,
                                                web_cdx.c.mimetype != REVISIT_MIME)
                          .order_by(web_cdx.c.datetime).limit(1))
        return rows[0] if rows else None

    def original(self, row: CdxRecord) -> CdxRecord:
        """The capture holding a revisit's payload (the row itself if it is not a
        revisit, or if the original is gone)."""
        return (self.find_sha1(row.sha1hex or "") or row) if row.is_revisit else row

    def payload_meta(self, row: CdxRecord) -> FileMeta | None:
        """The indexed metadata of a capture's payload (a revisit's MIME type is
        the original's); None for rows without it."""
        if row.size is None or row.sha1hex is None:
            return None
        mimetype = self.original(row).mimetype if row.is_revisit else row.mimetype
        return FileMeta(size_bytes=row.size, sha1hex=row.sha1hex, sha256hex=row.sha256hex or "",
                        md5hex=row.md5hex or "", mimetype=mimetype or "")

    def read_payload(self, row: CdxRecord, dest: IO[bytes], *,
                     max_bytes: int = 2**62) -> WarcPayload:
        """Copy the payload of a captured response into ``dest``; a revisit is
        resolved to the capture it refers to."""
        if row.is_revisit:
            row = self.original(row)
            if row.is_revisit:
                raise NotFound(f"revisit of {row.url}: no capture of sha1 {row.sha1hex}")
        with self.store.open_read(row.warc_path) as f:
            _skip(f, row.warc_offset)
            return copy_payload(f, dest, where=f"{row.warc_path}:{row.warc_offset}",
                                length=row.warc_csize, max_bytes=max_bytes)


def _mimetype(hop: Hop, meta: FileMeta) -> str | None:
    """The declared Content-Type, unless it says nothing (then what the bytes are)."""
    declared = normalize_mime(hop.header("Content-Type"))
    if declared and declared != "application/octet-stream":
        return declared
    return meta.mimetype or declared or None


def _http_headers(hop: Hop) -> StatusAndHeaders:
    """The response headers as recorded: framing that no longer describes the
    recorded body is dropped."""
    encoded = (hop.header("Content-Encoding") or "identity").lower() != "identity"
    drop = _FRAMING | (_ENCODING if encoded else set())
    headers = [(k, v) for k, v in hop.headers if k.lower() not in drop]
    http = StatusAndHeaders(f"{hop.status_code} {hop.reason}".strip(), headers,
                            protocol="HTTP/1.1")
    http.compute_headers_buffer()
    return http


def _compressible(body: IO[bytes], sample: int = 256 * 1024) -> bool:
    """Does the start of the body shrink by a tenth at deflate level 1?"""
    start = body.tell()
    head = body.read(sample)
    body.seek(start)
    return len(head) < 4096 or len(zlib.compress(head, 1)) < 0.9 * len(head)


def _skip(f: IO[bytes], offset: int) -> None:
    try:
        f.seek(offset)
    except (OSError, io.UnsupportedOperation, AttributeError):
        while offset > 0:  # a stream that cannot seek (an S3 body)
            chunk = f.read(min(offset, 1 << 20))
            if not chunk:
                break
            offset -= len(chunk)
