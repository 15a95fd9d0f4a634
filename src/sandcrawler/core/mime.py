"""MIME types: one spelling per kind of content, and the kind of content that
starts with some bytes. Both live here and nowhere else.

``normalize_mime`` reduces what servers say (``application/x-pdf``,
``Application/PDF; charset=binary``) to the one spelling stored in the PDF table
and in results. ``sniff_mime(head)`` names content from its first bytes, never
from a file name: our own signatures, markup, text shapes, then puremagic's
magic numbers (docs/architecture.md, "MIME types"). JATS is XML here;
``is_jats`` tells it from other XML.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable

import puremagic

OCTET_STREAM = "application/octet-stream"
#: how much of a file the sniffer reads
SNIFF_BYTES = 8192
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

#: aliases servers (and puremagic) send -> the normal form
_ALIASES = {
    "application/x-pdf": "application/pdf",
    "application/acrobat": "application/pdf",
    "applications/pdf": "application/pdf",
    "text/pdf": "application/pdf",
    "text/x-pdf": "application/pdf",
    "application/ps": "application/postscript",
    "application/x-postscript": "application/postscript",
    "text/xml": "application/xml",
    "application/x-xml": "application/xml",
    "application/jats+xml": "application/xml",
    "application/xhtml+xml": "text/html",
    "application/html": "text/html",
    "application/x-gzip": "application/gzip",
    "application/tar": "application/x-tar",
    "application/csv": "text/csv",
    "text/comma-separated-values": "text/csv",
    "text/x-csv": "text/csv",
    "text/tsv": "text/tab-separated-values",
    "text/x-tsv": "text/tab-separated-values",
    "application/netcdf": "application/x-netcdf",
    "application/parquet": "application/vnd.apache.parquet",
    "application/x-parquet": "application/vnd.apache.parquet",
    "binary/octet-stream": OCTET_STREAM,
    "application/octetstream": OCTET_STREAM,
    "application/download": OCTET_STREAM,
    "application/x-download": OCTET_STREAM,
    "application/force-download": OCTET_STREAM,
    "application/unknown": OCTET_STREAM,
}

#: placeholders for "no type" in CDX files and headers
_UNKNOWN = {"", "-", "unk", "unknown", "none", "null"}

_TOKEN = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


def normalize_mime(raw: str | None) -> str:
    """Lower-case ``type/subtype`` without parameters, aliases mapped to one form;
    anything unknown or malformed is ``application/octet-stream``."""
    if raw is None:
        return OCTET_STREAM
    base = raw.split(";", 1)[0].strip().lower()
    if base in _UNKNOWN:
        return OCTET_STREAM
    base = _ALIASES.get(base, base)
    return base if _TOKEN.match(base) else OCTET_STREAM


# --- sniffing ------------------------------------------------------------------------------


def _zip_kind(head: bytes) -> str:
    """A zip container's first entry tells EPUB (its ``mimetype`` file, stored
    first by the standard) and Word (a ``word/`` part) from other zips."""
    if head[30:58] == b"mimetypeapplication/epub+zip":
        return "application/epub+zip"
    if b"word/" in head:
        return DOCX
    return "application/zip"


def _hdf5(head: bytes) -> bool:
    # the superblock is at 0, or after a user block of 512 bytes times a power of 2
    return any(head[at:at + 8] == b"\x89HDF\r\n\x1a\n" for at in (0, 512, 1024, 2048, 4096))


#: (test, MIME type), first match wins: what puremagic does not name, or not well
_SIGNATURES: tuple[tuple[Callable[[bytes], bool], str | Callable[[bytes], str]], ...] = (
    # PDF readers accept the header anywhere in the first KiB (junk before it is
    # common in crawled files)
    (lambda h: b"%PDF-" in h[:1024], "application/pdf"),
    # with a leading ^D, as some drivers write; the DOS EPS binary header
    (lambda h: h.startswith((b"%!PS", b"\x04%!PS", b"\xc5\xd0\xd3\xc6")), "application/postscript"),
    (lambda h: h.startswith(b"{\\rtf"), "application/rtf"),
    (lambda h: h.startswith(b"PK\x03\x04"), _zip_kind),
    (_hdf5, "application/x-hdf5"),  # NetCDF-4 files are HDF5 files
    (lambda h: h[:4] in (b"CDF\x01", b"CDF\x02", b"CDF\x05"), "application/x-netcdf"),  # classic
    (lambda h: h.startswith(b"PAR1"), "application/vnd.apache.parquet"),
    (lambda h: h.startswith(b"WARC/"), "application/warc"),
)

_BOM = b"\xef\xbb\xbf"
_HTML_START = re.compile(rb"^(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body|meta|title)[\s>]",
                         re.IGNORECASE | re.DOTALL)
_XML_START = re.compile(rb"^(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*|<\?[^>]*\?>\s*)*<(!doctype\s+)?"
                        rb"([a-z_][\w.:-]*)", re.IGNORECASE | re.DOTALL)
_JATS_HINTS = (b"jats", b"-//nlm//dtd", b"journalpublishing", b"archivearticle")
#: magic numbers shorter than this match random data too often to be evidence
_MIN_MAGIC = 3
#: lines of a text looked at for a table: enough evidence, at a bounded cost
_TABLE_LINES = 64


def sniff_mime(head: bytes) -> str:
    """The MIME type of content starting with ``head`` (give at least 8 KiB; no
    more than ``SNIFF_BYTES`` is looked at), in the normal form."""
    cut = len(head) >= SNIFF_BYTES  # the sample may end inside a line
    head = head[:SNIFF_BYTES]
    for test, mime in _SIGNATURES:
        if test(head):
            return mime if isinstance(mime, str) else mime(head)
    text = head.removeprefix(_BOM).lstrip()
    if text.startswith(b"<") and (markup := _markup_mime(text)):
        return markup
    if _is_text(head):
        if text[:1] in (b"{", b"["):
            return "application/json"
        return _table_mime(text, cut) or "text/plain"
    return _magic_mime(head)


def _markup_mime(text: bytes) -> str | None:
    if _HTML_START.match(text):
        return "text/html"
    m = _XML_START.match(text)
    if m:
        # XHTML is served and read as HTML
        return "text/html" if m.group(4).lower() == b"html" else "application/xml"
    return None


def _table_mime(text: bytes, cut: bool) -> str | None:
    """``text/tab-separated-values`` or ``text/csv`` when the sample's first
    complete lines (a header and two rows at least, as libmagic asks; at most
    ``_TABLE_LINES``) all have the same number of fields, two or more, quoted
    as CSV quotes; None otherwise."""
    lines = text.decode("utf-8", "ignore").splitlines(keepends=True)
    if cut and lines and not lines[-1].endswith(("\n", "\r")):
        lines.pop()
    lines = lines[:_TABLE_LINES]
    if len(lines) < 3:
        return None
    for delimiter, mime in (("\t", "text/tab-separated-values"), (",", "text/csv")):
        if delimiter not in lines[0]:
            continue
        try:
            widths = {len(row) for row in csv.reader(lines, delimiter=delimiter, strict=True)
                      if row}
        except csv.Error:
            continue
        if len(widths) == 1 and widths.pop() >= 2:
            return mime
    return None


def _magic_mime(head: bytes) -> str:
    """puremagic's best header match with a MIME type, in the normal form."""
    try:
        matches = puremagic.magic_string(head)
    except (puremagic.PureError, ValueError):  # nothing matched; empty input
        return OCTET_STREAM
    for m in matches:  # best first
        # footer signatures (negative offsets) would be matched against the
        # head's tail: not evidence
        if m.offset >= 0 and m.mime_type.strip() and len(m.byte_match) >= _MIN_MAGIC:
            return normalize_mime(m.mime_type)
    return OCTET_STREAM


def _is_text(head: bytes) -> bool:
    if not head or b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        # A multi-byte character cut at the end of the sample is still text.
        if e.start < len(head) - 3:
            return False
    return True


def is_jats(head: bytes) -> bool:
    """XML that is JATS (PubMed Central's and most publishers' article XML)."""
    lower = head[:SNIFF_BYTES].lower()
    if any(hint in lower for hint in _JATS_HINTS):
        return True
    m = _XML_START.match(lower.lstrip(_BOM).lstrip())
    return bool(m and m.group(4) == b"article" and b"<front" in lower)
