"""Columns computed from a whole sequence of GROBID feature rows, beside the raw
file's own: how lines follow each other, which the reference segmenter needs
most. They read only the rows, so they mean the same at training and at
tagging; a model file names the derivation it was trained with
(docs/extraction-models.md, "Notes by module").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from sandcrawler.core.imports import entry

Derivation = Callable[[Sequence[Sequence[str]]], dict[int, list[str]]]

_LABEL_LIKE = re.compile(r"^(\d{1,4}|[\[(])$")
#: reference-segmenter rows: the line mark and the token's place in its line
_LINE, _PLACE = 10, 23
_NONE = "-"


def _shape(token: str) -> str:
    """A token's class: punctuation as itself, else digits or a word's case."""
    if token.isdigit():
        return "D"
    if token.isalpha():
        return "Aa" if token[0].isupper() else "a"
    if len(token) == 1:
        return token
    return "X"


def reference_lines(rows: Sequence[Sequence[str]]) -> dict[int, list[str]]:
    """Three columns for the reference segmenter's rows (28 columns):

    - 28: the document's numbering, ``N0``/``N1``/``N2`` for few, some, most
      lines starting with what looks like a reference label (a number, "[", "(");
    - 29: on a line's first token, the class of the last token of the line
      before (``.``, ``D`` digits, ``Aa`` capitalised word...); ``-`` elsewhere;
    - 30: on a line's first token, where the line before ended (its last
      token's place in the line, GROBID's 0-10 scale); ``-`` elsewhere.
    """
    n = len(rows)
    starts = [i for i, row in enumerate(rows) if i == 0 or row[_LINE] == "LINESTART"]
    numbered = sum(1 for i in starts if _LABEL_LIKE.match(rows[i][0])) / max(1, len(starts))
    style = "N2" if numbered >= 0.4 else "N1" if numbered >= 0.1 else "N0"
    before = [_NONE] * n
    end = [_NONE] * n
    for i in starts:
        if i:
            before[i] = _shape(rows[i - 1][0])
            end[i] = rows[i - 1][_PLACE]
    return {28: [style] * n, 29: before, 30: end}


DERIVATIONS: dict[str, Derivation] = {
    "reference-lines": reference_lines,
}


def derivation(name: str) -> Derivation:
    return entry(DERIVATIONS, name, "derived columns")


def derived_columns(name: str | None, rows: Sequence[Sequence[str]]) -> Mapping[int, list[str]]:
    return derivation(name)(rows) if name else {}
