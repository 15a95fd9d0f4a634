"""Reading a PDF's raw bytes without parsing it: scans for a pattern, and its
XMP metadata packet. The file may be anything (a crawled PDF), so the bytes are
read in windows that overlap by more than any pattern looked for, and memory
stays flat whatever the file size; an XMP packet is then read on its own, up to
MAX_XMP. Both the PDF processing (``pdf/info.py``) and the extraction cascade
(the DOI of the file's metadata) read them here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

SCAN_CHUNK = 8 * 2**20
SCAN_OVERLAP = 64 * 1024
MAX_XMP = 4 * 2**20
_XMP_START = b"<x:xmpmeta"
_XMP_PACKET = re.compile(rb"<x:xmpmeta\b.*?</x:xmpmeta>", re.DOTALL)


def read_at(src: bytes | str, offset: int, size: int) -> bytes:
    if isinstance(src, bytes):
        return src[offset:offset + size]
    with open(src, "rb") as f:
        f.seek(offset)
        return f.read(size)


def windows(src: bytes | str) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) windows over the source; each overlaps the one before by
    SCAN_OVERLAP bytes, so a match shorter than that is never cut in two."""
    if isinstance(src, bytes):
        yield 0, src
        return
    with open(src, "rb") as f:
        offset, tail = 0, b""
        while block := f.read(SCAN_CHUNK):
            window = tail + block
            yield offset - len(tail), window
            tail = window[-SCAN_OVERLAP:]
            offset += len(block)


def scan(src: bytes | str, pattern: re.Pattern[bytes]) -> bool:
    """Whether ``pattern`` (shorter than SCAN_OVERLAP) is in the file's bytes."""
    return any(pattern.search(window) for _, window in windows(src))


_XMP_FIELDS = {
    "title": ("dc:title",),
    "creator": ("dc:creator",),
    "description": ("dc:description",),
    "creator_tool": ("xmp:CreatorTool",),
    "producer": ("pdf:Producer",),
    "created": ("xmp:CreateDate",),
    "modified": ("xmp:ModifyDate",),
    "doi": ("prism:doi", "pdfx:doi", "crossmark:DOI"),
}


def read_xmp(src: bytes | str | Path) -> dict[str, str]:
    """Fields of the document's XMP packet. XMP packets are written uncompressed so
    that tools can find them by scanning (the XMP specification's packet wrapper);
    the last complete packet in the file is the document's (incremental updates
    append)."""
    src = src if isinstance(src, bytes) else str(src)
    starts: list[int] = []
    for offset, window in windows(src):
        at = window.find(_XMP_START)
        while at >= 0:
            if not starts or offset + at > starts[-1]:  # windows overlap
                starts.append(offset + at)
                del starts[:-8]  # the last few are enough
            at = window.find(_XMP_START, at + 1)
    for start in reversed(starts):
        packet = _XMP_PACKET.match(read_at(src, start, MAX_XMP))
        if packet:
            break
    else:
        return {}
    try:
        # defused: a packet is the file's, and the file is anyone's (no DTD, no entities)
        root = fromstring(packet.group(0), forbid_dtd=True)
    except (ElementTree.ParseError, DefusedXmlException):
        return {}
    ns = {
        "dc": "http://purl.org/dc/elements/1.1/", "xmp": "http://ns.adobe.com/xap/1.0/",
        "pdf": "http://ns.adobe.com/pdf/1.3/", "prism": "http://prismstandard.org/namespaces/basic/2.0/",
        "pdfx": "http://ns.adobe.com/pdfx/1.3/", "crossmark": "http://crossref.org/crossmark/1.0/",
        "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    }
    found: dict[str, str] = {}
    for name, paths in _XMP_FIELDS.items():
        for path in paths:
            prefix, local = path.split(":")
            uri = ns[prefix]
            for el in root.iter(f"{{{uri}}}{local}"):
                # simple property text, or an rdf:Alt/Seq/Bag's first rdf:li
                li = el.find(".//rdf:li", ns)
                text = (li.text if li is not None else el.text) or ""
                if text.strip() and text.strip() != "()":  # "()": an empty PDF string
                    found[name] = _unescape_pdf_string(text.strip())
                    break
            else:
                for desc in root.iter(f"{{{ns['rdf']}}}Description"):
                    value = desc.get(f"{{{uri}}}{local}")
                    if value and value.strip():
                        found[name] = value.strip()
                        break
            if name in found:
                break
    return found


_PDF_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)


def _unescape_pdf_string(text: str) -> str:
    """Some producers write PDF string syntax into XMP (``\\376\\377`` then
    UTF-16BE with octal escapes); such values are decoded, others returned as they are."""
    if not text.startswith("\\376\\377"):
        return text
    try:
        raw = _PDF_ESCAPE.sub(
            lambda m: chr(int(m.group(1), 8)) if m.group(1).isdigit() else m.group(1), text
        ).encode("latin-1")
        return raw[2:].decode("utf-16-be")
    except (UnicodeError, ValueError):
        return text
