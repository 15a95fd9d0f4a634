"""Words placed on a page (from the PDFium reader, ``pdfium``) made into GROBID's
layout: lines, blocks, reading order, superscripts and subscripts, and tokens,
by the rules pdfalto follows where GROBID's features depend on them
(docs/extraction.md, "Notes by module"). Coordinates are points from the top
left of the page.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise

from sandcrawler.docparse.layout.elements import Block, Line, Token
from sandcrawler.docparse.layout.tokens import spans

#: words of one line are at most this far apart (times the font size); wider
#: is another column or table cell
LINE_GAP = 1.5
#: a word is on the line when their boxes overlap by this much of the smaller height
LINE_OVERLAP = 0.5
#: a word starting this far left of the last one's end is not on its line
BACKWARD = 0.5
#: a block's rows are at most this far apart, baseline to baseline (times the
#: size), until its own spacing is known; single spacing is about 1.2
BLOCK_SPACING = 1.5
#: then each row keeps the block's spacing within this factor (plus a point)
SPACING_SLACK = 1.2
#: lines whose sizes differ by more than this fraction are never in one block
SIZE_CHANGE = 0.05
#: two lines on one baseline in one block are at most this far apart (times the size)
ROW_GAP = 3.0
#: a short line (at most SHORT_LINE wide, times the size: an equation's number,
#: a matrix's cell) may be as far as SHORT_ROW_GAP beside the block's last line
SHORT_LINE = 5.0
SHORT_ROW_GAP = 40.0
#: how many recent blocks a line may join
LOOKBACK = 4
#: a multi-column stretch whose lines switch columns at least this often (per
#: line, in the page's text order) is written across its columns
INTERLEAVED = 0.25
#: a column of text is at least this wide (times the page's body size)
TEXT_COLUMN = 15.0
#: a gap between blocks at least this wide (times the page's body size) may be a gutter
GUTTER = 0.8
#: baselines closer than this (points) are one baseline (superscript detection)
BASELINE_EPSILON = 0.1


@dataclass(slots=True, frozen=True)
class Font:
    name: str
    size: float
    bold: bool
    italic: bool
    #: the text's direction on the page, degrees counter-clockwise in multiples
    #: of 90 (0: left to right); None for any other angle
    direction: int | None


@dataclass(slots=True)
class Word:
    text: str
    font: Font
    x0: float
    y0: float
    x1: float
    y1: float
    baseline: float
    #: a line break came before it in the page's text
    break_before: bool = False
    superscript: bool = False
    subscript: bool = False


@dataclass(slots=True)
class _Line:
    #: its place in the page's text order
    index: int
    words: list[Word]
    x0: float
    y0: float
    x1: float
    y1: float
    #: the size most of its characters have, the baseline of those words, and
    #: the largest size in it
    size: float = 0.0
    baseline: float = 0.0
    largest: float = 0.0

    @property
    def direction(self) -> int | None:
        return self.words[0].font.direction


@dataclass(slots=True)
class _Block:
    #: its place in the page's text order, and in the reading order
    index: int
    rank: int = 0
    lines: list[_Line] = field(default_factory=list)
    x0: float = math.inf
    y0: float = math.inf
    x1: float = -math.inf
    y1: float = -math.inf
    #: baseline to baseline between its rows, once it has two
    spacing: float = 0.0
    #: its last row: baseline and horizontal extent
    row_baseline: float = 0.0
    row_x0: float = 0.0
    row_x1: float = 0.0

    def add(self, line: _Line) -> None:
        if self.lines and abs(line.baseline - self.row_baseline) > line.size * 0.25:
            if not self.spacing:
                self.spacing = line.baseline - self.row_baseline
            self.row_x0, self.row_x1 = line.x0, line.x1
        elif self.lines:
            self.row_x0, self.row_x1 = min(self.row_x0, line.x0), max(self.row_x1, line.x1)
        else:
            self.row_x0, self.row_x1 = line.x0, line.x1
        self.row_baseline = line.baseline
        self.lines.append(line)
        self.x0, self.y0 = min(self.x0, line.x0), min(self.y0, line.y0)
        self.x1, self.y1 = max(self.x1, line.x1), max(self.y1, line.y1)


def layout_page(words: list[Word], page: int) -> list[Block]:
    """The page's blocks of GROBID tokens, in reading order."""
    if not words:
        return []
    lines = _lines(words)
    for line in lines:
        _line_metrics(line)
    blocks = _blocks(lines)
    ordered = _reading_order(blocks, _body_size(lines))
    return [Block([Line(_tokens(line, page)) for line in block.lines]) for block in ordered]


def _lines(words: list[Word]) -> list[_Line]:
    """Words into lines, in the page's text order."""
    lines: list[_Line] = []
    line: _Line | None = None
    # the band (top, bottom) of the line's largest word: what the next word must overlap
    band_top = band_bottom = band_size = 0.0
    for word in words:
        if line is not None and _continues(line, word, band_top, band_bottom):
            line.words.append(word)
            line.x0, line.y0 = min(line.x0, word.x0), min(line.y0, word.y0)
            line.x1, line.y1 = max(line.x1, word.x1), max(line.y1, word.y1)
            if word.font.size > band_size:
                band_top, band_bottom, band_size = word.y0, word.y1, word.font.size
            continue
        line = _Line(len(lines), [word], word.x0, word.y0, word.x1, word.y1)
        lines.append(line)
        band_top, band_bottom, band_size = word.y0, word.y1, word.font.size
    return lines


def _continues(line: _Line, word: Word, band_top: float, band_bottom: float) -> bool:
    last = line.words[-1]
    direction = word.font.direction
    if direction != last.font.direction:
        return False
    if direction != 0:
        # turned text: the page's own line breaks are the only ones read
        return not word.break_before
    size = max(word.font.size, last.font.size, 1.0)
    if word.x0 < last.x1 - BACKWARD * size or word.x0 - line.x1 > LINE_GAP * size:
        return False
    overlap = min(band_bottom, word.y1) - max(band_top, word.y0)
    return overlap >= LINE_OVERLAP * min(band_bottom - band_top, word.y1 - word.y0)


def _line_metrics(line: _Line) -> None:
    """The line's main size (most characters) and baseline, and its raised or
    lowered words. As pdfalto decides: a word smaller than the line's largest,
    whose baseline is above (below) the baseline of the last ordinary word and
    whose box still reaches that word's, is a superscript (subscript); a first
    word is compared with the next one."""
    by_size: dict[float, int] = {}
    largest = 0.0
    for word in line.words:
        by_size[word.font.size] = by_size.get(word.font.size, 0) + len(word.text)
        largest = max(largest, word.font.size)
    line.size = max(by_size, key=lambda s: (by_size[s], s))
    line.baseline = next(w.baseline for w in line.words if w.font.size == line.size)
    line.largest = largest
    if line.direction != 0 or len(by_size) == 1:
        return
    words = line.words
    base: Word | None = None  # the last word on the line's baseline
    for i, word in enumerate(words):
        if word.font.size < largest:
            ref = base if i > 0 else (words[1] if len(words) > 1 else None)
            if ref is not None:
                if word.baseline < ref.baseline - BASELINE_EPSILON and word.y1 > ref.y0:
                    word.superscript = True
                elif word.baseline > ref.baseline + BASELINE_EPSILON and word.y0 < ref.y1:
                    word.subscript = True
                if i == 0 and (word.superscript or word.subscript):
                    base = ref
        if not (word.superscript or word.subscript):
            base = word


def _blocks(lines: list[_Line]) -> list[_Block]:
    """Lines into blocks, in the page's text order."""
    blocks: list[_Block] = []
    for line in lines:
        for back, block in enumerate(reversed(blocks[-LOOKBACK:])):
            if _joins(block, line, back == 0):
                block.add(line)
                break
        else:
            block = _Block(len(blocks))
            block.add(line)
            blocks.append(block)
    return blocks


def _joins(block: _Block, line: _Line, latest: bool) -> bool:
    last = block.lines[-1]
    if last.direction != line.direction:
        return False
    if line.direction != 0:
        return latest
    # pdfalto compares lines by their largest font (a line opening with a
    # larger bold "Abstract." starts a block of its own)
    size = max(last.size, line.size, 1.0)
    if abs(last.largest - line.largest) > SIZE_CHANGE * max(last.largest, line.largest, 1.0):
        return False
    step = line.baseline - block.row_baseline
    if latest and abs(step) <= 0.25 * size:
        # beside the block's last line, on its baseline (a section number and
        # its title, a table's cells)
        reach = ROW_GAP if line.x1 - line.x0 > SHORT_LINE * size else SHORT_ROW_GAP
        return last.x1 - BACKWARD * size <= line.x0 <= last.x1 + reach * size
    limit = BLOCK_SPACING * size if not block.spacing \
        else max(block.spacing * SPACING_SLACK + 1.0, size)
    if not 0.5 * size <= step <= limit:
        return False
    return min(block.row_x1, line.x1) - max(block.row_x0, line.x0) > 0


def _body_size(lines: list[_Line]) -> float:
    """The size most of the page's characters have."""
    by_size: dict[float, int] = {}
    for line in lines:
        for word in line.words:
            by_size[word.font.size] = by_size.get(word.font.size, 0) + len(word.text)
    return max(by_size, key=lambda s: by_size[s]) if by_size else 10.0


def _reading_order(blocks: list[_Block], body: float) -> list[_Block]:
    """Blocks in the page's text order, which is pdfalto's order and so the one
    GROBID's models learnt from, and in the order of a page's columns for most
    files; except where the text goes back and forth between columns (a
    producer writing two columns line across line): those blocks are put in
    column order, each column keeping its text order."""
    for block in blocks:
        block.rank = block.index
    _untangle(blocks, max(GUTTER * body, 2.0), body)
    return sorted(blocks, key=lambda b: b.rank)


def _untangle(blocks: list[_Block], gutter: float, body: float) -> None:
    """Columns are found by cutting the blocks into horizontal bands, top to
    bottom, where no block spans the cut: a run of consecutive bands that share
    a vertical gutter (an interval of x free of blocks in every band of the
    run, with blocks on both sides) has columns. When the text order of the
    run's lines switches between its columns more often than a late float or a
    page number explains (more than once per column plus one, and for a
    quarter of its lines), and its columns are columns of text (a table's,
    written row by row, stay so), the run's blocks take their ranks again in
    column order. Then the same within each column."""
    if len(blocks) <= 1:
        return
    for run, shared in _runs(_bands(blocks), gutter):
        inner = [g for g in shared if _both_sides(run, g)]
        if not inner:
            continue
        columns = [sorted(column, key=lambda b: b.rank) for column in _columns(run, inner)]
        # the columns of the run's lines, in the page's text order
        visits = [n for _, n in sorted((line.index, n) for n, column in enumerate(columns)
                                       for b in column for line in b.lines)]
        switches = sum(1 for a, b in pairwise(visits) if a != b)
        narrowest = min(max(b.x1 for b in c) - min(b.x0 for b in c) for c in columns)
        if switches > len(columns) + 1 and switches >= INTERLEAVED * len(visits) \
                and narrowest >= TEXT_COLUMN * body:
            ranks = sorted(b.rank for b in run)
            for block, rank in zip([b for c in columns for b in c], ranks, strict=True):
                block.rank = rank
        for column in columns:
            _untangle(column, gutter, body)


def _bands(blocks: list[_Block]) -> list[list[_Block]]:
    """Blocks in horizontal bands, top to bottom: a cut where no block spans it."""
    bands: list[list[_Block]] = []
    bottom = -math.inf
    for block in sorted(blocks, key=lambda b: (b.y0, b.x0)):
        if bands and block.y0 < bottom - 1.0:
            bands[-1].append(block)
            bottom = max(bottom, block.y1)
        else:
            bands.append([block])
            bottom = block.y1
    return bands


def _runs(bands: list[list[_Block]], gutter: float
          ) -> Iterator[tuple[list[_Block], list[tuple[float, float]]]]:
    """Consecutive bands that share a gutter, and the gaps they share. Bands of
    one column each never start a run between themselves: two lone blocks side
    by side in consecutive bands (a running head, a heading below) are not
    columns."""
    run: list[_Block] = []
    shared: list[tuple[float, float]] = []
    split = False  # some band of the run has blocks on both sides of a shared gap
    for band in bands:
        free = _free(band, gutter)
        if run:
            common = _intersect(shared, free, gutter)
            own = any(_both_sides(band, g) for g in common)
            if any(_both_sides(run + band, g) for g in common) and (split or own):
                run += band
                shared = common
                split = True
                continue
            yield run, shared
        run, shared = list(band), free
        split = any(_both_sides(band, g) for g in free)
    if run:
        yield run, shared


def _free(blocks: list[_Block], width: float) -> list[tuple[float, float]]:
    """Intervals of x at least ``width`` wide that no block covers."""
    spans_ = sorted((b.x0, b.x1) for b in blocks)
    out = [(-math.inf, spans_[0][0])]
    reach = spans_[0][1]
    for x0, x1 in spans_[1:]:
        if x0 - reach >= width:
            out.append((reach, x0))
        reach = max(reach, x1)
    out.append((reach, math.inf))
    return out


def _intersect(a: list[tuple[float, float]], b: list[tuple[float, float]], width: float
               ) -> list[tuple[float, float]]:
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if hi - lo >= width:
                out.append((lo, hi))
    return out


def _both_sides(blocks: list[_Block], gap: tuple[float, float]) -> bool:
    return any(b.x1 <= gap[0] for b in blocks) and any(b.x0 >= gap[1] for b in blocks)


def _columns(blocks: list[_Block], gutters: list[tuple[float, float]]) -> list[list[_Block]]:
    edges = sorted(g[0] for g in gutters)
    columns: list[list[_Block]] = [[] for _ in range(len(edges) + 1)]
    for block in blocks:
        columns[sum(1 for e in edges if block.x0 >= e)].append(block)
    return [c for c in columns if c]


def _tokens(line: _Line, page: int) -> list[Token]:
    """The line's GROBID tokens. As GROBID reads an ALTO ``String``, each token of
    a word gets its share of the word's width in proportion to its length in
    the normalised text, and a space follows each word unless it ends in a
    hyphen (docs/extraction.md, "Layout tokens")."""
    out: list[Token] = []
    for word in line.words:
        text, found = spans(word.text)
        if not found:
            continue
        font = word.font
        x, y, width, height = word.x0, word.y0, word.x1 - word.x0, word.y1 - word.y0
        total = len(text)
        sup, sub = word.superscript, word.subscript
        for start, end, space in found:
            out.append(Token(text[start:end], font.name, font.size, font.bold, font.italic,
                             x + width * start / total, y, width * (end - start) / total,
                             height, page, sup, sub, space))
        out[-1].space_after = not text.endswith("-")
    if out:
        out[-1].space_after = False
    return out
