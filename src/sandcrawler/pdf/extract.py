"""What a PDF says about itself: pages, page-0 size, version, document info and XMP
metadata, file identifiers, full text and word count, and page-0 thumbnails.

Built on PDFium (pypdfium2). This runs native code on untrusted files: callers
that process crawled files run it in a separate process with time and memory
limits (see docs/pdf.md); here every failure PDFium reports becomes a status.

Statuses: ``success``; ``not-pdf`` (the bytes are not a PDF); ``bad-pdf`` (PDFium
cannot open it); ``encrypted`` (a password is needed); ``empty-pdf`` (no
pages); ``empty-page0`` (page 0 has no area, or renders as one flat colour);
``text-too-large`` (more text than ``max_text_chars``: metadata kept, text
dropped); ``parse-error`` (PDFium failed part-way).
"""

from __future__ import annotations

import io
import mmap
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from sandcrawler.filemeta import sniff_mime

#: thumbnail name -> width in pixels (height follows the page's aspect ratio)
DEFAULT_THUMBNAILS = {"thumb-small": 120, "thumb-medium": 250, "thumb-large": 500}
LISTING_WIDTH = 180  # the JPEG for listings
DEFAULT_MAX_TEXT_CHARS = 5_000_000
_INFO_KEYS = {"Title": "title", "Author": "author", "Subject": "subject",
              "Keywords": "keywords", "Creator": "creator", "Producer": "producer",
              "CreationDate": "created", "ModDate": "modified"}
_XMP_PACKET = re.compile(rb"<x:xmpmeta\b.*?</x:xmpmeta>", re.DOTALL)
_WORD = re.compile(r"\w+")
_EMPTY_PAGE_TREE = re.compile(
    rb"/Type\s*/Pages\b[^>]*?/Count\s+0\b|/Count\s+0\b[^>]*?/Type\s*/Pages\b"
)
_PAGE_OBJECT = re.compile(rb"/Type\s*/Page\b(?!s)")


@dataclass
class PdfExtract:
    status: str
    error: str | None = None
    page_count: int | None = None
    page0_width: float | None = None  # PDF points
    page0_height: float | None = None
    pdf_version: str | None = None
    info: dict[str, str] = field(default_factory=dict)
    xmp: dict[str, str] = field(default_factory=dict)
    permanent_id: str | None = None
    update_id: str | None = None
    text: str | None = None
    word_count: int | None = None
    #: resource kind -> image: thumb-small/-medium/-large PNGs, thumb-listing JPEG
    thumbnails: dict[str, bytes] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Everything but the text and the images (those go to the resource store)."""
        return {
            "status": self.status, "error": self.error, "page_count": self.page_count,
            "page0_width": self.page0_width, "page0_height": self.page0_height,
            "pdf_version": self.pdf_version, "info": self.info, "xmp": self.xmp,
            "permanent_id": self.permanent_id, "update_id": self.update_id,
            "word_count": self.word_count,
        }


def extract_pdf(
    source: bytes | str | Path,
    *,
    thumbnails: dict[str, int] | None = None,
    listing_width: int | None = LISTING_WIDTH,
    max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
) -> PdfExtract:
    """Extract everything from a PDF in memory or in a file (read by PDFium as it
    needs it, and scanned through a memory map: a large file is never copied into
    memory); never raises for a bad file."""
    if isinstance(source, bytes | bytearray | memoryview):
        return _extract_from(bytes(source), bytes(source), thumbnails, listing_width,
                             max_text_chars)
    try:
        with open(source, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return PdfExtract("not-pdf", error="the file is empty")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _extract_from(str(source), data, thumbnails, listing_width,
                                     max_text_chars)
    except OSError as e:
        return PdfExtract("bad-pdf", error=f"cannot read {source}: {e.strerror}")


def _extract_from(
    source: bytes | str,
    data: Any,
    thumbnails: dict[str, int] | None,
    listing_width: int | None,
    max_text_chars: int,
) -> PdfExtract:
    if sniff_mime(data[:8192]) != "application/pdf":
        return PdfExtract("not-pdf", error=f"the bytes are {sniff_mime(data[:8192])}")
    try:
        doc = pdfium.PdfDocument(source)
    except pdfium.PdfiumError as e:
        # PDFium's error code is its thread's "last error": a failure that sets none
        # (a document without pages) reports whatever failed before. So the file
        # itself confirms each reading: an /Encrypt entry, or a page tree that
        # declares no pages and has no page objects.
        password = getattr(e, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD
        if password and data.find(b"/Encrypt") >= 0:
            return PdfExtract("encrypted", error="the PDF needs a password")
        if _EMPTY_PAGE_TREE.search(data) and not _PAGE_OBJECT.search(data):
            return PdfExtract("empty-pdf", page_count=0, error="no pages (empty page tree)")
        return PdfExtract("bad-pdf", error=str(e))
    try:
        return _extract(doc, data, thumbnails if thumbnails is not None else DEFAULT_THUMBNAILS,
                        listing_width, max_text_chars)
    except pdfium.PdfiumError as e:
        return PdfExtract("parse-error", error=str(e))
    finally:
        doc.close()


def _extract(doc: pdfium.PdfDocument, data: Any, sizes: dict[str, int],
             listing_width: int | None, max_text_chars: int) -> PdfExtract:
    out = PdfExtract("success", page_count=len(doc))
    version = doc.get_version()
    out.pdf_version = f"{version // 10}.{version % 10}" if version else None
    out.info = {_INFO_KEYS[k]: v.strip() for k, v in doc.get_metadata_dict().items()
                if k in _INFO_KEYS and v and v.strip()}
    out.xmp = read_xmp(data)
    out.permanent_id = _identifier(doc, 0)
    out.update_id = _identifier(doc, 1)
    if out.page_count == 0:
        out.status = "empty-pdf"
        return out
    page0 = doc[0]
    out.page0_width, out.page0_height = (round(x, 2) for x in page0.get_size())
    if not out.page0_width or not out.page0_height:
        out.status, out.error = "empty-page0", "page 0 has no area"
        return out
    thumbs, blank = _thumbnails(page0, sizes, listing_width)
    out.thumbnails = thumbs
    if blank:
        out.status, out.error = "empty-page0", "page 0 renders as one flat colour"
    texts: list[str] = []
    total = 0
    for i in range(out.page_count):
        page = doc[i]
        textpage = page.get_textpage()
        text = textpage.get_text_bounded()
        textpage.close()
        page.close()
        total += len(text)
        if total > max_text_chars:
            out.status = "text-too-large"
            out.error = f"more than {max_text_chars:,} characters of text"
            return out
        texts.append(text)
    out.text = "\f".join(texts)  # form feed between pages, as pdftotext does
    out.word_count = len(_WORD.findall(out.text))
    return out


def _identifier(doc: pdfium.PdfDocument, which: int) -> str | None:
    try:
        raw = doc.get_identifier(which)
    except pdfium.PdfiumError:
        return None
    return raw.hex() if raw else None


def _thumbnails(page: Any, sizes: dict[str, int],
                listing_width: int | None) -> tuple[dict[str, bytes], bool]:
    width_pt = page.get_size()[0]
    largest = max([*sizes.values(), listing_width or 0])
    if largest <= 0:
        return {}, False
    image = page.render(scale=largest / width_pt).to_pil().convert("RGB")
    lo, hi = image.convert("L").getextrema()
    blank = lo == hi
    out: dict[str, bytes] = {}
    for name, width in sizes.items():
        out[name] = _encode(image, width, "PNG")
    if listing_width:
        out["thumb-listing"] = _encode(image, listing_width, "JPEG")
    return out, blank


def _encode(image: Any, width: int, fmt: str) -> bytes:
    from PIL import Image

    height = max(1, round(image.height * width / image.width))
    scaled = image if image.width == width else image.resize((width, height),
                                                             Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    options = {"optimize": True} if fmt == "PNG" else {"quality": 85}
    scaled.save(buf, format=fmt, **options)
    return buf.getvalue()


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


def read_xmp(data: Any) -> dict[str, str]:
    """Fields of the document's XMP packet. XMP packets are written uncompressed so
    that tools can find them by scanning (the XMP specification's packet wrapper);
    the last packet in the file is the document's (incremental updates append)."""
    packets = _XMP_PACKET.findall(data)
    if not packets:
        return {}
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(packets[-1])
    except ElementTree.ParseError:
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
