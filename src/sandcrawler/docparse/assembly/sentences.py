"""A paragraph cut into sentences (GROBID's ``segmentSentences``): after a
full stop, question or exclamation mark followed by a space and a capital,
a digit or an opening quote or bracket, except after an abbreviation ("et
al.", "Fig.", "e.g.", an initial) and never inside a callout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_END = re.compile(r"[.?!][\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9\u00c0-\u00de])")
#: words after which a full stop does not end a sentence
_ABBREVIATIONS = frozenset({
    "al", "fig", "figs", "eq", "eqs", "ref", "refs", "e.g", "i.e", "cf", "vs", "etc", "no",
    "vol", "pp", "p", "approx", "dr", "mr", "mrs", "ms", "prof", "st", "sect", "sec", "ch",
    "tab", "resp", "ca", "jr", "sr", "inc", "ltd", "co", "viz", "nat", "proc", "suppl",
})  # fmt: skip
_LAST_WORD = re.compile(r"([\w.]+)[.?!]$")


def sentence_spans(text: str, protected: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, whitespace between left out;
    no cut falls inside a ``protected`` span (a callout)."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _END.finditer(text):
        cut = m.start() + len(m.group(0).rstrip())
        if any(a < cut < b for a, b in protected) or _abbreviation(text[start:m.start() + 1]):
            continue
        out.append((start, cut))
        start = m.end()
    if start < len(text.rstrip()):
        out.append((start, len(text.rstrip())))
    return out


def _abbreviation(sentence: str) -> bool:
    m = _LAST_WORD.search(sentence)
    if m is None:
        return False
    word = m.group(1).lower()
    # a single letter is an initial ("J. Smith"); a number before "." may end one
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())
