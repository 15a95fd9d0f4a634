"""PDFs with text placed run by run, for the layout readers' tests: known words
at known positions, in fonts of the PDF standard 14 (bold, italic, sizes),
turned text, turned pages, and a content stream in whatever order a test wants
(two columns written line across line, as some producers do).

Written by hand from the PDF 1.4 specification, as ``pdfs.py`` is: a text run
is a ``BT /Fn size Tf a b c d x y Tm (text) Tj ET``, strings in
WinAnsiEncoding, so every glyph's place is known to the point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: the standard 14 text fonts a run may name
FONTS = ("Helvetica", "Helvetica-Bold", "Helvetica-Oblique", "Helvetica-BoldOblique",
         "Times-Roman", "Times-Bold", "Times-Italic", "Times-BoldItalic",
         "Courier", "Courier-Bold")


@dataclass
class Run:
    """One string drawn at a baseline point (PDF user space: origin at the
    bottom left)."""

    text: str
    x: float
    y: float
    font: str = "Times-Roman"
    size: float = 10.0
    #: degrees counter-clockwise
    angle: float = 0.0
    #: draw at ``1 Tf`` with the size in the text matrix (what many producers do)
    size_in_matrix: bool = False


def column(lines: list[str], x: float, top: float, *, leading: float = 12.0,
           font: str = "Times-Roman", size: float = 10.0) -> list[Run]:
    """Lines of text one below the other, the first baseline at ``top``."""
    return [Run(text, x, top - i * leading, font, size) for i, text in enumerate(lines)]


def _string(text: str) -> bytes:
    raw = text.encode("cp1252")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def make_layout_pdf(pages: list[list[Run]], *, rotate: int = 0,
                    media_box: tuple[float, float] = (612, 792)) -> bytes:
    """A PDF with one page per entry of ``pages``, its runs drawn in the order
    given; ``rotate`` is every page's /Rotate."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")
    tree = add(b"")
    fonts = {name: add(b"<< /Type /Font /Subtype /Type1 /BaseFont /%s "
                       b"/Encoding /WinAnsiEncoding >>" % name.encode()) for name in FONTS}
    resources = b"<< /Font << " + b" ".join(
        b"/F%d %d 0 R" % (i, ref) for i, ref in enumerate(fonts.values())) + b" >> >>"
    font_index = {name: i for i, name in enumerate(fonts)}
    kids = []
    for runs in pages:
        ops = []
        for run in runs:
            cos, sin = math.cos(math.radians(run.angle)), math.sin(math.radians(run.angle))
            scale = run.size if run.size_in_matrix else 1.0
            tf = 1.0 if run.size_in_matrix else run.size
            ops.append(b"BT /F%d %.3f Tf %.4f %.4f %.4f %.4f %.3f %.3f Tm %s Tj ET" % (
                font_index[run.font], tf, cos * scale, sin * scale, -sin * scale, cos * scale,
                run.x, run.y, _string(run.text)))
        content = b"\n".join(ops)
        stream = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %g %g] /Rotate %d "
                        b"/Contents %d 0 R /Resources %s >>"
                        % (tree, media_box[0], media_box[1], rotate, stream, resources)))
    objects[tree - 1] = (b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids)
                         + b"] /Count %d >>" % len(kids))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % tree
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += (b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, catalog, xref))
    return bytes(out)
