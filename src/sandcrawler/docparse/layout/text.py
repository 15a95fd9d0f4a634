"""Layout tokens back to text: a field's tokens joined as the page printed them,
with words broken across lines rejoined.

A line that ends in a hyphen after letters, followed by a line that starts in
lower case, is one word broken by the typesetter ("methyl-" / "ation"); any
other line break is a space. Compound words that happen to break at their own
hyphen ("cell-" / "type") lose it; GROBID accepts the same trade.
"""

from __future__ import annotations

from collections.abc import Sequence

from sandcrawler.docparse.layout.elements import Line, Token

_HYPHENS = frozenset("-\u2010\u2011\u00ad")
#: a gap between two tokens of a line wider than this many font sizes is a space
GAP = 0.25


def join_tokens(tokens: Sequence[Token]) -> str:
    """Tokens of one field, in order, possibly over several lines."""
    parts: list[str] = []
    for i, token in enumerate(tokens):
        parts.append(token.text)
        if i + 1 == len(tokens):
            break
        nxt = tokens[i + 1]
        new_line = nxt.page != token.page or abs(nxt.y - token.y) > token.height * 0.6 \
            or nxt.x < token.x
        if new_line:
            if _broken_word(tokens, i, nxt):
                parts.pop()  # the hyphen
                continue
            parts.append(" ")
        elif token.space_after or nxt.x - (token.x + token.width) > GAP * token.size:
            # a gap wider than a thin space is a space the PDF did not write (a
            # running head beside a logo, words set apart by positioning)
            parts.append(" ")
    return "".join(parts).strip()


def _broken_word(tokens: Sequence[Token], i: int, nxt: Token) -> bool:
    token = tokens[i]
    return (token.text in _HYPHENS and i > 0 and tokens[i - 1].text[-1:].isalpha()
            and not tokens[i - 1].space_after and nxt.text[:1].islower())


def join_lines(lines: Sequence[Line]) -> str:
    """Whole lines, in order (a reference's lines)."""
    return join_tokens([t for line in lines for t in line.tokens])
