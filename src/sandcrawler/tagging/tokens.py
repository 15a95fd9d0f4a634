"""Tokenizer for short texts: reference strings, author and affiliation blocks.

Identifiers (URLs, DOIs, arXiv ids) are kept whole: they are one field each, and
splitting them into dozens of punctuation tokens would cost time and invite the
model to cut them in two. Everything else splits into runs of letters, runs of
digits, and single other characters. Offsets are kept so that labelled tokens map
back to exact substrings of the input. ``token_columns`` gives the same tokens as
four lists, for callers that tag many texts (no object per token).
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import NamedTuple

_TOKEN = re.compile(
    r"""
    (?:https?|ftp)://[^\s<>"]+[^\s<>".,;:)\]]        # URL
  | www\.[^\s<>"]+[^\s<>".,;:)\]]
  | 10\.\d{4,9}/[^\s"<>]+[^\s"<>.,;:)\]]              # DOI
  | (?i:arxiv):\s?[A-Za-z.\-]*/?\d+(?:\.\d+)?(?:v\d+)?  # arXiv id with its prefix
  | [^\W\d_]+                                          # letters
  | \d+                                                # digits
  | [^\s\x00-\x1f\x7f-\x9f\u200b-\u200f\ufeff\ud800-\udfff]  # else; not controls, surrogates
    """,
    re.VERBOSE,
)


class Token(NamedTuple):
    text: str
    start: int
    end: int
    space_before: bool  # whitespace, a control character or the start precedes it


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    prev_end = 0
    new = tuple.__new__  # NamedTuple's own constructor is a Python-level call per token
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        tokens.append(new(Token, (m.group(), start, end, start == 0 or start > prev_end)))
        prev_end = end
    return tokens


#: the tokens and what lies between them (whitespace, control characters): a token
#: never starts with such a character, so splitting at tokens finds the same tokens
_SPLIT = re.compile(f"({_TOKEN.pattern})", re.VERBOSE)


class TokenColumns(NamedTuple):
    """``tokenize(text)`` column by column."""

    texts: list[str]
    space_before: list[bool]
    starts: list[int]  # one more than the tokens: the end of the text last
    ends: list[int]


def token_columns(text: str) -> TokenColumns:
    """The tokens of ``tokenize(text)`` as columns, made by a few C-level passes."""
    parts = _SPLIT.split(text)  # gap, token, gap, token, ..., gap
    spaces = list(map(bool, parts[0:-1:2]))
    if spaces:
        spaces[0] = True  # the start counts as a space
    offsets = list(accumulate(map(len, parts)))
    return TokenColumns(parts[1::2], spaces, offsets[0::2], offsets[1::2])
