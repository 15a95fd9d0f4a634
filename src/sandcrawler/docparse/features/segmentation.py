"""The segmentation model's feature rows: one row per line of the document, 33
columns, GROBID's ``FeaturesVectorSegmentation`` as its ``Segmentation`` parser
fills it. A line takes its font from the first token of its block, and lines
repeated at the top or bottom of pages are flagged, as in GROBID (the columns in
docs/extraction.md, "Feature vectors and parity").
"""

from __future__ import annotations

import re

from sandcrawler.docparse.features.lexicon import Lexicon, default_lexicon
from sandcrawler.docparse.features.stream import (
    LINE_SCALE,
    FontChanges,
    Stream,
    Words,
    cached_words,
    jlen,
    punctuation_profile,
    scale,
    stream_of,
)
from sandcrawler.docparse.layout.elements import Layout

#: the columns of a segmentation row (docs/extraction.md says what each is)
SEGMENTATION_COLUMNS = (
    "word", "second_word", "lower", "prefix1", "prefix2", "prefix3", "prefix4", "block",
    "page", "font", "font_size", "bold", "italic", "capitals", "digits", "single_char",
    "name", "common", "first_name", "year", "month", "email", "http", "document_position",
    "page_position", "punctuation", "punctuation_count", "line_length", "bitmap_around",
    "vector_around", "repetitive", "first_repetitive", "main_area",
)  # fmt: skip

# GROBID's constants (Segmentation)
_POSITION_BINS = 12
#: a drawing within this many points above or below a block is "around" it
_GRAPHIC_DISTANCE = 100.0
_EMAIL_WORD = re.compile(
    r"(?:[a-zA-Z0-9_'^&amp;/+-])+(?:\.(?:[a-zA-Z0-9_'^&amp;/+-])+)*@"
    r"(?:(?:\[?(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?))\.){3}"
    r"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\]?)|(?:[a-zA-Z0-9-]+\.)+(?:[a-zA-Z]){2,}\.?)"
)
_LETTERS = re.compile(r"[^a-zA-Z]")


def _main_areas(doc: Stream) -> list[tuple[float, float, float, float]]:
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
    words: dict[str, Words] = {}
    doc = stream_of(layout)
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
    fonts = FontChanges()
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
            longest = max(jlen(t) for t in b.line_texts)
            # GROBID takes a line's layout from the first token of its block
            first = b.lines[0].tokens[0]
            doc_pos = str(scale(nn, document_length, _POSITION_BINS))
            page_pos = str(scale(mm, page_length, _POSITION_BINS))
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
                font_status, font_size = fonts.next(first.font, first.size)
                caps, digit, single, name, common, year, month = cached_words(words, text, lex)
                repetitive = first_repetitive = "0"
                if edge:
                    pattern = _pattern(text_line)
                    if counts.get(pattern, 0) > 1:
                        repetitive = "1"
                        if pattern not in seen:
                            seen.add(pattern)
                            first_repetitive = "1"
                profile = punctuation_profile(text_line)
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
                        str(scale(jlen(text_line), longest, LINE_SCALE)),
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
