"""Paragraph ends as the page prints them, to check the fulltext model's.

The model starts a paragraph with an ``I-<paragraph>`` label; on documents
unlike its training data it misses some starts (a run of short lines, an
example set apart) and sees others that are not there (at the top of a column,
in the middle of a sentence). The page says it too: a paragraph's last line
stops short of its column's right edge after a sentence's end, and the next
line starts a sentence, often set in by an em; a line that goes on a sentence in lower case does not
start a paragraph. These are the typesetter's conventions, the same in every
justified or ragged layout, so they hold where the model has not been.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import median

from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import line_spans

#: a sentence's end, closing quotes and brackets after it allowed
_SENTENCE_END = re.compile(r"[.?!:;][\"'\u201d\u2019)\]]*$")
#: a line that stops this many ems before its column's right edge is short
SHORT = 3.0
#: a paragraph's first line set in by this many ems (the least and the most)
INDENT = (0.8, 4.0)


@dataclass(frozen=True, slots=True)
class _Line:
    first: int  # index of its first token
    last: int  # index of its last token
    page: int
    left: float
    right: float


def printed_breaks(tokens: Sequence[Token]) -> frozenset[int]:
    """Indices of the tokens that start a printed paragraph: each begins a
    sentence on a line set in by about an em, or after a short line, and the
    line before it ends a sentence."""
    lines = _lines(tokens)
    pages: dict[int, list[_Line]] = {}
    for line in lines:
        pages.setdefault(line.page, []).append(line)
    breaks = set()
    for prev, line in pairwise(lines):
        if line.page != prev.page:
            continue  # a page's last line says nothing of where its column ends
        if not _SENTENCE_END.search(tokens[prev.last].text) \
                or not starts_sentence(tokens[line.first].text):
            continue
        left, right = _column(pages[prev.page], prev)
        em = tokens[line.first].size or 10.0
        short = prev.right < right - max(SHORT * em, 0.02 * (right - left))
        # a first line set in by about an em (not a centred line, not a new column)
        indented = left + INDENT[0] * em <= line.left <= left + INDENT[1] * em \
            and line.left < prev.right
        if short or indented:
            breaks.add(line.first)
    return frozenset(breaks)


def starts_sentence(text: str) -> bool:
    """A word that can begin a paragraph: not a lower-case word going on a
    sentence (a capital, a digit, a bullet or an opening bracket can)."""
    first = text.lstrip("\"'\u201c\u2018([")[:1]
    return bool(first) and not first.islower()


def ends_sentence(text: str) -> bool:
    return bool(_SENTENCE_END.search(text))


def _lines(tokens: Sequence[Token]) -> list[_Line]:
    return [_Line(start, end - 1, tokens[start].page, min(t.x for t in tokens[start:end]),
                  max(t.x + t.width for t in tokens[start:end]))
            for start, end in line_spans(tokens)]


def _column(lines: Sequence[_Line], line: _Line) -> tuple[float, float]:
    """The left and right edges of ``line``'s column: the median edges of its
    page's ``lines`` that overlap it horizontally (most lines of a column are
    full)."""
    mates = [other for other in lines if other.left < line.right and other.right > line.left]
    return median(o.left for o in mates), median(o.right for o in mates)
