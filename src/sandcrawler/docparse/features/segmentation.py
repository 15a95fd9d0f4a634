"""GROBID's feature vectors, computed from our layout tokens.

Each function returns rows of string columns exactly as GROBID's raw training
files hold them (``grobid-trainer/resources/dataset/<model>/corpus/raw/``), so
that models trained on those files read our rows as they read GROBID's:

- ``segmentation_rows``: one row per line of the document (33 columns, GROBID's
  ``FeaturesVectorSegmentation`` as its ``Segmentation`` parser fills it);
- ``header_rows``: one row per token of the lines the segmentation gave the
  header (32 columns, ``FeaturesVectorHeader`` as ``HeaderParser`` fills it);
- ``refseg_rows``: one row per token of the references zone (28 columns,
  ``FeaturesVectorReferenceSegmenter`` as ``ReferenceSegmenterParser`` fills it).

The last column of header and reference-segmenter rows is GROBID's constant
"0": the label's place, which its feature writer fills with 0 when there is no
label, and which its raw files hold. The column meanings, what each is computed
from and how closely it matches GROBID's own files are in docs/extraction.md,
"Feature vectors and parity".

GROBID computes the features over its own token stream, in which every word is
followed by a space token (unless it ends in a hyphen), every line by a newline
token and every block by another one; several features count those tokens
(positions in the document, line lengths). ``_Doc`` rebuilds that stream from a
``Layout``. GROBID's quirks are kept where they change a column's value (a
segmentation line takes its font from the first token of its block, a line's
length counts its trailing space, ...): the models learnt from those values.
The stream of the last layout seen is kept for the next call (the cascade asks
for the three models' rows of one layout): a layout must not be changed once
its rows have been asked for.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Sequence
from typing import NamedTuple

from sandcrawler.docparse.layout import Layout, Line, Token
from sandcrawler.docparse.lexicon import MONTHS, Lexicon, default_lexicon
from sandcrawler.docparse.tokens import PUNCTUATION

__all__ = [
    "HEADER_COLUMNS",
    "REFSEG_COLUMNS",
    "SEGMENTATION_COLUMNS",
    "TokenRows",
    "affixes",
    "header_rows",
    "punctuation_type",
    "refseg_rows",
    "segmentation_rows",
    "word_features",
]


class TokenRows(NamedTuple):
    """Feature rows and the layout token each row is for."""

    tokens: list[Token]
    rows: list[list[str]]


#: the columns of a segmentation row (docs/extraction.md says what each is)
SEGMENTATION_COLUMNS = (
    "word", "second_word", "lower", "prefix1", "prefix2", "prefix3", "prefix4", "block",
    "page", "font", "font_size", "bold", "italic", "capitals", "digits", "single_char",
    "name", "common", "first_name", "year", "month", "email", "http", "document_position",
    "page_position", "punctuation", "punctuation_count", "line_length", "bitmap_around",
    "vector_around", "repetitive", "first_repetitive", "main_area",
)  # fmt: skip
#: the columns of a header row
HEADER_COLUMNS = (
    "token", "lower", "prefix1", "prefix2", "prefix3", "prefix4", "suffix1", "suffix2",
    "suffix3", "suffix4", "block", "line", "alignment", "font", "font_size", "bold", "italic",
    "capitals", "digits", "single_char", "name", "common", "year", "month", "location",
    "email", "http", "punctuation", "largest_font", "smallest_font", "larger_than_average",
    "label_slot",
)  # fmt: skip
#: the columns of a reference-segmenter row
REFSEG_COLUMNS = (
    "token", "lower", "prefix1", "prefix2", "prefix3", "prefix4", "suffix1", "suffix2",
    "suffix3", "suffix4", "line", "alignment", "capitals", "digits", "single_char", "name",
    "common", "first_name", "location", "year", "month", "http", "punctuation",
    "line_position", "line_length", "block", "punctuation_count", "label_slot",
)  # fmt: skip

# GROBID's constants (Segmentation, HeaderParser, ReferenceSegmenterParser)
_POSITION_BINS = 12
_LINE_SCALE = 10
#: a drawing within this many points above or below a block is "around" it
_GRAPHIC_DISTANCE = 100.0
_YEAR = re.compile(r"[1,2][0-9][0-9][0-9]")  # sic: GROBID's class holds a comma
_ALL_DIGITS = re.compile(r"[0-9]+")
_EMAIL_WORD = re.compile(
    r"(?:[a-zA-Z0-9_'^&amp;/+-])+(?:\.(?:[a-zA-Z0-9_'^&amp;/+-])+)*@"
    r"(?:(?:\[?(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?))\.){3}"
    r"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\]?)|(?:[a-zA-Z0-9-]+\.)+(?:[a-zA-Z]){2,}\.?)"
)
# an e-mail address and a URL in a block's text (GROBID's TextUtilities
# emailPattern and urlPattern1); Java's \w and \s are ASCII
_EMAIL = re.compile(r"\w+((\.|-|_|,)\w+)?\s?((\.|-|_|,)\w+)?\s?@\s?\w+(\s?(\.|-)\s?\w+)+", re.ASCII)
_URL = re.compile(
    r"(https?|ftp)\s{0,2}:\s{0,2}//\s{0,2}[-A-Z0-9+&@#/%?=~_()|!:.;]*[-A-Z0-9+&@#/%=~_()]"
    r"|www\s{0,2}\.\s{0,2}[-A-Z0-9+&@#/%?=~_()|!:.;]*[-A-Z0-9+&@#/%=~_()]",
    re.ASCII | re.IGNORECASE,
)
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
_LETTERS = re.compile(r"[^a-zA-Z]")
_FLOAT = struct.Struct("f")


def _f32(x: float) -> float:
    return float(_FLOAT.unpack(_FLOAT.pack(x))[0])


def _scale(pos: int, total: int, bins: int) -> int:
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


def _jlen(s: str) -> int:
    """Java's String.length(): UTF-16 code units."""
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2


def _profile(text: str) -> str:
    """GROBID's punctuation profile: the punctuation characters of a text."""
    return "".join(c for c in text if c in _PUNCTUATION)


_Words = tuple[str, str, str, str, str, str, str]


def _cached(cache: dict[str, _Words], text: str, lex: Lexicon) -> _Words:
    # a document repeats its words: each is looked at once per call
    found = cache.get(text)
    if found is None:
        found = cache[text] = word_features(text, lex)
    return found


def word_features(text: str, lex: Lexicon) -> _Words:
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
        "1" if _jlen(text) == 1 else "0",
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


# GROBID's token stream ----------------------------------------------------------


class _Block:
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


class _Doc:
    """GROBID's view of a layout: its token stream and its blocks."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.texts: list[str] = []
        self.refs: list[Token | None] = []
        self.blocks: list[_Block] = []
        self.page_blocks: list[list[_Block]] = []
        self.line_place: dict[int, tuple[_Block, int]] = {}
        self._ahead: tuple[list[int], list[int]] | None = None
        texts, refs = self.texts, self.refs
        for page_index, page in enumerate(layout.pages):
            on_page: list[_Block] = []
            for block in page.blocks:
                gb = _Block(page_index, len(texts))
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

    def size(self, block: _Block) -> int:
        """How many tokens of the stream the block holds (with its newlines)."""
        return block.end + 2 - block.start

    def pieces(self, lines: Sequence[Line]) -> list[tuple[_Block, int, _Block, int]]:
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
        out: list[tuple[_Block, int, _Block, int]] = []
        prev: tuple[_Block, int] | None = None
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


_CACHE: list[tuple[Layout, _Doc]] = []


def _doc(layout: Layout) -> _Doc:
    # the cascade asks for the three models' rows of one layout in a row: the
    # stream is built once (the last layout is kept, not a growing cache)
    # (one read of the entry: another thread may replace it meanwhile)
    entry = _CACHE[0] if _CACHE else None
    if entry is not None and entry[0] is layout:
        return entry[1]
    doc = _Doc(layout)
    _CACHE[:] = [(layout, doc)]
    return doc


# segmentation -------------------------------------------------------------------


def _main_areas(doc: _Doc) -> list[tuple[float, float, float, float]]:
    """GROBID's main area of each page (where the body text is): the box around
    the blocks big enough to be body text, odd and even pages apart; the whole
    page when there are not blocks of both kinds."""
    pages = doc.layout.pages
    sides: dict[bool, tuple[list[int], list[int]]] = {True: ([], []), False: ([], [])}
    tops: list[int] = []
    bottoms: list[int] = []
    for b in doc.blocks:
        if b.box is None:
            continue
        x1, y1, x2, y2 = b.box
        w, h = x2 - x1, y2 - y1
        # small blocks are page numbers, running heads and the like
        if x1 == 0 or h < 20 or w < 20 or h * w < 3000:
            continue
        even = (b.page + 1) % 2 == 0  # GROBID numbers pages from 1
        sides[even][0].append(int(x1))
        sides[even][1].append(int(x1 + w))
        tops.append(int(y1))
        bottoms.append(int(y1 + h))
    if not sides[True][0] or not sides[False][0]:
        return [(0.0, 0.0, p.width, p.height) for p in pages]
    areas = {}
    y = min(tops)
    height = max(bottoms) - y + 1
    for even, (lefts, rights) in sides.items():
        x = min(lefts)
        areas[even] = (float(x), float(y), float(x + max(rights) - x + 1), float(y + height))
    return [areas[(i + 1) % 2 == 0] for i in range(len(pages))]


def _in_area(
    area: tuple[float, float, float, float], box: tuple[float, float, float, float]
) -> bool:
    ax1, ay1, ax2, ay2 = area
    bx1, by1, bx2, by2 = box
    if ax1 <= bx1 and ay1 <= by1 and ax2 >= bx2 and ay2 >= by2:
        return True
    return not (ax2 < bx1 or ax1 > bx2 or ay2 < by1 or ay1 > by2)


def _pattern(line: str) -> str:
    """GROBID's textual pattern of a line: its ASCII letters, lower-cased."""
    return _LETTERS.sub("", line).lower()


def segmentation_rows(layout: Layout, lexicon: Lexicon | None = None) -> list[list[str]]:
    """GROBID's segmentation features, a row for each of ``layout.lines()``
    (module docstring; the columns in docs/extraction.md)."""
    lex = lexicon or default_lexicon()
    words: dict[str, _Words] = {}
    doc = _doc(layout)
    areas = _main_areas(doc)
    # lines repeated at the top or bottom of several pages (running heads and
    # feet): GROBID counts the first line of the first two and the last block
    # of each page
    counts: dict[str, int] = {}
    for blocks in doc.page_blocks:
        for i, b in enumerate(blocks):
            if i < 2 or i > len(blocks) - 2:
                pattern = _pattern(b.line_texts[0])
                if len(pattern) > 8:
                    counts[pattern] = counts.get(pattern, 0) + 1
    seen: set[str] = set()
    document_length = len(doc.texts)
    rows: list[list[str]] = []
    current_font: str | None = None
    current_size = -1
    previous_block_status = ""
    nn = 0  # tokens before the current block, in the document
    for page_index, blocks in enumerate(doc.page_blocks):
        if not blocks:
            continue
        page = layout.pages[page_index]
        page_length = sum(doc.size(b) for b in blocks)
        mm = 0  # tokens before the current block, on the page
        first_row = len(rows)
        for i, b in enumerate(blocks):
            bitmap = vector = False
            if b.box is not None:
                _, top, _, bottom = b.box
                for g in page.graphic_boxes:
                    if g.vector:
                        # the pdfalto that wrote GROBID's training files gave a
                        # page's drawings no position: a box at (0, 0) of no
                        # size, "around" the blocks that start at the page's top
                        # (docs/extraction.md)
                        vector = vector or top < _GRAPHIC_DISTANCE
                    elif (
                        abs(g.y + g.height - top) < _GRAPHIC_DISTANCE
                        or abs(g.y - bottom) < _GRAPHIC_DISTANCE
                    ):
                        bitmap = True
            # a block without a box is GROBID's box at (0, 0) of no size
            in_area = _in_area(areas[page_index], b.box or (0.0, 0.0, 0.0, 0.0))
            edge = i < 2 or i > len(blocks) - 2
            longest = max(_jlen(t) for t in b.line_texts)
            # GROBID takes a line's layout from the first token of its block
            first = b.lines[0].tokens[0]
            doc_pos = str(_scale(nn, document_length, _POSITION_BINS))
            page_pos = str(_scale(mm, page_length, _POSITION_BINS))
            for li, text_line in enumerate(b.line_texts):
                chunks = text_line.split()
                text = chunks[0]
                second = chunks[1] if len(chunks) > 1 else text
                if li == 0 or previous_block_status == "BLOCKEND":
                    block_status = "BLOCKSTART"
                elif li == len(b.line_texts) - 1:
                    block_status = "BLOCKEND"
                else:
                    block_status = "BLOCKIN"
                previous_block_status = block_status
                if current_font is None or current_font != first.font:
                    current_font = first.font
                    font_status = "NEWFONT"
                else:
                    font_status = "SAMEFONT"
                size = int(first.size)
                if current_size == -1 or current_size < size:
                    font_size = "HIGHERFONT"
                elif current_size == size:
                    font_size = "SAMEFONTSIZE"
                else:
                    font_size = "LOWERFONT"
                current_size = size
                caps, digit, single, name, common, year, month = _cached(words, text, lex)
                repetitive = first_repetitive = "0"
                if edge:
                    pattern = _pattern(text_line)
                    if counts.get(pattern, 0) > 1:
                        repetitive = "1"
                        if pattern not in seen:
                            seen.add(pattern)
                            first_repetitive = "1"
                profile = _profile(text_line)
                rows.append(
                    [
                        text,
                        second,
                        text.lower(),
                        text[:1],
                        text[:2],
                        text[:3],
                        text[:4],
                        block_status,
                        "PAGEIN",
                        font_status,
                        font_size,
                        "1" if first.bold else "0",
                        "1" if first.italic else "0",
                        caps,
                        digit,
                        single,
                        name,
                        common,
                        "0",  # GROBID's first-name flag, never set
                        year,
                        month,
                        "1" if _EMAIL_WORD.fullmatch(text) else "0",
                        "1" if "http" in text else "0",
                        doc_pos,
                        page_pos,
                        profile or "no",
                        str(len(profile)),
                        str(_scale(_jlen(text_line), longest, _LINE_SCALE)),
                        "1" if bitmap else "0",
                        "1" if vector else "0",
                        repetitive,
                        first_repetitive,
                        "1" if in_area else "0",
                    ]
                )
            nn += doc.size(b)
            mm += doc.size(b)
        # the page's first line starts it, and the line before it ends the one before
        if first_row > 0:
            rows[first_row - 1][8] = "PAGEEND"
        rows[first_row][8] = "PAGESTART"
    return rows


# header -------------------------------------------------------------------------


def _positions(texts: list[str], pattern: re.Pattern[str]) -> set[int]:
    """The places (in ``texts``) of the tokens a match of ``pattern`` in their
    concatenation covers, as GROBID converts character offsets to tokens: from
    the first token starting at or after the match's start to the first token
    ending at or after its end."""
    text = "".join(texts)
    found: set[int] = set()
    i = 0
    offset = 0  # where token i starts
    for m in pattern.finditer(text):
        start, end = m.span()
        while i < len(texts) and offset < start:
            offset += len(texts[i])
            i += 1
        first = i
        while i < len(texts) and offset + len(texts[i]) < end:
            offset += len(texts[i])
            i += 1
        found.update(range(first, min(i, len(texts) - 1) + 1))
        if i < len(texts):
            offset += len(texts[i])
            i += 1
    return found


def header_rows(layout: Layout, lines: Sequence[Line], lexicon: Lexicon | None = None) -> TokenRows:
    """GROBID's header features for the tokens of ``lines`` (the lines the
    segmentation labelled header, in document order), and the token of each
    row (module docstring; the columns in docs/extraction.md)."""
    lex = lexicon or default_lexicon()
    words: dict[str, _Words] = {}
    doc = _doc(layout)
    pieces = doc.pieces(lines)
    texts, refs = doc.texts, doc.refs
    order = {id(b): i for i, b in enumerate(doc.blocks)}
    # font sizes over the whole blocks the header touches, GROBID's spaces and
    # newlines (of size 0) included: the smallest is 0 whenever there is a space
    sizes: list[float] = []
    for first_block, _, last_block, _ in pieces:
        for b in doc.blocks[order[id(first_block)] : order[id(last_block)] + 1]:
            sizes += [t.size if t is not None else 0.0 for t in refs[b.start : b.end + 2]]
    if not sizes:
        return TokenRows([], [])
    largest, smallest = max(sizes), min(sizes)
    average = sum(sizes) / len(sizes)
    tokens: list[Token] = []
    rows: list[list[str]] = []
    current_font: str | None = None
    current_size = -1
    line_start_x = math.nan
    indented = False
    for first_block, first, last_block, last in pieces:
        for b in doc.blocks[order[id(first_block)] : order[id(last_block)] + 1]:
            start = b.start
            block_texts = texts[start : b.end + 2]
            count = len(block_texts)
            stop = last - start if b is last_block else count - 1
            n = start_index = first - start if b is first_block else 0
            emails = _positions(block_texts, _EMAIL) if "@" in "".join(block_texts) else set()
            urls = _positions(block_texts, _URL)
            previous_newline = True
            block_rows: list[list[str]] = []
            while n < count and n <= stop:
                text = block_texts[n].replace(" ", "")
                if not text:
                    n += 1
                    continue
                if text == "\n":
                    previous_newline = True
                    n += 1
                    continue
                token = refs[start + n]
                assert token is not None  # every token but spaces and newlines has one
                newline = previous_newline
                if previous_newline:
                    previous_newline = False
                    # from a block's second line on, as GROBID's current code and
                    # 720 of its 745 header training files (docs/extraction.md)
                    if block_rows:
                        previous_x = line_start_x
                        line_start_x = token.x
                        char_width = token.width / len(token.text)
                        if not math.isnan(previous_x):
                            if line_start_x - previous_x > char_width:
                                indented = True
                            elif previous_x - line_start_x > char_width:
                                indented = False
                line_status = "LINESTART" if newline else ""
                block_status = ""
                if n == start_index:
                    line_status, block_status = "LINESTART", "BLOCKSTART"
                elif n == count - 1 or n + 1 > last - start:
                    line_status, block_status = "LINEEND", "BLOCKEND"
                    previous_newline = True
                else:
                    # the line ends here when only spaces come before the next newline
                    endline = endblock = False
                    ii = 1
                    while n + ii < count:
                        ahead = block_texts[n + ii]
                        if n + ii == count - 1:
                            endblock = endline = True
                        if ahead == "\n":
                            endline = True
                            break
                        if ahead.strip():
                            break
                        ii += 1
                    if not endline and not newline:
                        line_status = "LINEIN"
                    elif not newline:
                        line_status = "LINEEND"
                        previous_newline = True
                    block_status = "BLOCKEND" if endblock else "BLOCKIN"
                if current_font is None or current_font != token.font:
                    current_font = token.font
                    font_status = "NEWFONT"
                else:
                    font_status = "SAMEFONT"
                size = int(token.size)
                if current_size == -1 or current_size < size:
                    font_size = "HIGHERFONT"
                elif current_size == size:
                    font_size = "SAMEFONTSIZE"
                else:
                    font_size = "LOWERFONT"
                current_size = size
                caps, digit, single, name, common, year, month = _cached(words, text, lex)
                punct = punctuation_type(text)
                row = affixes(text, True)
                row += [
                    block_status,
                    line_status,
                    "LINEINDENT" if indented else "ALIGNEDLEFT",
                    font_status,
                    font_size,
                    "1" if token.bold else "0",
                    "1" if token.italic else "0",
                    caps,
                    digit,
                    single,
                    name,
                    common,
                    year,
                    month,
                    "1" if text.lower() in lex.locations else "0",
                    "1" if n in emails else "0",
                    "1" if n in urls else "0",
                    punct,
                    "1" if token.size == largest else "0",
                    "1" if token.size == smallest else "0",
                    "1" if token.size > average else "0",
                    "0",  # the label's place
                ]
                block_rows.append(row)
                tokens.append(token)
                n += 1
            if block_rows:
                block_rows[-1][10] = "BLOCKEND"
                block_rows[-1][11] = "LINEEND"
                rows += block_rows
    return TokenRows(tokens, rows)


# reference segmenter -------------------------------------------------------------


def refseg_rows(layout: Layout, lines: Sequence[Line], lexicon: Lexicon | None = None) -> TokenRows:
    """GROBID's reference segmenter features for the tokens of ``lines`` (the
    lines the segmentation labelled references, in document order), and the
    token of each row (module docstring; the columns in docs/extraction.md)."""
    lex = lexicon or default_lexicon()
    words: dict[str, _Words] = {}
    doc = _doc(layout)
    pieces = doc.pieces(lines)
    texts, refs = doc.texts, doc.refs
    total = len(texts)
    order = {id(b): i for i, b in enumerate(doc.blocks)}
    # the longest line, in characters of GROBID's tokens; a piece's last line
    # (cut before its newline) runs on into the next piece's first, as in GROBID
    longest = 1
    current = 0
    for _, first, _, last in pieces:
        for place in range(first, last + 1):
            current += _jlen(texts[place])
            if texts[place] == "\n":
                longest = max(longest, current)
                current = 0
    next_newline, next_word = doc.ahead()
    tokens: list[Token] = []
    rows: list[list[str]] = []
    line_start_x = math.nan
    indented = False
    any_row = False
    for first_block, first, _, last in pieces:
        nn = 0  # characters before this token on its line, GROBID's way
        block_index = order[id(first_block)]
        block = None
        token_index = 0
        previous_newline = True
        line_length = 0
        line_profile: str | None = None
        for n in range(first, last + 1):
            text = texts[n]
            if block is not None and n > block.end:
                block_index += 1
                token_index = 0
                line_length = 0
                line_profile = None
            start_block = end_block = False
            if block_index < len(doc.blocks):
                block = doc.blocks[block_index]
                start_block = n == block.start
                end_block = n == block.end
            else:
                block = None
            if text == "\n":
                previous_newline = True
                nn = 0
                line_length = 0
                line_profile = None
                continue
            nn += _jlen(text)
            if text == " ":
                nn += 1  # sic: GROBID counts a space twice
                continue
            if not text.strip():
                continue
            # GROBID finds the token in its block by its text, from the last one
            # found on (so a repeated text can take an earlier token's place);
            # only the indentation reads what it finds
            found: tuple[float, float, int] | None = None
            if block is not None:
                size = block.end + 2 - block.start
                i = token_index
                while i < size:
                    if texts[block.start + i] == text:
                        token_index = i
                        hit = refs[block.start + i]
                        assert hit is not None
                        found = (hit.x, hit.width, len(hit.text))
                        break
                    i += 1
                else:
                    if i > token_index:  # GROBID is left with the block's last newline
                        found = (-1.0, 0.0, 1)
            newline = previous_newline
            if previous_newline:
                previous_newline = False
                if found is not None and any_row:
                    previous_x = line_start_x
                    line_start_x = found[0]
                    char_width = found[1] / found[2]
                    if not math.isnan(previous_x):
                        if line_start_x - previous_x > char_width:
                            indented = True
                        elif previous_x - line_start_x > char_width:
                            indented = False
            line_status = "LINESTART" if newline else ""
            block_status = ""
            if n == 0:
                line_status, block_status = "LINESTART", "BLOCKSTART"
                nn = 0
            # GROBID looks ahead to the line's newline: the token ends its line
            # when only spaces come before it, its block when that newline is
            # the block's last; the first token of a line measures the line
            # (from itself to its newline) and its punctuation
            nl = next_newline[n]
            endline = next_word[n] > nl or nl >= total - 1
            if nl >= total - 1 or (endline and block is not None and nl == block.end):
                end_block = True
            if nl < total and (line_length == 0 or line_profile is None):
                rest = "".join(texts[n : nl + 1])
                if line_length == 0:
                    line_length = _jlen(rest)
                if line_profile is None:
                    line_profile = _profile(rest)
            if not endline and not newline:
                line_status = "LINEIN"
            elif not newline:
                line_status = "LINEEND"
                previous_newline = True
            if start_block:
                block_status = "BLOCKSTART"
            if not block_status:
                block_status = "BLOCKEND" if end_block else "BLOCKIN"
            caps, digit, single, name, common, year, month = _cached(words, text, lex)
            punct = punctuation_type(text)
            profile = line_profile or ""
            row = affixes(text, True)
            row += [
                line_status,
                "LINEINDENT" if indented else "ALIGNEDLEFT",
                caps,
                digit,
                single,
                name,
                common,
                "0",  # GROBID's first-name flag, never set
                "0",  # GROBID's location flag, never set for this model
                year,
                month,
                "1" if "http" in text else "0",
                punct,
                str(_scale(nn, line_length, _LINE_SCALE)),
                str(_scale(line_length, longest, _LINE_SCALE)),
                block_status,
                str(min(len(profile), 10)) if profile else "no",
                "0",  # the label's place
            ]
            rows.append(row)
            own = refs[n]
            assert own is not None  # every token but spaces and newlines has one
            tokens.append(own)
            any_row = True
    return TokenRows(tokens, rows)
