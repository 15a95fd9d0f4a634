"""Layout tokens: what a layout reader (pdfalto's ALTO, or PDFium) gives the
cascade, per page: blocks, lines and tokens with their font, position and
reading order.

Tokens are GROBID's: a word, a run of digits, or one punctuation character
(GROBID's feature files hold one row per such token); whitespace is not a token
but ``space_after`` on the token before it. Coordinates are PDF points with the
origin at the page's top left, as in ALTO.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import LayoutStatus


class LayoutError(RecordError):
    """A layout reader gave no layout for this PDF; ``status`` says why."""

    status = LayoutStatus.LAYOUT_FAILED


@dataclass(slots=True)
class Token:
    text: str
    font: str  # the font's name, e.g. "TimesNewRomanPS-BoldMT"
    size: float  # points
    bold: bool
    italic: bool
    x: float
    y: float
    width: float
    height: float
    page: int  # 0-based
    superscript: bool = False
    subscript: bool = False
    #: whitespace follows this token on its line (the line's last token: False)
    space_after: bool = False


@dataclass(slots=True)
class Line:
    tokens: list[Token] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(t.text + (" " if t.space_after else "") for t in self.tokens).rstrip()


@dataclass(slots=True)
class Block:
    lines: list[Line] = field(default_factory=list)


@dataclass(slots=True)
class Graphic:
    """An image or a vector drawing on a page, where it is (GROBID's segmentation
    marks the lines of a block that one is near)."""

    x: float
    y: float
    width: float
    height: float
    #: a vector drawing (paths); False: a bitmap image
    vector: bool


@dataclass(slots=True)
class Page:
    number: int  # 0-based
    width: float
    height: float
    blocks: list[Block] = field(default_factory=list)
    #: images and vector graphics drawn on the page (GROBID's segmentation reads them)
    bitmaps: int = 0
    graphics: int = 0
    #: where they are, when the reader knows (pdfalto: its Illustration elements)
    graphic_boxes: list[Graphic] = field(default_factory=list)


@dataclass(slots=True)
class Layout:
    pages: list[Page] = field(default_factory=list)
    #: which reader made it: "pdfalto" or "pdfium"
    reader: str = ""

    def lines(self) -> list[Line]:
        return [line for page in self.pages for block in page.blocks for line in block.lines]
