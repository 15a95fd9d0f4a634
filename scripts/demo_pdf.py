"""A small PDF writer for the offline demo's documents (``scripts/make_demo.py``).

PDF 1.4 with the standard fonts Helvetica and Helvetica-Bold (WinAnsiEncoding, so
nothing is embedded), one uncompressed content stream per page, and the document
information dictionary: a file that is a pure function of its text, reproduced
byte for byte. Paragraphs of styled runs are wrapped by the fonts' real advance
widths, which PDFium (pypdfium2, a dependency of sandcrawler) knows.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache
from typing import Any

import pypdfium2.raw as pdfium_c  # the standard fonts' metrics

PAGE_W, PAGE_H = 612.0, 792.0  # US Letter, as PLOS, PeerJ and eLife print
LEFT, RIGHT, TOP, BOTTOM = 64.0, 548.0, 730.0, 72.0
FONTS = {"F1": "Helvetica", "F2": "Helvetica-Bold"}


@cache
def _pdfium_document() -> Any:
    return pdfium_c.FPDF_CreateNewDocument()


@cache
def glyph_width(char: str, font: str) -> float:
    """The advance width of ``char`` in a standard font, per 1000 units of size:
    PDFium's built-in metrics, measured between two x's (a lone glyph's bounds
    are its ink, and a space has none)."""
    doc = _pdfium_document()

    def span(text: str) -> float:
        obj = pdfium_c.FPDFPageObj_NewTextObj(doc, FONTS[font].encode(), 1000.0)
        buf = ctypes.create_string_buffer((text + "\0").encode("utf-16-le"))
        pdfium_c.FPDFText_SetText(obj, ctypes.cast(buf, pdfium_c.FPDF_WIDESTRING))
        box = [ctypes.c_float() for _ in range(4)]
        pdfium_c.FPDFPageObj_GetBounds(obj, *box)
        pdfium_c.FPDFPageObj_Destroy(obj)
        return box[2].value - box[0].value

    return round(span(f"x{char}x") - span("xx"))


def text_width(text: str, font: str, size: float) -> float:
    return sum(glyph_width(c, font) for c in text) * size / 1000


def pdf_string(text: str) -> str:
    """A PDF literal string in WinAnsiEncoding (the standard fonts' encoding here)."""
    out = []
    for byte in text.encode("cp1252"):  # a character outside it is a data error: say so
        if byte in b"()\\":
            out.append("\\" + chr(byte))
        elif 32 <= byte < 127:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return "(" + "".join(out) + ")"


def pdf_text_string(text: str) -> str:
    """A text string of the document information dictionary: UTF-16BE with its BOM."""
    return "<FEFF" + text.encode("utf-16-be").hex().upper() + ">"


@dataclass(frozen=True)
class Run:
    text: str
    font: str = "F1"
    size: float = 10.0
    rise: float = 0.0  # superscripts


class PdfLayout:
    """Paragraphs of styled runs set in lines on pages, top to bottom."""

    def __init__(self, header: str) -> None:
        self.header = header
        self.pages: list[list[str]] = []
        self.y = 0.0
        self._new_page()

    def _new_page(self) -> None:
        self.pages.append([])
        self.y = TOP

    def space(self, points: float) -> None:
        self.y -= points

    def page_break(self) -> None:
        """What follows starts a new page (the body after the first page's header)."""
        self._new_page()

    def paragraph(self, runs: list[Run], leading: float, indent: float = 0.0,
                  hanging: float = 0.0, keep: float = 0.0) -> None:
        """Wrap ``runs`` at spaces into the column; ``hanging`` indents every line
        after the first; ``keep``: points that must fit below the first line (a
        heading is not left alone at the foot of a page)."""
        words: list[list[Run]] = [[]]
        for run in runs:
            for i, piece in enumerate(run.text.split(" ")):
                if i:
                    words.append([])
                if piece:
                    words[-1].append(Run(piece, run.font, run.size, run.rise))
        lines: list[list[list[Run]]] = [[]]
        width = 0.0
        for word in (w for w in words if w):
            space = text_width(" ", word[0].font, word[0].size) if lines[-1] else 0.0
            w = sum(text_width(r.text, r.font, r.size) for r in word)
            avail = RIGHT - LEFT - indent - (hanging if len(lines) > 1 else 0.0)
            if lines[-1] and width + space + w > avail:
                lines.append([])
                width, space = 0.0, 0.0
            lines[-1].append(word)
            width += space + w
        for number, line in enumerate(lines):
            if self.y - leading - (keep if number == 0 else 0.0) < BOTTOM:
                self._new_page()
            self.y -= leading
            x = LEFT + indent + (hanging if number else 0.0)
            self.pages[-1].append(self._line(x, self.y, line))

    @staticmethod
    def _line(x: float, y: float, words: list[list[Run]]) -> str:
        ops = [f"BT {x:.2f} {y:.2f} Td"]
        state: tuple[str, float, float] | None = None
        for i, word in enumerate(words):
            for j, run in enumerate(word):
                text = (" " if i and j == 0 else "") + run.text
                if state != (run.font, run.size, run.rise):
                    ops.append(f"/{run.font} {run.size:g} Tf {run.rise:g} Ts")
                    state = (run.font, run.size, run.rise)
                ops.append(f"{pdf_string(text)} Tj")
        ops.append("ET")
        return " ".join(ops)

    def streams(self) -> list[bytes]:
        count = len(self.pages)
        out = []
        footer = "Demonstration rendering of CC BY metadata - page %d of %d"
        for number, ops in enumerate(self.pages, 1):
            furniture = [
                f"BT /F1 8 Tf {LEFT:.2f} 752.00 Td {pdf_string(self.header)} Tj ET",
                f"0.5 w {LEFT:.2f} 746.00 m {RIGHT:.2f} 746.00 l S",
                f"BT /F1 8 Tf {LEFT:.2f} 48.00 Td {pdf_string(footer % (number, count))} Tj ET",
            ]
            # the running header first and the footer last: text is read in this order
            out.append(("\n".join(furniture[:2] + ops + furniture[2:]) + "\n").encode("ascii"))
        return out


def write_pdf(streams: list[bytes], info: dict[str, str]) -> bytes:
    """A PDF 1.4 file: catalog, page tree, one content stream per page, the two
    standard fonts, and the information dictionary; no compression."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below, once the page tree's number is known
    fonts = {name: add(f"<< /Type /Font /Subtype /Type1 /BaseFont /{base} "
                       f"/Encoding /WinAnsiEncoding >>".encode())
             for name, base in FONTS.items()}
    resources = " ".join(f"/{name} {num} 0 R" for name, num in fonts.items())
    pages_num = len(objects) + 1 + 2 * len(streams)
    kids = []
    for stream in streams:
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream")
        kids.append(add(f"<< /Type /Page /Parent {pages_num} 0 R /MediaBox [0 0 "
                        f"{PAGE_W:g} {PAGE_H:g}] /Contents {content} 0 R /Resources "
                        f"<< /Font << {resources} >> >> >>".encode()))
    assert add(f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] "
               f"/Count {len(kids)} >>".encode()) == pages_num
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {pages_num} 0 R >>".encode()
    info_num = add(("<< " + " ".join(f"/{k} {pdf_text_string(v)}" for k, v in info.items())
                    + " >>").encode())
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for num, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += (b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, catalog, info_num, xref))
    return bytes(out)
