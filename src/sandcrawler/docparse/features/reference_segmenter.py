"""The reference segmenter's feature rows: one row per token of the references
zone, 28 columns, GROBID's ``FeaturesVectorReferenceSegmenter`` as its
``ReferenceSegmenterParser`` fills it. The last column is GROBID's constant "0",
the label's place its raw files hold (the columns in docs/extraction.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from sandcrawler.docparse.features.lexicon import Lexicon, default_lexicon
from sandcrawler.docparse.features.stream import (
    LINE_SCALE,
    Indentation,
    TokenRows,
    Words,
    affixes,
    cached_words,
    jlen,
    punctuation_profile,
    punctuation_type,
    scale,
    stream_of,
)
from sandcrawler.docparse.layout.elements import Layout, Line, Token

#: the columns of a reference-segmenter row
REFSEG_COLUMNS = (
    "token", "lower", "prefix1", "prefix2", "prefix3", "prefix4", "suffix1", "suffix2",
    "suffix3", "suffix4", "line", "alignment", "capitals", "digits", "single_char", "name",
    "common", "first_name", "location", "year", "month", "http", "punctuation",
    "line_position", "line_length", "block", "punctuation_count", "label_slot",
)  # fmt: skip


def refseg_rows(layout: Layout, lines: Sequence[Line], lexicon: Lexicon | None = None) -> TokenRows:
    """GROBID's reference segmenter features for the tokens of ``lines`` (the
    lines the segmentation labelled references, in document order), and the
    token of each row (module docstring; the columns in docs/extraction.md)."""
    lex = lexicon or default_lexicon()
    words: dict[str, Words] = {}
    doc = stream_of(layout)
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
            current += jlen(texts[place])
            if texts[place] == "\n":
                longest = max(longest, current)
                current = 0
    next_newline, next_word = doc.ahead()
    tokens: list[Token] = []
    rows: list[list[str]] = []
    indentation = Indentation()
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
            nn += jlen(text)
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
                    indentation.line_starts(found[0], found[1] / found[2])
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
                    line_length = jlen(rest)
                if line_profile is None:
                    line_profile = punctuation_profile(rest)
            if not endline and not newline:
                line_status = "LINEIN"
            elif not newline:
                line_status = "LINEEND"
                previous_newline = True
            if start_block:
                block_status = "BLOCKSTART"
            if not block_status:
                block_status = "BLOCKEND" if end_block else "BLOCKIN"
            caps, digit, single, name, common, year, month = cached_words(words, text, lex)
            punct = punctuation_type(text)
            profile = line_profile or ""
            row = affixes(text, True)
            row += [
                line_status,
                indentation.status,
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
                str(scale(nn, line_length, LINE_SCALE)),
                str(scale(line_length, longest, LINE_SCALE)),
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
