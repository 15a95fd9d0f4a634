"""GROBID's view of a layout, shared by the three layout models' feature rows:
its token stream (a space token after every word unless it ends in a hyphen, a
newline token after every line and block), the columns computed alike from a
word alone, and the font and indentation columns that follow the row before.
GROBID's quirks are kept where they change a column's value: the models learnt
from those values (docs/extraction.md, "Feature vectors and parity").
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Sequence
from typing import NamedTuple

from sandcrawler.docparse.features.lexicon import MONTHS, Lexicon
from sandcrawler.docparse.layout.elements import Layout, Line, Token
from sandcrawler.docparse.layout.tokens import PUNCTUATION


class TokenRows(NamedTuple):
    """Feature rows and the layout token each row is for."""

    tokens: list[Token]
    rows: list[list[str]]


# GROBID's constants (Segmentation, HeaderParser, ReferenceSegmenterParser)
LINE_SCALE = 10
_YEAR = re.compile(r"[1,2][0-9][0-9][0-9]")  # sic: GROBID's class holds a comma
_ALL_DIGITS = re.compile(r"[0-9]+")
_PUNCT_ONLY = re.compile(r"[,:;?.]+")
_PUNCT_TYPES = {
    "(": "OPENBRACKET",
    "[": "OPENBRACKET",
    ")": "ENDBRACKET",
    "]": "ENDBRACKET",
    ".": "DOT",
    ",": "COMMA",
    "-": "HYPHEN",
    '"': "QUOTE",
    "'": "QUOTE",
    "`": "QUOTE",
}
_PUNCTUATION = frozenset(PUNCTUATION) - {" "}
_FLOAT = struct.Struct("f")


def _f32(x: float) -> float:
    return float(_FLOAT.unpack(_FLOAT.pack(x))[0])


def scale(pos: int, total: int, bins: int) -> int:
    """GROBID's ``linearScaling`` of whole numbers, in Java's ``float``."""
    if pos >= total:
        return bins
    if pos <= 0:
        return 0
    exact = pos * bins / total
    if 1e-4 < exact - int(exact) < 1 - 1e-4:
        # far from a bin's edge: float and double truncate alike
        return int(exact)
    return int(_f32(_f32(_f32(pos) / _f32(total)) * bins))


def jlen(s: str) -> int:
    """Java's String.length(): UTF-16 code units."""
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2


def punctuation_profile(text: str) -> str:
    """GROBID's punctuation profile: the punctuation characters of a text."""
    return "".join(c for c in text if c in _PUNCTUATION)


Words = tuple[str, str, str, str, str, str, str]


def cached_words(cache: dict[str, Words], text: str, lex: Lexicon) -> Words:
    # a document repeats its words: each is looked at once per call
    found = cache.get(text)
    if found is None:
        found = cache[text] = word_features(text, lex)
    return found


def word_features(text: str, lex: Lexicon) -> Words:
    """The columns every model computes alike from a word alone, as printed:
    capitals, digits, single character, name, common word, year, month."""
    digit = "NODIGIT"
    if _ALL_DIGITS.fullmatch(text):
        digit = "ALLDIGIT"
    elif any(c.isdecimal() for c in text):
        digit = "CONTAINSDIGITS"
    if digit == "ALLDIGIT":
        caps = "NOCAPS"  # GROBID prints digits as NOCAPS whatever the test said
    elif not any(c.islower() for c in text):
        caps = "ALLCAP"
    elif text[0].isupper():
        caps = "INITCAP"
    else:
        caps = "NOCAPS"
    return (
        caps,
        digit,
        "1" if jlen(text) == 1 else "0",
        "1" if lex.name(text) else "0",
        "1" if lex.common(text) else "0",
        "1" if _YEAR.search(text) else "0",
        "1" if text.lower() in MONTHS else "0",
    )


def punctuation_type(text: str) -> str:
    """GROBID's kind of punctuation token (header and reference segmenter)."""
    found = _PUNCT_TYPES.get(text)
    if found is not None:
        return found
    return "PUNCT" if _PUNCT_ONLY.fullmatch(text) else "NOPUNCT"


def affixes(text: str, suffixes: bool) -> list[str]:
    """The word, lower-cased, its first 1 to 4 characters (and its last 1 to 4)."""
    out = [text, text.lower(), text[:1], text[:2], text[:3], text[:4]]
    if suffixes:
        out += [text[-1:], text[-2:], text[-3:], text[-4:]]
    return out


class FontChanges:
    """GROBID's font columns, each row against the row before: ``NEWFONT`` or
    ``SAMEFONT``, and ``HIGHERFONT``, ``SAMEFONTSIZE`` or ``LOWERFONT`` (sizes
    compared as whole points)."""

    def __init__(self) -> None:
        self.font: str | None = None
        self.size = -1

    def next(self, font: str, size: float) -> tuple[str, str]:
        if self.font is None or self.font != font:
            self.font = font
            font_status = "NEWFONT"
        else:
            font_status = "SAMEFONT"
        whole = int(size)
        if self.size == -1 or self.size < whole:
            size_status = "HIGHERFONT"
        elif self.size == whole:
            size_status = "SAMEFONTSIZE"
        else:
            size_status = "LOWERFONT"
        self.size = whole
        return font_status, size_status


class Indentation:
    """GROBID's alignment column: a line starting more than a character's width
    right of the line before is indented, one starting that far left is aligned
    again; otherwise the status stays."""

    def __init__(self) -> None:
        self.line_start_x = math.nan
        self.indented = False

    def line_starts(self, x: float, char_width: float) -> None:
        previous_x, self.line_start_x = self.line_start_x, x
        if not math.isnan(previous_x):
            if x - previous_x > char_width:
                self.indented = True
            elif previous_x - x > char_width:
                self.indented = False

    @property
    def status(self) -> str:
        return "LINEINDENT" if self.indented else "ALIGNEDLEFT"


# GROBID's token stream ----------------------------------------------------------


class StreamBlock:
    __slots__ = ("box", "end", "line_ends", "line_starts", "line_texts", "lines", "page", "start")

    def __init__(self, page: int, start: int) -> None:
        self.page = page  # index in layout.pages
        self.start = start  # the first token's place in the document's stream
        self.end = start  # the place of the newline after the block's last word
        self.lines: list[Line] = []
        self.line_starts: list[int] = []  # places of each line's first token
        self.line_ends: list[int] = []  # places of each line's newline
        self.line_texts: list[str] = []
        self.box: tuple[float, float, float, float] | None = None


class Stream:
    """GROBID's view of a layout: its token stream and its blocks."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.texts: list[str] = []
        self.refs: list[Token | None] = []
        self.blocks: list[StreamBlock] = []
        self.page_blocks: list[list[StreamBlock]] = []
        self.line_place: dict[int, tuple[StreamBlock, int]] = {}
        self._ahead: tuple[list[int], list[int]] | None = None
        texts, refs = self.texts, self.refs
        for page_index, page in enumerate(layout.pages):
            on_page: list[StreamBlock] = []
            for block in page.blocks:
                gb = StreamBlock(page_index, len(texts))
                for line in block.lines:
                    if not line.tokens:
                        continue
                    gb.line_starts.append(len(texts))
                    parts: list[str] = []
                    for token in line.tokens:
                        texts.append(token.text)
                        refs.append(token)
                        parts.append(token.text)
                        if token.space_after:
                            texts.append(" ")
                            refs.append(None)
                            parts.append(" ")
                    last = line.tokens[-1]
                    if not last.space_after and not last.text.endswith("-"):
                        texts.append(" ")
                        refs.append(None)
                        parts.append(" ")
                    gb.line_ends.append(len(texts))
                    texts.append("\n")
                    refs.append(None)
                    gb.line_texts.append("".join(parts))
                    self.line_place[id(line)] = (gb, len(gb.lines))
                    gb.lines.append(line)
                if not gb.lines:
                    continue
                gb.end = gb.line_ends[-1]
                texts.append("\n")  # the block's end
                refs.append(None)
                gb.box = _box(gb.lines)
                self.blocks.append(gb)
                on_page.append(gb)
            self.page_blocks.append(on_page)

    def ahead(self) -> tuple[list[int], list[int]]:
        """For each place of the stream, the place of the next newline and of
        the next token that is neither a space nor a newline (the stream's
        length when there is none)."""
        if self._ahead is None:
            texts = self.texts
            total = len(texts)
            newline = [total] * total
            word = [total] * total
            next_nl = next_w = total
            for i in range(total - 1, -1, -1):
                newline[i], word[i] = next_nl, next_w
                if texts[i] == "\n":
                    next_nl = i
                elif texts[i] != " ":
                    next_w = i
            self._ahead = (newline, word)
        return self._ahead

    def size(self, block: StreamBlock) -> int:
        """How many tokens of the stream the block holds (with its newlines)."""
        return block.end + 2 - block.start

    def pieces(self, lines: Sequence[Line]) -> list[tuple[StreamBlock, int, StreamBlock, int]]:
        """Runs of consecutive lines as GROBID's document pieces: the first
        line's block and first token, the last line's block and its last token
        before the newline."""
        places = []
        for line in lines:
            place = self.line_place.get(id(line))
            if place is not None:
                places.append(place)
        order = {id(b): i for i, b in enumerate(self.blocks)}
        places.sort(key=lambda p: (order[id(p[0])], p[1]))
        out: list[tuple[StreamBlock, int, StreamBlock, int]] = []
        prev: tuple[StreamBlock, int] | None = None
        for block, li in places:
            follows = prev is not None and (
                (prev[0] is block and prev[1] + 1 == li)
                or (
                    order[id(prev[0])] + 1 == order[id(block)]
                    and prev[1] == len(prev[0].lines) - 1
                    and li == 0
                )
            )
            if follows and out:
                first_block, first, _, _ = out[-1]
                out[-1] = (first_block, first, block, block.line_ends[li] - 1)
            else:
                out.append((block, block.line_starts[li], block, block.line_ends[li] - 1))
            prev = (block, li)
        return out


def _box(lines: list[Line]) -> tuple[float, float, float, float] | None:
    # GROBID leaves tokens without a width out of boxes
    tokens = [t for line in lines for t in line.tokens if t.width > 0]
    if not tokens:
        return None
    return (
        min(t.x for t in tokens),
        min(t.y for t in tokens),
        max(t.x + t.width for t in tokens),
        max(t.y + t.height for t in tokens),
    )


_CACHE: list[tuple[Layout, Stream]] = []


def stream_of(layout: Layout) -> Stream:
    """The layout's stream, built once for the three models' rows: the last layout
    seen is kept, so a layout must not be changed once its rows were asked for."""
    # the cascade asks for the three models' rows of one layout in a row: the
    # stream is built once (the last layout is kept, not a growing cache)
    # (one read of the entry: another thread may replace it meanwhile)
    entry = _CACHE[0] if _CACHE else None
    if entry is not None and entry[0] is layout:
        return entry[1]
    doc = Stream(layout)
    _CACHE[:] = [(layout, doc)]
    return doc

