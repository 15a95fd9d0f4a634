"""Writing WARC/1.1 records into one WARC file: each record its own gzip member
(or plain, at gzip level 0), a response body streamed through once.

``WarcWriter`` writes the records of one WARC file (warcinfo, requests,
revisits, responses whose body is in memory); ``ResponseWriter`` is one
response record whose body arrives in chunks, straight into the file (DIRECT)
or through a spool file (SPOOL). Ours rather than warcio's writer (which still
reads our files back): each body is read once, and a record can be cut off
again when it turns out a revisit (docs/ingest.md, "WARC writing").
"""

from __future__ import annotations

import hashlib
import struct
import uuid
import zlib
from base64 import b32encode
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import IO, Any, Protocol

from warcio.statusandheaders import StatusAndHeaders

from sandcrawler.core.errors import RecordError
from sandcrawler.core.filemeta import CHUNK, MetaWriter
from sandcrawler.core.mime import normalize_mime
from sandcrawler.core.spool import spool_file
from sandcrawler.records.files import FileMeta
from sandcrawler.records.statuses import FetchStatus
from sandcrawler.storage.blobs import BlobWriter

WARC_VERSION = "WARC/1.1"
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
RESPONSE_TYPE = "application/http; msgtype=response"
REQUEST_TYPE = "application/http; msgtype=request"
RECORD_END = b"\r\n\r\n"
#: a digest of the right length, written first and overwritten when known
_PLACEHOLDER = "sha1:" + "A" * 32
#: gzip member header: deflate, no name, no time, Unix
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
STORED_MAX = 65535
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


def warc_digest(hexdigest: str) -> str:
    """A hex sha1 as WARC digests write it: ``sha1:`` and base32."""
    return "sha1:" + b32encode(bytes.fromhex(hexdigest)).decode()


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def warc_header(fields: list[tuple[str, str]]) -> bytes:
    """A WARC header block: the version line, one ``Name: value`` line a field,
    a blank line (UTF-8, as WARC 1.1 allows)."""
    lines = "".join(f"{name}: {value}\r\n" for name, value in fields)
    return f"{WARC_VERSION}\r\n{lines}\r\n".encode()


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a record went: its offset in the WARC file and its size there
    (compressed, for a gzip member)."""

    offset: int
    csize: int


class _Sink(Protocol):
    def write(self, data: bytes | memoryview) -> int: ...


class WarcWriter:
    """The records of one WARC file being written into ``out``.

    ``gzip_level`` 0 writes plain records; otherwise each record is a gzip member
    of its own, deflated at that level or, for an incompressible body, stored.
    ``block_digest`` says whether records carry ``WARC-Block-Digest``. Response
    bodies wait in ``spool_dir`` when they cannot go straight into the file."""

    def __init__(self, out: BlobWriter, *, gzip_level: int = 1, block_digest: bool = True,
                 spool_dir: str | Path | None = None) -> None:
        self.out = out
        self.gzip_level = gzip_level
        self.block_digest = block_digest
        self.spool_dir = spool_dir
        #: part of a record could not be cut off again (a writer that cannot
        #: truncate): the file must not be committed
        self.damaged = False

    @property
    def size(self) -> int:
        return self.out.size

    def cut(self, offset: int) -> bool:
        """Remove everything written from ``offset`` on; False when the writer
        cannot (the S3 store) and something was written there: then the file is
        ``damaged``."""
        if self.out.size <= offset:
            return True
        if not self.out.rewritable:
            self.damaged = True
            return False
        self.out.truncate(offset)
        return True

    # -- records whose block is in memory -----------------------------------------------------

    def _record(self, fields: list[tuple[str, str]], after: list[tuple[str, str]],
                content_type: str, block: list[bytes]) -> Placed:
        """Write one record, as one gzip member or plain: its header (``fields``,
        WARC-Block-Digest when on, ``after``, Content-Type and Content-Length, in
        the order warcio writes them), its block (the concatenated ``block``)."""
        if self.block_digest:
            digest = hashlib.sha1()
            for b in block:
                digest.update(b)
            fields = [*fields, ("WARC-Block-Digest", warc_digest(digest.hexdigest()))]
        length = sum(len(b) for b in block)
        head = warc_header([*fields, *after, ("Content-Type", content_type),
                            ("Content-Length", str(length))])
        data = b"".join([head, *block, RECORD_END])
        offset = self.out.size
        if self.gzip_level:
            z = zlib.compressobj(self.gzip_level, zlib.DEFLATED, zlib.MAX_WBITS | 16)
            self.out.writev([z.compress(data), z.flush()])
        else:
            self.out.write(data)
        return Placed(offset, self.out.size - offset)

    def warcinfo(self, filename: str, info: dict[str, str]) -> Placed:
        """The warcinfo record at the head of the file: ``info`` as WARC fields
        (empty values left out)."""
        date = datetime.now(UTC).replace(tzinfo=None).isoformat() + "Z"
        body = "".join(f"{name}: {value}\r\n" for name, value in info.items() if value)
        fields = [("WARC-Type", "warcinfo"), ("WARC-Record-ID", new_record_id()),
                  ("WARC-Filename", filename), ("WARC-Date", date)]
        return self._record(fields, [], "application/warc-fields", [body.encode()])

    def request(self, url: str, date: str, http: StatusAndHeaders, concurrent_to: str) -> Placed:
        """A request record (no body) of the response ``concurrent_to``."""
        if http.headers_buff is None:
            http.compute_headers_buffer()
        fields = [("WARC-Date", date), ("WARC-Concurrent-To", concurrent_to),
                  ("WARC-Type", "request"), ("WARC-Record-ID", new_record_id()),
                  ("WARC-Target-URI", url),
                  ("WARC-Payload-Digest", warc_digest(hashlib.sha1().hexdigest()))]
        return self._record(fields, [], REQUEST_TYPE, [http.headers_buff])

    def response(self, url: str, date: str, http: StatusAndHeaders, body: bytes, *,
                 record_id: str, payload_sha1: str, truncated: str | None = None) -> Placed:
        """A response record whose body is in memory (a redirect's empty one, a
        robots.txt); ``truncated`` is its ``WARC-Truncated`` reason."""
        return self._record(_response_fields(record_id, date, truncated),
                            [("WARC-Payload-Digest", warc_digest(payload_sha1)),
                             ("WARC-Type", "response"), ("WARC-Target-URI", url)],
                            RESPONSE_TYPE, [http.headers_buff, body])

    def revisit(self, url: str, date: str, http: StatusAndHeaders, *, record_id: str,
                payload_sha1: str, refers_to_url: str, refers_to_date: str) -> Placed:
        """A revisit record (identical-payload-digest profile): the HTTP headers
        only, the payload being the one captured at ``refers_to_url``."""
        fields = [("WARC-Record-ID", record_id), ("WARC-Date", date),
                  ("WARC-Profile", REVISIT_PROFILE),
                  ("WARC-Refers-To-Target-URI", refers_to_url),
                  ("WARC-Refers-To-Date", refers_to_date)]
        return self._record(fields, [("WARC-Payload-Digest", warc_digest(payload_sha1)),
                                     ("WARC-Type", "revisit"), ("WARC-Target-URI", url)],
                            RESPONSE_TYPE, [http.headers_buff])

    def streamed_response(self, url: str, date: str, http: StatusAndHeaders, *,
                          content_type: str | None, length: int | None,
                          keep_body: bool) -> ResponseWriter:
        """A response record whose body is to come in chunks (``ResponseWriter``).
        ``content_type`` and ``length`` are what the server announced (the length
        None when not the length of the body as recorded); with ``keep_body`` the
        body stays in a spool file (``ResponseWriter.spool``) for the caller."""
        return ResponseWriter(self, url, date, http, content_type=content_type, length=length,
                              keep_body=keep_body)

    # -- the head and tail of a response record written here ---------------------------------

    def response_head(self, url: str, date: str, record_id: str, length: int,
                      block_digest: str | None, payload_digest: str) -> bytes:
        """The WARC header of a response record of ``length`` bytes (HTTP headers
        and body); ``block_digest`` None when the setting is off."""
        fields = _response_fields(record_id, date, None)
        if block_digest is not None:
            fields.append(("WARC-Block-Digest", block_digest))
        fields += [("WARC-Payload-Digest", payload_digest), ("WARC-Type", "response"),
                   ("WARC-Target-URI", url), ("Content-Type", RESPONSE_TYPE),
                   ("Content-Length", str(length))]
        return warc_header(fields)

    def end_stored_member(self, head: bytes, crc: int, rest: int) -> None:
        """Close a stored gzip member whose deflate data is ``head`` and then
        ``rest`` bytes (HTTP headers, body and the record end) of CRC-32 ``crc``:
        the empty last block, the member's CRC-32 and size."""
        whole = crc32_combine(zlib.crc32(head), crc, rest)
        self.out.write(_STORED_END + struct.pack("<II", whole, (len(head) + rest) % 2**32))


def _response_fields(record_id: str, date: str, truncated: str | None) -> list[tuple[str, str]]:
    fields = [("WARC-Record-ID", record_id), ("WARC-Date", date)]
    if truncated:
        fields.append(("WARC-Truncated", truncated))
    return fields


class _Route(Enum):
    #: straight into the WARC file, behind a placeholder header
    DIRECT = "direct"
    #: into a spool file, the record written from it at the end
    SPOOL = "spool"


class _Stage(Enum):
    NEW = "new"  # no byte of the body yet
    STREAMING = "streaming"
    ENDED = "ended"  # the whole body went by
    FINISHED = "finished"  # its digests are known
    WRITTEN = "written"
    ABORTED = "aborted"


class ResponseWriter:
    """One response record whose body arrives in chunks (see the module's
    docstring for the two routes). Use: ``write`` each chunk, ``end_body()``,
    ``sha1hex()`` (the payload's sha1, while the slower digests finish),
    ``finish()``, then ``write_response()`` or ``write_revisit()``; ``abort()``
    on any failure. Every step checks it comes in its turn."""

    __slots__ = ("_block_sha1", "_crc", "_deflate", "_framer", "_head_len", "_in_file", "_meta",
                 "_meta_writer", "_route", "_spool_file", "_stage", "_stored", "_warc",
                 "content_type", "date", "http", "keep_body", "length", "offset", "record_id",
                 "spool", "url")

    def __init__(self, warc: WarcWriter, url: str, date: str, http: StatusAndHeaders, *,
                 content_type: str | None, length: int | None, keep_body: bool) -> None:
        self._warc = warc
        self.url = url
        self.date = date
        self.http = http
        self.content_type = content_type
        self.length = length
        self.keep_body = keep_body
        self.record_id = new_record_id()
        #: where the record starts in the WARC file
        self.offset = warc.size
        self._stage = _Stage.NEW
        self._route: _Route | None = None
        #: bytes of this record are in the WARC file, from ``offset`` on
        self._in_file = False
        self._deflate = False
        self._stored = False
        #: the placeholder header's length (DIRECT), which the real one must keep
        self._head_len = 0
        self._framer: StoredFramer | None = None
        #: the body on disk (SPOOL); handed to the caller with ``keep_body``
        self.spool: Path | None = None
        self._spool_file: IO[bytes] | None = None
        self._meta_writer: MetaWriter | None = None
        self._meta: FileMeta | None = None
        self._block_sha1: str | None = None
        self._crc: int | None = None

    def _expect(self, *stages: _Stage) -> None:
        if self._stage not in stages:
            raise RuntimeError(f"response record of {self.url}: {self._stage.value}, "
                               f"not {' or '.join(s.value for s in stages)}")

    # -- the body going by ----------------------------------------------------------------------

    def write(self, chunk: bytes) -> None:
        if self._stage is not _Stage.STREAMING:
            self._expect(_Stage.NEW)
            self._meta_writer = self._start(chunk)
            self._stage = _Stage.STREAMING
        assert self._meta_writer is not None
        self._meta_writer.write(chunk)

    def _start(self, first: bytes) -> MetaWriter:
        """Choose the route by the first chunk, and start the record on it."""
        warc, http = self._warc, self.http
        level = warc.gzip_level
        self._deflate = bool(level) and compressible(first, self.content_type)
        self._stored = bool(level) and not self._deflate
        extra: dict[str, Any] = {}
        if warc.block_digest:
            extra["block"] = hashlib.sha1(http.headers_buff)
        if self._stored:  # the member's CRC-32 of the HTTP headers and body, on a hash thread
            extra["crc"] = Crc32(zlib.crc32(http.headers_buff))
        if not (self.keep_body or self._deflate or self.length is None
                or not warc.out.rewritable):
            head = self._placeholder_head(self.length)
            if not self._stored or len(head) <= STORED_MAX:
                return self._start_direct(head, extra)
        self._route = _Route.SPOOL
        self.spool = spool_file(warc.spool_dir, ".body")
        self._spool_file = self.spool.open("wb", buffering=0)
        return MetaWriter(self._spool_file.write, extra=extra)

    def _placeholder_head(self, length: int) -> bytes:
        block = _PLACEHOLDER if self._warc.block_digest else None
        return self._warc.response_head(self.url, self.date, self.record_id,
                                        len(self.http.headers_buff) + length, block, _PLACEHOLDER)

    def _start_direct(self, head: bytes, extra: dict[str, Any]) -> MetaWriter:
        self._route = _Route.DIRECT
        self._head_len = len(head)
        out = self._warc.out
        self._framer = StoredFramer(out, self._stored)
        if self._stored:
            out.write(GZIP_HEADER)
        self._framer.write(head)  # its own stored block: overwritten in place at the end
        self._framer.write(self.http.headers_buff)
        return MetaWriter(self._framer.write, extra=extra)

    def end_body(self) -> None:
        """The body is all there (an empty body starts the record here)."""
        if self._stage is _Stage.NEW:
            self.write(b"")
        self._expect(_Stage.STREAMING)
        self._close_spool_file()
        self._stage = _Stage.ENDED

    def sha1hex(self) -> str:
        """The payload's sha1, before the slower digests are done."""
        self._expect(_Stage.ENDED)
        assert self._meta_writer is not None
        return self._meta_writer.sha1hex()

    def finish(self) -> FileMeta:
        """The body's metadata, every digest done. RecordError (``fetch-error``)
        when a body written DIRECT is not of the length announced."""
        self._expect(_Stage.ENDED)
        assert self._meta_writer is not None
        meta, extra = self._meta_writer.finish()
        if self._route is _Route.DIRECT and meta.size_bytes != self.length:
            raise RecordError(f"fetching {self.url}: {meta.size_bytes:,} bytes, "
                              f"not the {self.length:,} announced", FetchStatus.FETCH_ERROR)
        self._meta = meta
        self._block_sha1 = extra.get("block")
        self._crc = int(extra["crc"], 16) if "crc" in extra else None
        self._stage = _Stage.FINISHED
        return meta

    # -- the record ---------------------------------------------------------------------------

    def write_response(self) -> Placed:
        """Write the response record (end it, DIRECT; copy it from the spool, SPOOL)."""
        self._expect(_Stage.FINISHED)
        assert self._meta is not None
        meta = self._meta
        block = warc_digest(self._block_sha1) if self._block_sha1 is not None else None
        head = self._warc.response_head(self.url, self.date, self.record_id,
                                        len(self.http.headers_buff) + meta.size_bytes, block,
                                        warc_digest(meta.sha1hex))
        placed = self._end_direct(head) if self._route is _Route.DIRECT else self._copy_spool(head)
        self._done()
        return placed

    def _rest(self) -> int:
        """The bytes of the record after its WARC header."""
        assert self._meta is not None
        return len(self.http.headers_buff) + self._meta.size_bytes + len(RECORD_END)

    def _end_direct(self, head: bytes) -> Placed:
        """End the record written straight into the WARC file, then write its real
        header over the placeholder (the same length: the digests are)."""
        assert self._framer is not None
        if len(head) != self._head_len:
            raise AssertionError("a WARC header changed length with its digests")
        out = self._warc.out
        self._framer.write(RECORD_END)
        at = self.offset
        if self._stored:
            assert self._crc is not None
            self._warc.end_stored_member(head, zlib.crc32(RECORD_END, self._crc), self._rest())
            at += len(GZIP_HEADER) + _BLOCK_HEADER_LEN
        out.pwrite(head, at)
        return Placed(self.offset, out.size - self.offset)

    def _copy_spool(self, head: bytes) -> Placed:
        """Write the record from the spool file: plain, a stored gzip member (its
        CRC-32 from the first pass) or a deflated one."""
        assert self.spool is not None
        out = self._warc.out
        offset = self.offset = out.size
        self._in_file = True
        member: GzipMember | None = None
        sink: _Sink
        if self._deflate:
            sink = member = GzipMember(out, self._warc.gzip_level)
        else:
            if self._stored:
                out.write(GZIP_HEADER)
            sink = StoredFramer(out, self._stored)
        sink.write(head)
        sink.write(self.http.headers_buff)
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        with self.spool.open("rb", buffering=0) as body:
            while n := body.readinto(buf):
                sink.write(view[:n])
        sink.write(RECORD_END)
        if member is not None:
            member.close()
        elif self._stored:
            assert self._crc is not None
            self._warc.end_stored_member(head, zlib.crc32(RECORD_END, self._crc), self._rest())
        return Placed(offset, out.size - offset)

    def write_revisit(self, refers_to_url: str, refers_to_date: str) -> Placed:
        """Write a revisit record instead of the response: the payload is the one
        captured at ``refers_to_url`` (the part written DIRECT is cut off first)."""
        self._expect(_Stage.FINISHED)
        assert self._meta is not None
        # only a record written DIRECT has bytes in the file to take back; a spooled
        # one's offset may be behind records other threads wrote since
        if self._route is _Route.DIRECT and not self._warc.cut(self.offset):
            raise AssertionError("a revisit after a record that cannot be cut off")
        self.offset, self._in_file = self._warc.out.size, True
        placed = self._warc.revisit(self.url, self.date, self.http, record_id=self.record_id,
                                    payload_sha1=self._meta.sha1hex,
                                    refers_to_url=refers_to_url, refers_to_date=refers_to_date)
        self._done()
        return placed

    def _done(self) -> None:
        self._stage = _Stage.WRITTEN
        if not self.keep_body:
            self._remove_spool()

    def abort(self, *, cut: bool = True) -> bool:
        """Give the record up: the spool file removed and, with ``cut``, whatever
        of it (or after it) is in the WARC file cut off. False when that could
        not be done (a writer that cannot truncate)."""
        self._stage = _Stage.ABORTED
        self._close_spool_file()
        self._remove_spool()
        # a spooled record put nothing into the WARC file before its copy began
        # (``offset`` then moved to where the copy started); cutting at the offset
        # it was created at would take the records other threads wrote since
        started = self._route is _Route.DIRECT or self._in_file
        return self._warc.cut(self.offset) if cut and started else True

    def _close_spool_file(self) -> None:
        if self._spool_file is not None:
            self._spool_file.close()
            self._spool_file = None

    def _remove_spool(self) -> None:
        if self.spool is not None:
            self.spool.unlink(missing_ok=True)
            self.spool = None


def compressible(first: bytes, content_type: str | None) -> bool:
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


class GzipMember:
    """Write side of one deflated gzip member: each WARC record is its own
    member, so a reader can start at any record's offset."""

    def __init__(self, out: BlobWriter, level: int) -> None:
        self._out = out
        self._z = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS | 16)

    def write(self, data: bytes | memoryview) -> int:
        if out := self._z.compress(data):
            self._out.write(out)
        return len(data)

    def close(self) -> None:
        self._out.write(self._z.flush())


class Crc32:
    """``zlib.crc32`` as a hash object, for the hash threads (zlib releases the
    GIL on large buffers)."""

    def __init__(self, value: int = 0) -> None:
        self.value = value

    def update(self, data: bytes) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


class StoredFramer:
    """Writes data into ``out`` as is, or (``stored``) framed as deflate stored
    blocks (at most 65,535 bytes each, a 5-byte header before each), gathered in
    one write."""

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
        for start in range(0, n, STORED_MAX):
            piece = view[start:start + STORED_MAX]
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
