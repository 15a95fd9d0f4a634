"""One capture out of a WARC file: the record at a CDX line's offset, its payload.

warcio parses the record (gzip member or plain, WARC or ARC), and its
``content_stream`` undoes the HTTP transfer and content encodings, so what is
copied out is the file as the server meant it.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import IO, Protocol

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.limitreader import LimitReader
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeadersParserException

from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import FileRecordStatus
from sandcrawler.web.http.fetch import CHUNK, TooLarge


class BadWarc(RecordError):
    status = FileRecordStatus.BAD_WARC


@dataclass(frozen=True, slots=True)
class WarcPayload:
    url: str | None
    http_status: int | None
    content_type: str | None
    size: int


@dataclass(frozen=True, slots=True)
class WarcHeaders:
    rec_type: str
    #: the WARC record's headers, in their order
    warc: list[tuple[str, str]]
    #: the HTTP status line and headers, when the record holds an HTTP message
    http_status: str | None
    http: list[tuple[str, str]]


def _first_record(stream: Readable, where: str) -> ArcWarcRecord:
    """The record at the stream's position; BadWarc when there is none.

    warcio takes any line of five fields for an ARC header, so a wrong offset
    into compressed data, or a text file, can read as a record with an empty
    payload. Every capture names its URL with a scheme (the first field of a
    real ARC header, WARC-Target-URI of a WARC record), so one that does not is
    no record.
    """
    record = next(ArchiveIterator(stream, arc2warc=True), None)
    if record is None:
        raise BadWarc(f"{where}: no WARC record at this offset")
    uri = record.rec_headers.get_header("WARC-Target-URI")
    if uri is not None and not _URI.match(uri):
        raise BadWarc(f"{where}: no WARC record at this offset (what is there names no URL)")
    return record


#: a scheme and something after it: http(s), ftp, dns, filedesc (an ARC file's own header)
_URI = re.compile(r"^[a-z][a-z0-9+.-]*:\S", re.IGNORECASE)
#: how much of a parser's message a status keeps: warcio quotes the bytes it could
#: not parse, which for a wrong offset is a kilobyte of compressed data
_MESSAGE_CHARS = 160


def _unreadable(where: str, e: Exception) -> BadWarc:
    message = str(e).strip() or "unreadable"
    if len(message) > _MESSAGE_CHARS:
        message = message[:_MESSAGE_CHARS] + "…"
    return BadWarc(f"{where}: {type(e).__name__}: {message}")


def read_headers(stream: IO[bytes], *, where: str) -> WarcHeaders:
    """The headers of the first record in ``stream`` (positioned at the record);
    BadWarc when there is none or it does not parse."""
    try:
        record = _first_record(stream, where)
        http = record.http_headers
        return WarcHeaders(record.rec_type, list(record.rec_headers.headers),
                           http.statusline if http is not None else None,
                           list(http.headers) if http is not None else [])
    except (ArchiveLoadFailed, StatusAndHeadersParserException, zlib.error, EOFError,
            ValueError) as e:
        raise _unreadable(where, e) from None


class Readable(Protocol):
    """What a WARC record is read from: a file, or an HTTP response's body."""

    def read(self, amt: int = ..., /) -> bytes: ...


def copy_payload(stream: Readable, dest: IO[bytes], *, where: str, length: int | None = None,
                 max_bytes: int = 1024 * 2**20) -> WarcPayload:
    """Copy the payload of the first record in ``stream`` (positioned at the record,
    at most ``length`` bytes of it) into ``dest``. BadWarc when there is no
    response or resource record there, or it does not decode."""
    if length:
        stream = LimitReader(stream, length)
    try:
        record = _first_record(stream, where)
        if record.rec_type not in ("response", "resource"):
            raise BadWarc(f"{where}: a {record.rec_type} record, not a response")
        status = None
        content_type = None
        if record.http_headers is not None:
            code = record.http_headers.get_statuscode()
            status = int(code) if code and code.isdigit() else None
            content_type = record.http_headers.get_header("Content-Type")
            if status != 200:
                raise BadWarc(f"{where}: the captured response is HTTP {code}")
        else:
            content_type = record.rec_headers.get_header("Content-Type")
        size = 0
        payload = record.content_stream()
        while chunk := payload.read(CHUNK):
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(f"{where}: payload larger than the {max_bytes / 2**20:g} MB "
                               "limit (http.max_mb)")
            dest.write(chunk)
        url = record.rec_headers.get_header("WARC-Target-URI")
        return WarcPayload(url, status, content_type, size)
    except (ArchiveLoadFailed, StatusAndHeadersParserException, zlib.error, EOFError,
            ValueError) as e:
        raise _unreadable(where, e) from None
