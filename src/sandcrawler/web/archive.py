"""Our own web archive: captures written as WARC files into the blob store and
indexed in SQL (``web_cdx``), so a capture can be found by URL or by payload.

A capture fetches a URL hop by hop and writes, for every hop, a WARC ``request``
record and a ``response`` record (redirects included, so the chain can be
replayed); a final body whose sha1 the archive already holds is written as a
``revisit`` record (identical-payload-digest profile) that refers to the first
capture instead of storing the bytes again.

A body is read once, in 1 MiB chunks, while its sha1, sha256, md5, the WARC block
digest (and a stored gzip member's CRC-32) are worked out on hash threads and its
MIME type is sniffed, so memory stays flat for any size. Its record is written one
of two ways:

* straight into the WARC file, when the body's length is announced, it is not to
  be deflated and the store's writer can overwrite (the local store): the header
  goes first with placeholder digests of the same length and is overwritten once
  they are known; a payload the archive already holds turns out only at the end,
  so that record is cut off again and a revisit written instead;
* through a spool file, otherwise (a body to deflate, no Content-Length, the S3
  store, or a caller that wants the body kept: ``capture(keep_body=True)``).

A record that is not deflated is still its own gzip member: a stored one (deflate
blocks of up to 65,535 bytes, framed here), since deflating already-compressed
data costs several times the download for nothing.

A ``WarcSession`` is one WARC file in the making. Nothing it holds is visible
(neither the file in the store nor its index rows) until ``commit()``; ``abort()``
leaves nothing behind. That is what lets a dataset be archived all or nothing.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import socket
import struct
import uuid
import zlib
from base64 import b32encode
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, Self
from urllib.parse import urlsplit

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import DBAPIError, OperationalError
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from sandcrawler.db.engine import begin
from sandcrawler.db.reader import latest_capture
from sandcrawler.db.schema import web_cdx
from sandcrawler.errors import NotFound, RecordError
from sandcrawler.filemeta import MetaWriter, file_metadata
from sandcrawler.mime import normalize_mime
from sandcrawler.models.capture import REVISIT_MIME, CdxRecord
from sandcrawler.models.files import FileMeta
from sandcrawler.models.statuses import FetchStatus
from sandcrawler.spool import spool_file
from sandcrawler.storage.blobs import BlobStore, BlobWriter
from sandcrawler.timestamps import now14, warc_date
from sandcrawler.version import __version__
from sandcrawler.web.cdx import surt
from sandcrawler.web.fetch import CHUNK, Hop, HttpFetcher, Opened, TooLarge
from sandcrawler.web.warc import WarcHeaders, WarcPayload, copy_payload, read_headers

log = logging.getLogger(__name__)

WARC_PREFIX = "warcs"
WARC_FORMAT = "WARC File Format 1.1"
WARC_SPEC = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
REDIRECT_CODES = (301, 302, 303, 307, 308)
# Hop-by-hop framing that no longer describes the body as recorded: urllib3
# de-chunks, and an encoded body is recorded decoded (what was hashed).
_FRAMING = {"transfer-encoding"}
_ENCODING = {"content-encoding", "content-length"}
_RECORD_END = b"\r\n\r\n"
#: a digest of the right length, written first and overwritten when known
_PLACEHOLDER = "sha1:" + "A" * 32
#: gzip member header: deflate, no name, no time, Unix
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
_STORED_MAX = 65535
_BLOCK_HEADER_LEN = 5
#: the last deflate block: stored, empty
_STORED_END = b"\x01\x00\x00\xff\xff"
_SAMPLE = 24 * 1024
_COMPRESSED_KINDS = ("image/", "video/", "audio/")
_RAW_MEDIA = {"image/svg+xml", "image/bmp", "image/tiff", "audio/wav", "audio/x-wav"}
#: formats whose bytes are compressed already (PDF is not among them: sampled)
_COMPRESSED = {"application/zip", "application/gzip", "application/x-bzip2",
               "application/x-xz", "application/zstd", "application/x-7z-compressed",
               "application/x-rar-compressed", "application/vnd.rar", "application/epub+zip",
               "application/vnd.apache.parquet"}


def _sha1(data: bytes | None) -> Any:
    return hashlib.sha1(data or b"")


def _digest(hexdigest: str) -> str:
    return "sha1:" + b32encode(bytes.fromhex(hexdigest)).decode()


@dataclass(frozen=True, slots=True)
class WarcInfo:
    """What the warcinfo record at the head of each of our WARC files says of the
    crawl that wrote it (the fields the WARC 1.1 standard suggests, as Heritrix
    writes them): the software, the machine, who runs it and how to reach them
    (the User-Agent carries ``crawl.contact``), and whether robots.txt is obeyed."""

    user_agent: str
    operator: str | None = None
    robots: str = "obey"  # "ignore" when crawl.robots is off
    hostname: str = field(default_factory=socket.gethostname)

    def fields(self) -> dict[str, str]:
        out = {"software": f"sandcrawler/{__version__}", "hostname": self.hostname,
               "http-header-user-agent": self.user_agent}
        if self.operator:
            out["operator"] = self.operator
        return out | {"robots": self.robots, "format": WARC_FORMAT, "conformsTo": WARC_SPEC}


@dataclass(slots=True)
class WebCapture:
    """What one capture recorded: every hop's row (redirects first), the body's
    metadata for a 200, and the earlier capture a revisit refers to."""

    rows: list[CdxRecord]
    file_meta: FileMeta | None = None
    revisit_of: CdxRecord | None = None
    spool: Path | None = None  # the body on disk until close() (capture with keep_body)

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
        self._write(self._warcio.create_warcinfo_record(key.rsplit("/", 1)[-1],
                                                        archive.info.fields()))

    def _write(self, record: Any) -> tuple[int, int]:
        """Append one record without a body (warcinfo, request, revisit, redirect),
        its own gzip member; its offset and compressed size."""
        offset = self._writer.size
        if self.archive.gzip_level:
            member = _GzipMember(self._writer, self.archive.gzip_level)
            WARCWriter(member, gzip=False, warc_version="WARC/1.1").write_record(record)
            member.close()
        else:
            WARCWriter(self._writer, gzip=False, warc_version="WARC/1.1").write_record(record)
        return offset, self._writer.size - offset

    def capture(self, url: str, *, max_bytes: int | Callable[[Hop], int],
                keep_body: bool = True,
                check: Callable[[str], None] | None = None) -> WebCapture:
        """Fetch ``url`` and record every hop. RecordError (nothing recorded) when
        no answer could be had: ``fetch-error``, ``redirect-loop``, ``too-large``
        (a 200 body over ``max_bytes``: a number, or a function of the final
        response, so a page may have a lower limit than a file), ``http-error``
        (an error page over it), or what ``check`` raises for a redirect target.
        With ``keep_body`` the final body stays on disk (``WebCapture.spool``) until
        ``close()``; without, it may go straight into the WARC file (one copy)."""
        opened = self.archive.fetcher.open(url, check=check)
        try:
            # redirect bodies were read and dropped by the fetcher: headers only
            rows = [self._record(hop, now14(), _http_headers(hop), io.BytesIO(), None)
                    for hop in opened.hops[:-1]]
            limit = max_bytes(opened.final) if callable(max_bytes) else max_bytes
            capture = self._record_final(opened, limit, keep_body)
        finally:
            opened.close()
        capture.rows[:0] = rows
        return capture

    def record_read(self, opened: Opened, body: bytes, *, truncated: str | None = None
                    ) -> list[CdxRecord]:
        """Record an answer whose body the caller read itself (robots.txt, read up
        to its limit): every redirect hop, then the final answer with ``body``;
        ``truncated`` (``length``, ``disconnect``, ``time``) when ``body`` is not all
        of it, said in ``WARC-Truncated`` (and then never a revisit). The rows are
        indexed with the session's other captures."""
        rows = [self._record(hop, now14(), _http_headers(hop), io.BytesIO(), None)
                for hop in opened.hops[:-1]]
        hop = opened.final
        http = _http_headers(hop)
        meta = file_metadata(body)
        ok = hop.status_code == 200 and truncated is None
        earlier = self.find_sha1(meta.sha1hex) if ok else None
        block = _sha1(http.headers_buff + body).hexdigest()
        rows.append(self._record(hop, now14(), http, io.BytesIO(body), meta, block_sha1=block,
                                 refers_to=earlier, truncated=truncated))
        return rows

    def _record_final(self, opened: Opened, max_bytes: int, keep_body: bool) -> WebCapture:
        """Stream the final body once, hashing it (sha1, sha256, md5, the WARC block
        digest and, for a stored gzip member, its CRC-32) on the hash threads
        meanwhile. How it is recorded is decided on its first chunk:

        * direct: a body of announced length that is not deflated (incompressible,
          or gzip off) into a writer that can overwrite (the local store) goes
          straight into the WARC file behind a header of placeholder digests,
          which is overwritten once they are known; a revisit cuts the record
          off again and writes the revisit instead;
        * spool: otherwise the body is spooled to disk and the record written
          from the spool once its digests are known."""
        hop = opened.final
        dt = now14()
        http = _http_headers(hop)
        level = self.archive.gzip_level
        record_id = f"<urn:uuid:{uuid.uuid4()}>"
        offset = self._writer.size
        state: dict[str, Any] = {}
        spool: Path | None = None
        out: _Framer | None = None
        meta_writer: MetaWriter | None = None

        def start(first: bytes) -> MetaWriter:
            nonlocal spool, out
            deflate = bool(level) and _compressible(first, hop.header("Content-Type"))
            stored = bool(level) and not deflate
            state.update(deflate=deflate, stored=stored)
            extra = {"block": _sha1(http.headers_buff)}
            if stored:  # the member's CRC-32 of the HTTP headers and body, on a hash thread
                extra["crc"] = _Crc32(zlib.crc32(http.headers_buff))
            length = _declared_length(hop)
            if not (keep_body or deflate or length is None or not self._writer.rewritable):
                head = self._head(hop, dt, record_id, http, length, _PLACEHOLDER, _PLACEHOLDER)
                if not stored or len(head) <= _STORED_MAX:
                    state.update(direct=True, head_len=len(head), length=length)
                    out = _Framer(self._writer, stored)
                    if stored:
                        self._writer.write(_GZIP_HEADER)
                    out.write(head)
                    out.write(http.headers_buff)
                    return MetaWriter(out.write, extra=extra)
            spool = spool_file(self.archive.spool_dir, ".body")
            f = spool.open("wb", buffering=0)
            state["spool_file"] = f
            return MetaWriter(f.write, extra=extra)

        def write(chunk: bytes) -> None:
            nonlocal meta_writer
            if meta_writer is None:
                meta_writer = start(chunk)
            meta_writer.write(chunk)

        try:
            try:
                try:
                    self.archive.fetcher.stream_body(opened, write, max_bytes)
                except TooLarge as e:
                    if hop.status_code == 200:
                        raise
                    raise RecordError(f"HTTP {hop.status_code} from {hop.url}, with a body over "
                                      f"{max_bytes:,} bytes", FetchStatus.HTTP_ERROR) from e
            finally:
                if meta_writer is None:  # an empty body
                    meta_writer = start(b"")
                if (f := state.get("spool_file")) is not None:
                    f.close()
            ok = hop.status_code == 200
            # looked up while md5 and sha256 finish on the hash threads
            earlier = self.find_sha1(meta_writer.sha1hex()) if ok else None
            meta, extra = meta_writer.finish()
            if state.get("direct"):
                if meta.size_bytes != state["length"]:
                    raise RecordError(f"fetching {hop.url}: {meta.size_bytes:,} bytes, "
                                      f"not the {state['length']:,} announced",
                                      FetchStatus.FETCH_ERROR)
                if earlier is not None:
                    self._writer.truncate(offset)
                    row = self._record(hop, dt, http, io.BytesIO(), meta,
                                       block_sha1=extra["block"], refers_to=earlier)
                else:
                    row = self._finish_direct(hop, dt, record_id, http, meta, extra, offset,
                                              state, out)
            else:
                assert spool is not None
                with spool.open("rb", buffering=0) as body:
                    if earlier is not None:
                        row = self._record(hop, dt, http, body, meta,
                                           block_sha1=extra["block"], refers_to=earlier)
                    else:
                        row = self._record_spooled(hop, dt, record_id, http, meta, extra, body,
                                                   state)
                if not keep_body:
                    spool.unlink(missing_ok=True)
                    spool = None
            return WebCapture([row], meta if ok else None, revisit_of=earlier, spool=spool)
        except BaseException:
            if (f := state.get("spool_file")) is not None:
                f.close()
            if spool is not None:
                spool.unlink(missing_ok=True)
            if self._writer.size > offset and not self.closed:
                if not self._writer.rewritable:
                    raise
                self._writer.truncate(offset)  # no part of a record is left behind
            raise

    def _head(self, hop: Hop, dt: str, record_id: str, http: StatusAndHeaders, length: int,
              block_digest: str, payload_digest: str) -> bytes:
        """The WARC header of a response record, as warcio writes it."""
        headers = {"WARC-Record-ID": record_id, "WARC-Date": warc_date(dt),
                   "WARC-Block-Digest": block_digest, "WARC-Payload-Digest": payload_digest}
        record = self._warcio.create_warc_record(
            hop.url, "response", payload=io.BytesIO(), length=length, http_headers=http,
            warc_headers_dict=headers)
        buf = io.BytesIO()
        WARCWriter(buf, gzip=False, warc_version="WARC/1.1").write_record(record)
        return buf.getvalue()[: -len(http.headers_buff) - len(_RECORD_END)]

    def _finish_direct(self, hop: Hop, dt: str, record_id: str, http: StatusAndHeaders,
                       meta: FileMeta, extra: dict[str, str], offset: int,
                       state: dict[str, Any], out: _Framer | None) -> CdxRecord:
        """End the record written straight into the WARC, then write its real header
        over the placeholder one (the same length)."""
        assert out is not None
        head = self._head(hop, dt, record_id, http, meta.size_bytes, _digest(extra["block"]),
                          _digest(meta.sha1hex))
        if len(head) != state["head_len"]:
            raise AssertionError("a WARC header changed length with its digests")
        out.write(_RECORD_END)
        at = offset
        if state["stored"]:
            rest = len(http.headers_buff) + meta.size_bytes + len(_RECORD_END)
            crc = zlib.crc32(_RECORD_END, int(extra["crc"], 16))
            crc = crc32_combine(zlib.crc32(head), crc, rest)
            self._writer.write(_STORED_END + struct.pack("<II", crc, (len(head) + rest) % 2**32))
            at += len(_GZIP_HEADER) + _BLOCK_HEADER_LEN
        self._writer.pwrite(head, at)
        return self._finish_record(hop, dt, record_id, meta, offset, self._writer.size - offset)

    def _record_spooled(self, hop: Hop, dt: str, record_id: str, http: StatusAndHeaders,
                        meta: FileMeta, extra: dict[str, str], body: IO[bytes],
                        state: dict[str, Any]) -> CdxRecord:
        """Write the response record of a spooled body: plain, a stored gzip member
        (framed here, its CRC-32 from the first pass) or a deflated one."""
        head = self._head(hop, dt, record_id, http, meta.size_bytes, _digest(extra["block"]),
                          _digest(meta.sha1hex))
        offset = self._writer.size
        level = self.archive.gzip_level
        if state["deflate"]:
            member = _GzipMember(self._writer, level)
            sink: Any = member
        else:
            if state["stored"]:
                self._writer.write(_GZIP_HEADER)
            sink = _Framer(self._writer, state["stored"])
        sink.write(head)
        sink.write(http.headers_buff)
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        while n := body.readinto(buf):  # type: ignore[attr-defined]
            sink.write(view[:n])
        sink.write(_RECORD_END)
        if state["deflate"]:
            member.close()
        elif state["stored"]:
            rest = len(http.headers_buff) + meta.size_bytes + len(_RECORD_END)
            crc = zlib.crc32(_RECORD_END, int(extra["crc"], 16))
            crc = crc32_combine(zlib.crc32(head), crc, rest)
            self._writer.write(_STORED_END + struct.pack("<II", crc, (len(head) + rest) % 2**32))
        return self._finish_record(hop, dt, record_id, meta, offset, self._writer.size - offset)

    def _finish_record(self, hop: Hop, dt: str, record_id: str, meta: FileMeta, offset: int,
                       csize: int) -> CdxRecord:
        """The request record of a response just written, and its index row."""
        self._write_request(hop, dt, record_id)
        row = CdxRecord(
            url=hop.url, datetime=dt, surt=surt(hop.url), status_code=hop.status_code,
            mimetype=_mimetype(hop, meta), warc_path=self.key, warc_offset=offset,
            warc_csize=csize, location=hop.location, sha1hex=meta.sha1hex, size=meta.size_bytes,
            sha256hex=meta.sha256hex or None, md5hex=meta.md5hex or None)
        self._add(row)
        return row

    def _record(self, hop: Hop, dt: str, http: StatusAndHeaders, body: IO[bytes],
                meta: FileMeta | None, *, block_sha1: str | None = None,
                refers_to: CdxRecord | None = None,
                truncated: str | None = None) -> CdxRecord:
        """Write a response record (or, with ``refers_to``, a revisit record of the
        headers only) and its request record; index the response."""
        record_id = f"<urn:uuid:{uuid.uuid4()}>"
        headers = {"WARC-Record-ID": record_id, "WARC-Date": warc_date(dt)}
        if truncated:
            headers["WARC-Truncated"] = truncated
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
        offset, csize = self._write(record)
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

    def commit(self) -> list[CdxRecord]:
        """Make the WARC file visible in the store and index its records: both or
        neither. The rows are inserted in a transaction, the file is committed
        inside it, last: rows the database refuses leave no file, and a file whose
        transaction the database then refuses is removed again. When the outcome is
        unknown (the connection lost during the commit, which may have been made,
        or an interruption there) the file is kept: a file no row refers to is only
        garbage, rows without their file would be captures that cannot be read. A
        file left so, or by a process killed between the two commits, is what
        ``WebArchive.remove_unindexed`` (``store cleanup``) removes. A session
        without records stores no file."""
        if self.closed:
            raise ValueError(f"WARC session {self.key} already closed")
        self.closed = True
        if not self._rows:
            self._writer.abort()  # a warcinfo record alone: nothing to find it by
            return []
        # set here, to the microsecond: the order of two captures of one URL
        # within the same second (CDX datetimes are to the second)
        created = datetime.now(UTC)
        try:
            with begin(self.archive.engine) as conn:
                conn.execute(insert(web_cdx),
                             [r.to_row() | {"row_created": created} for r in self._rows])
                self._writer.commit()
        except BaseException as e:
            if self._writer.info is None:
                self._writer.abort()
            elif isinstance(e, DBAPIError) and not isinstance(e, OperationalError):
                self._remove_file(e)  # refused by the database: nothing was committed
            raise
        return list(self._rows)

    def _remove_file(self, cause: BaseException) -> None:
        try:
            self.archive.store.delete(self.key)
        except Exception as e:  # the store failing too: left to remove_unindexed
            log.warning("WARC file %s is stored without its index (%s) and could not be "
                        "removed: %s; `store cleanup` removes it", self.key,
                        type(cause).__name__, e)

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            self._writer.abort()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is not None or not self.closed:
            self.abort()


#: the names WebArchive.session gives its WARC files
_OUR_WARC = re.compile(rf"{WARC_PREFIX}/\d{{4}}/\d\d/\d\d/SANDCRAWLER-\d{{14}}-[0-9a-f]{{12}}"
                       r"\.warc(\.gz)?")


class WebArchive:
    def __init__(self, store: BlobStore, engine: Engine, fetcher: HttpFetcher, *,
                 gzip_level: int = 1, spool_dir: str | Path | None = None,
                 info: WarcInfo | None = None) -> None:
        """``info``: the warcinfo of every WARC file (default: the fetcher's
        User-Agent, no operator, robots.txt obeyed)."""
        self.info = info or WarcInfo(fetcher.user_agent)
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
        """The latest capture of exactly ``url`` (``db.reader.CAPTURE_ORDER``: what
        the pages and the readers show is what is replayed)."""
        with begin(self.engine) as conn:
            return latest_capture(conn, url)

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
        with self.open_record(row) as f:
            return copy_payload(f, dest, where=f"{row.warc_path}:{row.warc_offset}",
                                length=row.warc_csize, max_bytes=max_bytes)

    def open_record(self, row: CdxRecord) -> IO[bytes]:
        """The bytes of the capture's WARC record alone, read by offset and length
        (a ranged read in the store, not a read from the file's start)."""
        return self.store.open_range(row.warc_path, row.warc_offset, max(row.warc_csize, 1))

    def record_headers(self, row: CdxRecord) -> WarcHeaders:
        """The WARC and HTTP headers of the capture's record."""
        with self.open_record(row) as f:
            return read_headers(f, where=f"{row.warc_path}:{row.warc_offset}")

    def capture(self, warc_path: str, warc_offset: int) -> CdxRecord | None:
        """The indexed capture at this place in a WARC file, if any."""
        rows = self._rows(select(web_cdx).where(web_cdx.c.warc_path == warc_path,
                                                web_cdx.c.warc_offset == warc_offset))
        return rows[0] if rows else None

    def remove_unindexed(self, older_than: float = 86400.0, *, batch: int = 500) -> int:
        """Remove the WARC files this archive wrote (by their names) that no
        ``web_cdx`` row refers to and that were written over ``older_than`` seconds
        ago (a younger one may be a session's between its two commits): what a
        session killed there, or whose commit's outcome was unknown, left behind
        (``WarcSession.commit``). Returns how many were removed."""
        cutoff = datetime.now(UTC) - timedelta(seconds=older_than)
        unindexed: list[str] = []  # few: removed once the listing is done
        keys: list[str] = []
        for info in self.store.list(WARC_PREFIX + "/"):
            if (_OUR_WARC.fullmatch(info.key) and info.modified is not None
                    and info.modified <= cutoff):
                keys.append(info.key)
            if len(keys) >= batch:
                unindexed += self._unindexed(keys)
                keys = []
        unindexed += self._unindexed(keys) if keys else []
        return sum(self.store.delete(key) for key in unindexed)

    def _unindexed(self, keys: list[str]) -> list[str]:
        with begin(self.engine) as conn:
            indexed = set(conn.execute(select(web_cdx.c.warc_path).distinct()
                                       .where(web_cdx.c.warc_path.in_(keys))).scalars())
        return [key for key in keys if key not in indexed]


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


def _compressible(first: bytes, content_type: str | None) -> bool:
    """Is a body worth deflating, judged by its first chunk? Not if it is of a
    compressed format; else if a sample (three 8 KiB pieces: the start, middle and
    end of the chunk) shrinks by a tenth at level 1. Deflating data that does not
    shrink runs at some 50 MB/s here, several times the download, for nothing;
    a bigger sample would cost as much on small files."""
    if len(first) < 4096:
        return True  # a few bytes: whatever deflate gives
    mime = normalize_mime(content_type) or ""
    if mime in _COMPRESSED or (mime.startswith(_COMPRESSED_KINDS) and mime not in _RAW_MEDIA):
        return False
    piece = _SAMPLE // 3
    if len(first) <= _SAMPLE:
        sample = first
    else:
        mid = len(first) // 2 - piece // 2
        sample = first[:piece] + first[mid:mid + piece] + first[-piece:]
    return len(zlib.compress(sample, 1)) < 0.9 * len(sample)


def _declared_length(hop: Hop) -> int | None:
    """The body's length as the server announced it, if that is the length of the
    body as recorded (not content-encoded)."""
    if (hop.header("Content-Encoding") or "identity").lower() != "identity":
        return None
    declared = (hop.header("Content-Length") or "").strip()
    return int(declared) if declared.isdigit() else None


class _Crc32:
    """``zlib.crc32`` as a hash object, for the hash threads (zlib releases the
    GIL on large buffers)."""

    def __init__(self, value: int = 0) -> None:
        self.value = value

    def update(self, data: bytes) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


class _Framer:
    """Writes data into ``out`` as is, or framed as deflate stored blocks (at most
    65,535 bytes each, a 5-byte header before each), gathered in one write."""

    def __init__(self, out: BlobWriter, stored: bool) -> None:
        self._out = out
        self._stored = stored

    def write(self, data: bytes | memoryview) -> int:
        n = len(data)
        if not n:
            return 0
        if not self._stored:
            self._out.writev([data])
            return n
        view = memoryview(data)
        buffers: list[bytes | memoryview] = []
        for start in range(0, n, _STORED_MAX):
            piece = view[start:start + _STORED_MAX]
            buffers += [_block_header(len(piece)), piece]
        self._out.writev(buffers)
        return n


def _block_header(n: int) -> bytes:
    """A deflate stored block that is not the last, of ``n`` bytes (byte-aligned)."""
    return struct.pack("<BHH", 0, n, n ^ 0xFFFF)


def _crc32_times(a: int, b: int) -> int:
    """a(x) b(x) modulo the CRC-32 polynomial (reflected), as zlib's multmodp."""
    m, p = 1 << 31, 0
    while True:
        if a & m:
            p ^= b
            if a & (m - 1) == 0:
                return p
        m >>= 1
        b = (b >> 1) ^ 0xEDB88320 if b & 1 else b >> 1


def _x2n_table() -> list[int]:
    p, table = 1 << 30, []  # x^1
    for _ in range(32):
        table.append(p)
        p = _crc32_times(p, p)
    return table


_X2N = _x2n_table()


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """The CRC-32 of A + B from crc32(A), crc32(B) and len(B), as zlib's
    ``crc32_combine`` (which Python's zlib does not offer): some 30 products,
    whatever the length."""
    p, k = 1 << 31, 3  # x^0; x^(len2 * 2^3): 8 bits a byte
    while len2:
        if len2 & 1:
            p = _crc32_times(_X2N[k & 31], p)
        len2 >>= 1
        k += 1
    return _crc32_times(p, crc1) ^ crc2

