"""Tokenizer for short texts: reference strings, author and affiliation blocks.

Identifiers (URLs, DOIs, arXiv ids) are kept whole: they are one field each, and
splitting them into dozens of punctuation tokens would cost time and invite the
model to cut them in two. Everything else splits into runs of letters, runs of
digits, and single other characters. Offsets are kept so that labelled tokens map
back to exact substrings of the input.
"""

from __future__ import annotations

import re
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
