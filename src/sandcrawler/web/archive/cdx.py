"""CDX index lines in the 11-column format of wayback/heritrix crawls:

    surt  timestamp  url  mime  status  sha1(base32)  redirect  meta  c_size  offset  warc

Fields are separated by single spaces; ``-`` means "none". A file may begin with
a ``" CDX N b a m s k r M S V g"`` header line naming the columns. A line is
read into a ``CdxRecord`` (``sandcrawler.records.capture``); ``surt()`` makes the
key a capture is indexed by.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import sha1_hex
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.statuses import CdxStatus

CDX_COLUMNS = 11


class CdxError(RecordError):
    status = CdxStatus.BAD_CDX


@dataclass(frozen=True, slots=True)
class CaptureSkip:
    """Why a line names no usable file: skip-header, skip-revisit or skip-status."""

    status: CdxStatus
    detail: str | None = None
    cdx: CdxRecord | None = None  # None for a header line


def read_capture(raw: bytes | str) -> CdxRecord | CaptureSkip:
    """One line of a CDX file as a capture holding a file, or why it holds none;
    CdxError (``bad-cdx``) for a malformed line. What every CDX consumer does first."""
    if is_cdx_header(raw):
        return CaptureSkip(CdxStatus.SKIP_HEADER)
    cdx = parse_cdx_line(raw)
    skip = cdx.skip_reason()
    return cdx if skip is None else CaptureSkip(*skip, cdx=cdx)


def is_cdx_header(line: bytes | str) -> bool:
    if isinstance(line, bytes):
        return line.startswith((b" CDX ", b"CDX "))
    return line.startswith((" CDX ", "CDX "))


#: offsets and sizes past this many digits are no WARC's (2**63 has 19)
MAX_NUMBER_DIGITS = 19
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def parse_cdx_line(raw: bytes | str) -> CdxRecord:
    """One CDX line; CdxError (status ``bad-cdx``) saying what is wrong with it."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CdxError(f"invalid UTF-8 at byte {e.start}") from None
    line = raw.rstrip("\r\n")
    if _CONTROL.search(line):
        raise CdxError("control characters (NUL, tab, ...) inside the line")
    fields = line.split(" ")
    if len(fields) != CDX_COLUMNS:
        raise CdxError(f"{len(fields)} space-separated fields, expected {CDX_COLUMNS}")
    surt, dt, url, mime, status, digest, _redirect, _meta, c_size, offset, warc = fields
    if len(dt) != 14 or not (dt.isascii() and dt.isdigit()):
        raise CdxError(f"timestamp {dt!r} is not 14 digits")
    if not url or url == "-" or not surt or surt == "-":
        raise CdxError("missing url or surt")
    if status == "-":
        status_code = None
    elif len(status) == 3 and status.isascii() and status.isdigit():
        status_code = int(status)
    else:
        raise CdxError(f"status {status!r} is not an HTTP status code")
    try:
        sha1 = sha1_hex(digest)
    except RecordError:
        raise CdxError(f"digest {digest!r} is not a sha1") from None
    for name, value in (("compressed size", c_size), ("offset", offset)):
        if not (value.isascii() and value.isdigit()):
            raise CdxError(f"{name} {value[:40]!r} is not a non-negative integer")
        if len(value) > MAX_NUMBER_DIGITS:
            raise CdxError(f"{name} has {len(value):,} digits (at most {MAX_NUMBER_DIGITS})")
    if not warc or warc == "-":
        raise CdxError("missing WARC file name")
    return CdxRecord(surt=surt, datetime=dt, url=url, mimetype=mime, status_code=status_code,
                     sha1hex=sha1, warc_csize=int(c_size), warc_offset=int(offset),
                     warc_path=warc)


def surt(url: str) -> str:
    """Sort-friendly URI Reordering Transform, as CDX files key captures:
    ``https://www.Example.org/a?b=1&a=2`` → ``org,example)/a?a=2&b=1``.

    Ours, not the ``surt`` package: that one is AGPL-3.0 (docs/dependencies.md)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    key = ",".join(reversed(host.split(".")))
    if parts.port and parts.port not in (80, 443):
        key += f":{parts.port}"
    path = (parts.path or "/").lower()
    query = "&".join(sorted(parts.query.lower().split("&"))) if parts.query else ""
    return f"{key}){path}" + (f"?{query}" if query else "")
