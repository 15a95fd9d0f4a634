"""Our own web archive: captures written as WARC files into the blob store and
indexed in SQL (``web_cdx``), so a capture can be found by URL or by payload.

A capture writes a request and a response record for every hop; a body the
archive already holds becomes a ``revisit``. This module fetches, chooses
between a response and a revisit, and indexes; the bytes are
``web.archive.warc_writer``'s. A ``WarcSession`` is one WARC file in the making:
nothing is visible until ``commit()``, ``abort()`` leaves nothing, and several
threads may capture into it at once (docs/ingest.md, "Captures").
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, Self
from urllib.parse import urlsplit

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import DBAPIError, OperationalError
from warcio.statusandheaders import StatusAndHeaders

from sandcrawler.core.errors import NotFound, RecordError
from sandcrawler.core.filemeta import file_metadata
from sandcrawler.core.mime import normalize_mime
from sandcrawler.core.timestamps import now14, warc_date
from sandcrawler.db.engine import begin
from sandcrawler.db.queries import latest_capture
from sandcrawler.db.schema import web_cdx
from sandcrawler.records.capture import REVISIT_MIME, CdxRecord
from sandcrawler.records.files import FileMeta
from sandcrawler.records.statuses import FetchStatus
from sandcrawler.storage.blobs import BlobStore, BlobWriter
from sandcrawler.version import __version__
from sandcrawler.web.archive.cdx import surt
from sandcrawler.web.archive.warc import WarcHeaders, WarcPayload, copy_payload, read_headers
from sandcrawler.web.archive.warc_writer import Placed, WarcWriter, new_record_id
from sandcrawler.web.http.fetch import Hop, HttpFetcher, Opened, SizeLimit, TooLarge

log = logging.getLogger(__name__)

WARC_PREFIX = "warcs"
WARC_FORMAT = "WARC File Format 1.1"
WARC_SPEC = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
REDIRECT_CODES = (301, 302, 303, 307, 308)
# Hop-by-hop framing that no longer describes the body as recorded: urllib3
# de-chunks, and an encoded body is recorded decoded (what was hashed).
_FRAMING = {"transfer-encoding"}
_ENCODING = {"content-encoding", "content-length"}
_EMPTY_SHA1 = hashlib.sha1(b"").hexdigest()


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


class WarcSession:
    """One WARC file being written, and the index rows for its records. The bytes
    of each record are ``WarcWriter``'s (``sandcrawler.web.archive.warc_writer``); the
    session fetches, decides between a response and a revisit, and indexes."""

    def __init__(self, archive: WebArchive, key: str, writer: BlobWriter) -> None:
        self.archive = archive
        self.key = key
        self._writer = writer
        self._warc = WarcWriter(writer, gzip_level=archive.gzip_level,
                                block_digest=archive.block_digest, spool_dir=archive.spool_dir)
        self._rows: list[CdxRecord] = []
        self._by_sha1: dict[str, CdxRecord] = {}
        self.closed = False
        #: one record at a time goes into the WARC file (and the index rows)
        self._lock = threading.RLock()
        self._warc.warcinfo(key.rsplit("/", 1)[-1], archive.info.fields())

    def capture(self, url: str, *, max_bytes: int | SizeLimit | Callable[[Hop], SizeLimit],
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
            limit = max_bytes(opened.final) if callable(max_bytes) else max_bytes
            with self._lock:
                # redirect bodies were read and dropped by the fetcher: headers only
                rows = [self._record(hop, now14(), _http_headers(hop), b"", None)
                        for hop in opened.hops[:-1]]
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
        rows = [self._record(hop, now14(), _http_headers(hop), b"", None)
                for hop in opened.hops[:-1]]
        hop = opened.final
        meta = file_metadata(body)
        ok = hop.status_code == 200 and truncated is None
        earlier = self.find_sha1(meta.sha1hex) if ok else None
        rows.append(self._record(hop, now14(), _http_headers(hop), body, meta,
                                 refers_to=earlier, truncated=truncated))
        return rows

    def _record_final(self, opened: Opened, max_bytes: int | SizeLimit,
                      keep_body: bool) -> WebCapture:
        """Stream the final body once into its response record (``ResponseWriter``:
        straight into the WARC file, or through a spool file), hashing it meanwhile;
        a payload the archive already holds becomes a revisit record. On any
        failure no part of the record is left in the WARC file."""
        hop = opened.final
        dt = now14()
        # A kept body goes to a spool file, so it may stream while other threads
        # write records; one that may go straight into the WARC file holds the
        # file for the whole stream.
        streaming = contextlib.nullcontext() if keep_body else self._lock
        with streaming:
            record = self._warc.streamed_response(
                hop.url, warc_date(dt), _http_headers(hop),
                content_type=hop.header("Content-Type"), length=_declared_length(hop),
                keep_body=keep_body)
            try:
                try:
                    self.archive.fetcher.stream_body(opened, record.write, max_bytes)
                except TooLarge as e:
                    if hop.status_code == 200:
                        raise
                    over = max_bytes.max_bytes if isinstance(max_bytes, SizeLimit) else max_bytes
                    raise RecordError(f"HTTP {hop.status_code} from {hop.url}, with a body "
                                      f"over {over:,} bytes", FetchStatus.HTTP_ERROR) from e
                record.end_body()
                # the body is in: the connection and the host's slot go back now,
                # not after this record has had its turn at the file
                opened.close()
                ok = hop.status_code == 200
                if keep_body:
                    # the digests of a spooled body, and whether the archive held
                    # it before this session, are this thread's own business:
                    # worked out before taking the file, so threads do not wait
                    # on each other's
                    sha1hex = record.sha1hex()
                    held = self.archive.find_sha1(sha1hex) if ok else None
                    meta = record.finish()
                with self._lock:
                    if keep_body:
                        earlier = (self._by_sha1.get(sha1hex) or held) if ok else None
                    else:
                        # looked up while md5 and sha256 finish on the hash threads
                        earlier = self.find_sha1(record.sha1hex()) if ok else None
                        meta = record.finish()
                    if earlier is not None:
                        placed = record.write_revisit(earlier.url, warc_date(earlier.datetime))
                    else:
                        placed = record.write_response()
                    row = self._index(hop, dt, record.record_id, meta, placed,
                                      revisit=earlier is not None)
            except BaseException:
                # a writer that cannot cut (S3) writes the record only from the spool,
                # after everything that may fail for this record alone; if that write
                # fails midway, the session is damaged and refuses to commit
                with self._lock:
                    record.abort(cut=not self.closed)
                raise
        return WebCapture([row], meta if ok else None, revisit_of=earlier, spool=record.spool)

    def _record(self, hop: Hop, dt: str, http: StatusAndHeaders, body: bytes,
                meta: FileMeta | None, *, refers_to: CdxRecord | None = None,
                truncated: str | None = None) -> CdxRecord:
        """Write a response record of a body in memory (``meta`` None: a redirect's,
        empty) or, with ``refers_to``, a revisit record of the headers only; index it."""
        record_id = new_record_id()
        date = warc_date(dt)
        if meta is None:
            meta = FileMeta(size_bytes=0, sha1hex=_EMPTY_SHA1, sha256hex="", md5hex="",
                            mimetype="")
        if refers_to is not None:
            placed = self._warc.revisit(hop.url, date, http, record_id=record_id,
                                        payload_sha1=meta.sha1hex, refers_to_url=refers_to.url,
                                        refers_to_date=warc_date(refers_to.datetime))
        else:
            placed = self._warc.response(hop.url, date, http, body, record_id=record_id,
                                         payload_sha1=meta.sha1hex, truncated=truncated)
        return self._index(hop, dt, record_id, meta, placed, revisit=refers_to is not None)

    def _index(self, hop: Hop, dt: str, record_id: str, meta: FileMeta, placed: Placed, *,
               revisit: bool) -> CdxRecord:
        """The request record of a response (or revisit) just written, and its row."""
        self._warc.request(hop.url, warc_date(dt), _request_headers(hop), record_id)
        row = CdxRecord(
            url=hop.url, datetime=dt, surt=surt(hop.url), status_code=hop.status_code,
            mimetype=REVISIT_MIME if revisit else _mimetype(hop, meta), warc_path=self.key,
            warc_offset=placed.offset, warc_csize=placed.csize, location=hop.location,
            sha1hex=meta.sha1hex, size=meta.size_bytes, sha256hex=meta.sha256hex or None,
            md5hex=meta.md5hex or None)
        self._add(row)
        return row

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
        if self._warc.damaged:
            self.abort()
            raise ValueError(f"WARC session {self.key}: a record failed midway and the store "
                             "cannot cut it off; nothing committed")
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
                 gzip_level: int = 1, block_digest: bool = True,
                 spool_dir: str | Path | None = None, info: WarcInfo | None = None) -> None:
        """``info``: the warcinfo of every WARC file (default: the fetcher's
        User-Agent, no operator, robots.txt obeyed); ``block_digest``: whether
        records carry ``WARC-Block-Digest`` (``warc.block_digest``)."""
        self.info = info or WarcInfo(fetcher.user_agent)
        self.store = store
        self.engine = engine
        self.fetcher = fetcher
        self.gzip_level = gzip_level
        self.block_digest = block_digest
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
        """The latest capture of exactly ``url`` (``db.queries.CAPTURE_ORDER``: what
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


def _request_headers(hop: Hop) -> StatusAndHeaders:
    """The request as sent, for its request record."""
    parts = urlsplit(hop.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return StatusAndHeaders(f"GET {target} HTTP/1.1", hop.request_headers, is_http_request=True)


def _declared_length(hop: Hop) -> int | None:
    """The body's length as the server announced it, if that is the length of the
    body as recorded (not content-encoded)."""
    if (hop.header("Content-Encoding") or "identity").lower() != "identity":
        return None
    declared = (hop.header("Content-Length") or "").strip()
    return int(declared) if declared.isdigit() else None
