"""The fulltext model's feature rows: one row per token of the lines the
segmentation labelled body, 27 columns, GROBID's ``FeaturesVectorFulltext`` as
its ``FullTextParser`` fills them; the reference callouts' columns come from the
document's references (:class:`Callouts`). No label slot: GROBID's fulltext
files end with the superscript flag (docs/extraction-models.md, "The fulltext
model").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sandcrawler.docparse.features.lexicon import Lexicon, default_lexicon
from sandcrawler.docparse.features.stream import (
    FontChanges,
    Indentation,
    StreamBlock,
    TokenRows,
    Words,
    affixes,
    cached_words,
    jlen,
    punctuation_type,
    scale,
    stream_of,
)
from sandcrawler.docparse.layout.elements import Layout, Line, Page, Token

if TYPE_CHECKING:
    from grobid_tei_xml.types import GrobidBiblio

#: the columns of a fulltext row
FULLTEXT_COLUMNS = (
    "token", "lower", "prefix1", "prefix2", "prefix3", "prefix4", "suffix1", "suffix2",
    "suffix3", "suffix4", "block", "line", "alignment", "font", "font_size", "bold", "italic",
    "capitals", "digits", "single_char", "punctuation", "document_position", "page_position",
    "bitmap_around", "callout_type", "callout_known", "superscript",
)  # fmt: skip

# GROBID's constants (FullTextParser, Document)
_POSITION_BINS = 12
#: a bitmap within this many points above or below a block is "around" it
_GRAPHIC_DISTANCE = 100.0

# GROBID's ReferenceMarkerMatcher: a numbered label, an author-year one; Java's
# \d and \s are ASCII, \p{L} a letter
_NUMBERED = re.compile(
    r"[(\[]?[ \t\n\x0b\f\r]*(?:[0-9]+[-\u2212\u2013][0-9]+,|[0-9]+,[ ]*)*[ ]*"
    r"(?:[0-9]+[-\u2013][0-9]+|[0-9]+)[ \t\n\x0b\f\r]*[)\]]?"
)
_AUTHOR_NAME = re.compile(r"[A-Z][^\W\d_]+")
_YEAR = re.compile(r"[12][0-9]{3}[a-d]?")
#: what GROBID strips from a reference's label before matching (Document.setBibDataSets)
_LABEL_JUNK = re.compile(r"[.\[\]()\-\s]")
_LABEL_LEADING = "([{<,. \n"
_LABEL_TRAILING = ")}]>,.: \n"


@dataclass(frozen=True, slots=True)
class Callouts:
    """What the document's references say about its reference callouts, the
    fulltext rows' columns 24 and 25: ``kind`` is ``NUMBER`` when most
    references carry a numeric label, ``AUTHOR`` when most labels are
    author-year, else ``UNKNOWN``; ``known`` holds the references' labels and
    their first authors' surnames (a token equal to one is flagged)."""

    kind: str = "UNKNOWN"
    known: frozenset[str] = frozenset()


#: a document whose references were not read: what GROBID writes without them
NO_CALLOUTS = Callouts()


def _java_strip(text: str) -> str:
    return text.strip("".join(map(chr, range(33))))


def _numbered(label: str) -> bool:
    text = _java_strip(label)
    return bool(_NUMBERED.fullmatch(text)) or bool(
        _NUMBERED.search(text) and _AUTHOR_NAME.search(text))


def _author_year(label: str) -> bool:
    text = _java_strip(label)
    return bool(_YEAR.search(text) and _AUTHOR_NAME.search(text))


def reference_callouts(references: Iterable[tuple[str | None, str | None]]) -> Callouts:
    """GROBID's callout columns from the document's references, each as (its
    printed label, its first author's surname), either None when it has none:
    labels cleaned as GROBID cleans them ("[12]" is "12"), the kind decided by
    a strict majority of all references."""
    labels: list[str | None] = []
    known: set[str] = set()
    for label, surname in references:
        if label:
            label = label.lstrip(_LABEL_LEADING).rstrip(_LABEL_TRAILING)
            label = _LABEL_JUNK.sub("", label)
            known.add(label)
        labels.append(label)
        if surname:
            known.add(surname)
    half = len(labels) // 2
    numbered = sum(1 for label in labels if label is not None and _numbered(label))
    authors = sum(1 for label in labels
                  if label is not None and not _numbered(label) and _author_year(label))
    kind = "NUMBER" if numbered > half else "AUTHOR" if authors > half else "UNKNOWN"
    return Callouts(kind, frozenset(known))


def biblio_callouts(references: Sequence[GrobidBiblio]) -> Callouts:
    """:func:`reference_callouts` of the cascade's parsed references: each
    one's printed label (its ``id``) and its first author's surname."""
    return reference_callouts(
        (ref.id, ref.authors[0].surname if ref.authors else None) for ref in references)


def _bitmap_around(page: Page, block: StreamBlock) -> bool:
    """GROBID's connected graphics: a bitmap of the block's page whose bottom is
    near the block's top or whose top is near its bottom."""
    if block.box is None:
        return False
    _, top, _, bottom = block.box
    return any(
        not g.vector and (abs(g.y + g.height - top) < _GRAPHIC_DISTANCE
                          or abs(g.y - bottom) < _GRAPHIC_DISTANCE)
        for g in page.graphic_boxes)


def _page_position(y: float, height: float) -> int:
    """GROBID's ``linearScaling`` of a coordinate, in doubles."""
    if y >= height:
        return _POSITION_BINS
    if y <= 0:
        return 0
    return min(int(y / height * _POSITION_BINS), _POSITION_BINS)


_BLOCK, _LINE = 10, 11


def fulltext_rows(layout: Layout, lines: Sequence[Line], lexicon: Lexicon | None = None,
                  callouts: Callouts = NO_CALLOUTS) -> TokenRows:
    """GROBID's fulltext features for the tokens of ``lines`` (the lines the
    segmentation labelled body, in document order), and the token of each row
    (module docstring; the columns in docs/extraction-models.md). ``callouts``
    describes the document's references (:func:`reference_callouts`)."""
    lex = lexicon or default_lexicon()
    words: dict[str, Words] = {}
    doc = stream_of(layout)
    pieces = doc.pieces(lines)
    texts, refs = doc.texts, doc.refs
    order = {id(b): i for i, b in enumerate(doc.blocks)}
    # the body's length in characters of GROBID's tokens, spaces and newlines included
    total = sum(jlen(texts[p]) for _, first, _, last in pieces for p in range(first, last + 1))
    tokens: list[Token] = []
    rows: list[list[str]] = []
    fonts = FontChanges()
    indentation = Indentation()
    nn = 0  # characters of the body before this token
    for first_block, first, last_block, last in pieces:
        for b in doc.blocks[order[id(first_block)] : order[id(last_block)] + 1]:
            page = layout.pages[b.page]
            bitmap = "1" if _bitmap_around(page, b) else "0"
            start = b.start
            count = b.end + 2 - start  # the block's tokens, its two closing newlines included
            n = first - start if b is first_block else 0
            stop = last - start + 1 if b is last_block else count
            previous_newline = end_block = False
            first_token = True
            while n < stop:
                text = texts[start + n].replace(" ", "")
                if text == "\n":
                    previous_newline = True
                if not text or text == "\n":  # a space or a newline: a character of the body
                    n += 1
                    nn += 1
                    continue
                token = refs[start + n]
                assert token is not None  # every token but spaces and newlines has one
                newline = previous_newline
                if previous_newline:
                    previous_newline = False
                    if rows:
                        indentation.line_starts(token.x, token.width / jlen(text))
                line_status = ""
                if newline:
                    line_status = "LINESTART"
                    indentation.line_start_x = token.x
                    if rows and rows[-1][_LINE] != "LINESTART":
                        rows[-1][_LINE] = "LINEEND"
                alignment = indentation.status
                if first_token:
                    line_status, block_status = "LINESTART", "BLOCKSTART"
                    if rows and rows[-1][_LINE] != "LINESTART":
                        rows[-1][_LINE] = "LINEEND"
                    indentation.line_start_x = token.x
                elif n == count - 1:
                    line_status, block_status = "LINEEND", "BLOCKEND"
                    previous_newline = end_block = True
                else:
                    # GROBID looks ahead to the next token that is not empty: a
                    # newline ends the line, anything else (a space too) does not;
                    # reaching the block's last token ends the block for good
                    end_line = False
                    ii = 1
                    while n + ii < count:
                        ahead = texts[start + n + ii]
                        end_line = end_line or ahead == "\n"
                        if n + ii == count - 1:
                            end_block = end_line = True
                        ii += 1
                        if ahead:
                            break
                    if not end_line and not newline:
                        line_status = "LINEIN"
                    elif not newline:
                        line_status = "LINEEND"
                        previous_newline = True
                    block_status = "BLOCKEND" if end_block else "BLOCKIN"
                font_status, font_size = fonts.next(token.font, token.size)
                caps, digit, single, *_ = cached_words(words, text, lex)
                row = affixes(text, True)
                row += [
                    block_status,
                    line_status,
                    alignment,
                    font_status,
                    font_size,
                    "1" if token.bold else "0",
                    "1" if token.italic else "0",
                    caps,
                    digit,
                    single,
                    punctuation_type(text),
                    str(scale(nn, total, _POSITION_BINS)),
                    str(_page_position(token.y, page.height)),
                    bitmap,
                    callouts.kind,
                    "1" if text in callouts.known else "0",
                    "1" if token.superscript else "0",
                ]
                # a block's last row, when GROBID's look-ahead did not see it end
                if rows and block_status == "BLOCKSTART" and rows[-1][_BLOCK] == "BLOCKIN":
                    rows[-1][_BLOCK] = "BLOCKEND"
                    rows[-1][_LINE] = "LINEEND"
                rows.append(row)
                tokens.append(token)
                nn += jlen(text)
                n += 1
                first_token = False
    return TokenRows(tokens, rows)
