"""CDX index lines in the 11-column format of wayback/heritrix crawls:

    surt  timestamp  url  mime  status  sha1(base32)  redirect  meta  c_size  offset  warc

Fields are separated by single spaces; ``-`` means "none". A file may begin with
a ``" CDX N b a m s k r M S V g"`` header line naming the columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandcrawler.errors import RecordError
from sandcrawler.identifiers import sha1_hex

CDX_COLUMNS = 11
REVISIT_MIME = "warc/revisit"


class CdxError(RecordError):
    status = "bad-cdx"


@dataclass(frozen=True, slots=True)
class CdxLine:
    surt: str
    datetime: str  # 14 digits, YYYYMMDDhhmmss
    url: str
    mime: str  # as recorded, not normalised
    status_code: int | None  # None for "-" (revisits, some non-HTTP records)
    sha1hex: str
    warc_csize: int
    warc_offset: int
    warc_path: str

    @property
    def is_revisit(self) -> bool:
        return self.mime == REVISIT_MIME

    def skip_reason(self) -> tuple[str, str | None] | None:
        """(status, detail) when this capture holds no usable file: a revisit
        (no payload of its own) or an answer other than 200; else None."""
        if self.is_revisit:
            return "skip-revisit", None
        if self.status_code != 200:
            return "skip-status", f"HTTP status {self.status_code or '-'}"
        return None

    def cell(self) -> dict[str, str]:
        """The ``file:cdx`` cell of the PDF table (all values strings, as the seed has it)."""
        return {
            "surt": self.surt,
            "url": self.url,
            "dt": self.datetime,
            "warc": self.warc_path,
            "offset": str(self.warc_offset),
            "c_size": str(self.warc_csize),
        }


@dataclass(frozen=True, slots=True)
class CaptureSkip:
    """Why a line names no usable file: skip-header, skip-revisit or skip-status."""

    status: str
    detail: str | None = None
    cdx: CdxLine | None = None  # None for a header line


def read_capture(raw: bytes | str) -> CdxLine | CaptureSkip:
    """One line of a CDX file as a capture holding a file, or why it holds none;
    CdxError (``bad-cdx``) for a malformed line. What every CDX consumer does first."""
    if is_cdx_header(raw):
        return CaptureSkip("skip-header")
    cdx = parse_cdx_line(raw)
    skip = cdx.skip_reason()
    return cdx if skip is None else CaptureSkip(*skip, cdx=cdx)


def is_cdx_header(line: bytes | str) -> bool:
    if isinstance(line, bytes):
        return line.startswith((b" CDX ", b"CDX "))
    return line.startswith((" CDX ", "CDX "))


def parse_cdx_line(raw: bytes | str) -> CdxLine:
    """One CDX line; CdxError (status ``bad-cdx``) saying what is wrong with it."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CdxError(f"invalid UTF-8 at byte {e.start}") from None
    fields = raw.rstrip("\r\n").split(" ")
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
            raise CdxError(f"{name} {value!r} is not a non-negative integer")
    if not warc or warc == "-":
        raise CdxError("missing WARC file name")
    return CdxLine(surt, dt, url, mime, status_code, sha1, int(c_size), int(offset), warc)
