"""What a PDF says about itself: pages, page-0 size, version, document info and XMP
metadata, file identifiers, full text and word count, and page-0 thumbnails.

Built on PDFium (pypdfium2): native code on untrusted files, so callers that
process crawled files run it in the sandbox (docs/pdf.md); here every failure
PDFium reports becomes a status (``not-pdf``, ``bad-pdf``, ``encrypted``,
``empty-pdf``, ``empty-page0``, ``text-too-large``, ``parse-error``; docs/pdf.md,
"PDF extraction", says what each means).
"""

from __future__ import annotations

import ctypes
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from sandcrawler.config import PdfSettings
from sandcrawler.core.mime import sniff_mime
from sandcrawler.core.pdf_bytes import read_at, read_xmp, scan
from sandcrawler.core.textfix import readable
from sandcrawler.process.memory import anon_rss
from sandcrawler.records.statuses import PdfStatus, SandboxStatus

# The defaults are the settings' ([pdf] in config/sections.py): one place for them.
_DEFAULTS = PdfSettings()
#: thumbnail name -> width in pixels (height follows the page's aspect ratio)
DEFAULT_THUMBNAILS = _DEFAULTS.thumbnails
LISTING_WIDTH = _DEFAULTS.listing_width  # the JPEG for listings
DEFAULT_MAX_TEXT_CHARS = _DEFAULTS.max_text_chars
_INFO_KEYS = {"Title": "title", "Author": "author", "Subject": "subject",
              "Keywords": "keywords", "Creator": "creator", "Producer": "producer",
              "CreationDate": "created", "ModDate": "modified"}
_WORD = re.compile(r"\w+")
_EMPTY_PAGE_TREE = re.compile(
    rb"/Type\s*/Pages\b[^>]*?/Count\s+0\b|/Count\s+0\b[^>]*?/Type\s*/Pages\b"
)
_PAGE_OBJECT = re.compile(rb"/Type\s*/Page\b(?!s)")
_ENCRYPT = re.compile(rb"/Encrypt\b")

#: pixels of the one page-0 render the thumbnails are scaled from (500 x 8000)
MAX_RENDER_PIXELS = 4_000_000
#: PDFium keeps what each loaded page drew (images) until its document closes; the
#: text loop opens the document afresh once this much more memory is in use.
REOPEN_GROWTH = 128 * 2**20


@dataclass
class PdfExtract:
    #: the extraction's, or the sandbox's when it stopped the call (``ProcessPdfWorker``)
    status: PdfStatus | SandboxStatus
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
    """Extract everything from a PDF in memory or in a file; never raises for a bad
    file. A file is read by PDFium as it needs it and scanned in windows, never
    loaded or mapped whole: memory does not grow with the file."""
    src = bytes(source) if isinstance(source, bytes | bytearray | memoryview) else str(source)
    try:
        head = read_at(src, 0, 8192)
        if not head:
            return PdfExtract(PdfStatus.NOT_PDF, error="the file is empty")
        if sniff_mime(head) != "application/pdf":
            return PdfExtract(PdfStatus.NOT_PDF, error=f"the bytes are {sniff_mime(head)}")
        try:
            doc = pdfium.PdfDocument(src)
        except pdfium.PdfiumError as e:
            return _open_failure(src, e)
        try:
            return _extract(doc, src, thumbnails if thumbnails is not None
                            else DEFAULT_THUMBNAILS, listing_width, max_text_chars)
        except pdfium.PdfiumError as e:
            return PdfExtract(PdfStatus.PARSE_ERROR, error=str(e))
        finally:
            doc.close()
    except OSError as e:
        return PdfExtract(PdfStatus.BAD_PDF, error=f"cannot read {_name(source)}: {e.strerror}")


def _name(source: bytes | str | Path) -> str:
    """The source as a message names it: a path, never a PDF's bytes."""
    return "the PDF in memory" if isinstance(source, bytes) else str(source)


def _open_failure(src: bytes | str, e: pdfium.PdfiumError) -> PdfExtract:
    # PDFium's error code is its thread's "last error": a failure that sets none
    # (a document without pages) reports whatever failed before. So the file
    # itself decides: an /Encrypt entry, or a page tree that declares no pages
    # and has no page objects.
    # The status must follow from the bytes alone, never from an error code a
    # previous file left behind: a file that does not open and has an /Encrypt
    # entry is encrypted, whatever code PDFium reports.
    # (Page dictionaries are never encrypted, so an encrypted file shows its pages.)
    if scan(src, _EMPTY_PAGE_TREE) and not scan(src, _PAGE_OBJECT):
        return PdfExtract(PdfStatus.EMPTY_PDF, page_count=0, error="no pages (empty page tree)")
    if scan(src, _ENCRYPT):
        return PdfExtract(PdfStatus.ENCRYPTED, error="the PDF needs a password")
    return PdfExtract(PdfStatus.BAD_PDF, error=str(e))


def _info(doc: pdfium.PdfDocument) -> dict[str, str]:
    """The document information dictionary's text fields. Read here rather than
    with pypdfium2's ``get_metadata_dict``, which decodes strictly: a title that is
    UTF-16 with a lone surrogate (PDF strings are bytes; writers get this wrong)
    raised on every run of that file."""
    out = {}
    for key, name in _INFO_KEYS.items():
        wanted = key.encode("ascii") + b"\x00"
        size = pdfium_c.FPDF_GetMetaText(doc, wanted, None, 0)
        if size <= 2:  # the UTF-16 terminator alone: no such field
            continue
        buffer = ctypes.create_string_buffer(size)
        pdfium_c.FPDF_GetMetaText(doc, wanted, buffer, size)
        # readable: writers put cp1252 or UTF-8 bytes where PDFDocEncoding belongs
        value = readable(buffer.raw[:size - 2].decode("utf-16-le", errors="replace").strip())
        if value:
            out[name] = value
    return out


def _extract(doc: pdfium.PdfDocument, src: bytes | str, sizes: dict[str, int],
             listing_width: int | None, max_text_chars: int) -> PdfExtract:
    page_count = len(doc)
    out = PdfExtract(PdfStatus.SUCCESS, page_count=page_count)
    version = doc.get_version()
    out.pdf_version = f"{version // 10}.{version % 10}" if version else None
    out.info = _info(doc)
    out.xmp = read_xmp(src)
    out.permanent_id = _identifier(doc, 0)
    out.update_id = _identifier(doc, 1)
    if out.page_count == 0:
        out.status = PdfStatus.EMPTY_PDF
        return out
    page0 = doc[0]
    out.page0_width, out.page0_height = (round(x, 2) for x in page0.get_size())
    if not out.page0_width or not out.page0_height:
        out.status, out.error = PdfStatus.EMPTY_PAGE0, "page 0 has no area"
        return out
    thumbs, blank = _thumbnails(page0, sizes, listing_width)
    page0.close()
    out.thumbnails = thumbs
    if blank:
        out.status, out.error = PdfStatus.EMPTY_PAGE0, "page 0 renders as one flat colour"
    texts: list[str] = []
    total = 0
    for text in _page_texts(doc, src, page_count):
        total += len(text)
        if total > max_text_chars:
            out.status = PdfStatus.TEXT_TOO_LARGE
            out.error = f"more than {max_text_chars:,} characters of text"
            return out
        texts.append(text)
    out.text = "\f".join(texts)  # form feed between pages, as pdftotext does
    out.word_count = len(_WORD.findall(out.text))
    return out


def _page_texts(doc: pdfium.PdfDocument, src: bytes | str, count: int) -> Iterator[str]:
    """Each page's text, in order. PDFium keeps what a loaded page drew (its images)
    until the document closes; once the pages read so far hold more than
    REOPEN_GROWTH, the document is closed (``doc`` too: closing twice is a no-op
    in pypdfium2) and opened afresh. Memory is then bounded by the images of a few
    pages, not by the file: a 500-page scan costs what a few of its pages cost."""
    current = doc
    base = anon_rss()
    try:
        for i in range(count):
            if anon_rss() - base > REOPEN_GROWTH:
                current.close()
                current = pdfium.PdfDocument(src)
                base = anon_rss()
            page = current[i]
            textpage = page.get_textpage()
            text = textpage.get_text_bounded()
            textpage.close()
            page.close()
            yield text
    finally:
        if current is not doc:
            current.close()



def _identifier(doc: pdfium.PdfDocument, which: int) -> str | None:
    try:
        raw = doc.get_identifier(which)
    except pdfium.PdfiumError:
        return None
    return raw.hex() if raw else None


def _thumbnails(page: Any, sizes: dict[str, int],
                listing_width: int | None) -> tuple[dict[str, bytes], bool]:
    width_pt, height_pt = page.get_size()
    largest = max([*sizes.values(), listing_width or 0])
    if largest <= 0:
        return {}, False
    scale = largest / width_pt
    # A page far taller than it is wide (a MediaBox of 2**31 points) would be
    # gigabytes at thumbnail width: only its top, within the pixel budget, is drawn.
    keep_pt = min(height_pt, MAX_RENDER_PIXELS / largest / scale)
    image = page.render(scale=scale, crop=(0, height_pt - keep_pt, 0, 0)).to_pil().convert("RGB")
    lo, hi = image.convert("L").getextrema()
    # a flat top of a cut page says nothing of the rest of it
    blank = lo == hi and keep_pt >= height_pt
    out: dict[str, bytes] = {}
    for name, width in sizes.items():
        out[name] = _encode(image, width, "PNG")
    if listing_width:
        out["thumb-listing"] = _encode(image, listing_width, "JPEG")
    return out, blank


def _encode(image: Any, width: int, fmt: str) -> bytes:
    height = max(1, round(image.height * width / image.width))
    scaled = image if image.width == width else image.resize((width, height),
                                                             Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    # No PNG optimize: it tripled the encoding time for files no smaller (measured
    # on the real papers, bench/perf/process_pdf.py).
    options = {} if fmt == "PNG" else {"quality": 85}
    scaled.save(buf, format=fmt, **options)
    return buf.getvalue()
