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
    return join_spans(tokens)[0]


def join_spans(tokens: Sequence[Token]) -> tuple[str, list[tuple[int, int]]]:
    """The tokens' text (as :func:`join_tokens`) and where each token is in it:
    ``(start, end)`` per token, an empty span for a hyphen dropped at a
    broken word (a callout's tokens map to its characters this way)."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    for i, token in enumerate(tokens):
        spans.append((at, at + len(token.text)))
        parts.append(token.text)
        at += len(token.text)
        if i + 1 == len(tokens):
            break
        nxt = tokens[i + 1]
        if starts_line(token, nxt):
            if _broken_word(tokens, i, nxt):
                parts.pop()  # the hyphen
                at -= len(token.text)
                spans[-1] = (at, at)
                continue
            parts.append(" ")
            at += 1
        elif token.space_after or nxt.x - (token.x + token.width) > GAP * token.size:
            # a gap wider than a thin space is a space the PDF did not write (a
            # running head beside a logo, words set apart by positioning)
            parts.append(" ")
            at += 1
    text = "".join(parts)
    # leading whitespace cannot occur (a token's text is never blank), trailing
    # only from a blank last token: strip it without moving any start
    return text.rstrip(), [(min(a, len(text.rstrip())), min(b, len(text.rstrip())))
                           for a, b in spans]


def starts_line(token: Token, nxt: Token) -> bool:
    """``nxt``, read after ``token``, is on a printed line of its own."""
    return nxt.page != token.page or abs(nxt.y - token.y) > token.height * 0.6 \
        or nxt.x < token.x


def line_spans(tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """(start, end) of each printed line's tokens, in order."""
    starts = [i for i in range(len(tokens)) if i == 0 or starts_line(tokens[i - 1], tokens[i])]
    return list(zip(starts, [*starts[1:], len(tokens)], strict=True)) if starts else []


def _broken_word(tokens: Sequence[Token], i: int, nxt: Token) -> bool:
    token = tokens[i]
    return (token.text in _HYPHENS and i > 0 and tokens[i - 1].text[-1:].isalpha()
            and not tokens[i - 1].space_after and nxt.text[:1].islower())


def join_lines(lines: Sequence[Line]) -> str:
    """Whole lines, in order (a reference's lines)."""
    return join_tokens([t for line in lines for t in line.tokens])
