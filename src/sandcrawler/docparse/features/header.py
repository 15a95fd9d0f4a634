"""The header model's feature rows: one row per token of the lines the
segmentation gave the header, 32 columns, GROBID's ``FeaturesVectorHeader`` as
its ``HeaderParser`` fills it. The last column is GROBID's constant "0", the
label's place its raw files hold (the columns in docs/extraction.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sandcrawler.docparse.features.lexicon import Lexicon, default_lexicon
from sandcrawler.docparse.features.stream import (
    FontChanges,
    Indentation,
    TokenRows,
    Words,
    affixes,
    cached_words,
    punctuation_type,
    stream_of,
)
from sandcrawler.docparse.layout.elements import Layout, Line, Token

#: the columns of a header row
HEADER_COLUMNS = (
    "token", "lower", "prefix1", "prefix2", "prefix3", "prefix4", "suffix1", "suffix2",
    "suffix3", "suffix4", "block", "line", "alignment", "font", "font_size", "bold", "italic",
    "capitals", "digits", "single_char", "name", "common", "year", "month", "location",
    "email", "http", "punctuation", "largest_font", "smallest_font", "larger_than_average",
    "label_slot",
)  # fmt: skip

# an e-mail address and a URL in a block's text (GROBID's TextUtilities
# emailPattern and urlPattern1); Java's \w and \s are ASCII
_EMAIL = re.compile(r"\w+((\.|-|_|,)\w+)?\s?((\.|-|_|,)\w+)?\s?@\s?\w+(\s?(\.|-)\s?\w+)+", re.ASCII)
_URL = re.compile(
    r"(https?|ftp)\s{0,2}:\s{0,2}//\s{0,2}[-A-Z0-9+&@#/%?=~_()|!:.;]*[-A-Z0-9+&@#/%=~_()]"
    r"|www\s{0,2}\.\s{0,2}[-A-Z0-9+&@#/%?=~_()|!:.;]*[-A-Z0-9+&@#/%=~_()]",
    re.ASCII | re.IGNORECASE,
)


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
    words: dict[str, Words] = {}
    doc = stream_of(layout)
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
    fonts = FontChanges()
    indentation = Indentation()
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
                        indentation.line_starts(token.x, token.width / len(token.text))
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
                font_status, font_size = fonts.next(token.font, token.size)
                caps, digit, single, name, common, year, month = cached_words(words, text, lex)
                punct = punctuation_type(text)
                row = affixes(text, True)
                row += [
                    block_status,
                    line_status,
                    indentation.status,
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
