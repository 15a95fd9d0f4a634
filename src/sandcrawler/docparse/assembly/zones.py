"""Corrections of the segmentation's zones that the page makes plain.

arXiv's margin stamp ("arXiv:0908.0054v1 [astro-ph.CO] 1 Aug 2009", set
sideways beside the first page) is read as a line of its own, which the
segmentation may take for the body's: it is a running head's kind of line.

The segmentation model labels a line by its features alone; on a first page
set unlike its training data it can run the header on over the introduction
(GROBID's model does the same). The introduction's head says where the body
begins: everything from it on, up to the header zone's end, is body. A head is
taken only where it cannot be a title: numbered ("1 Introduction", "I.
INTRODUCTION"; the number may be a line of its own), or after the abstract's
or keywords' line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sandcrawler.docparse.layout.elements import Line

HEADER = "<header>"
BODY = "<body>"
HEADNOTE = "<headnote>"

_ARXIV_STAMP = re.compile(
    r"^arXiv:\s?(?:\d{4}\.\d{4,5}|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})v\d+\s*\[[\w.\-]+\]"
    r"\s*\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4}$")

_FIRST_HEAD = r"(?:introduction|background|motivation)\b[^a-z]{0,3}(?:\w+\s*){0,5}$"
_NUMBERED_HEAD = re.compile(r"^(?:1|I)\.?\s+" + _FIRST_HEAD, re.IGNORECASE)
_HEAD = re.compile(r"^" + _FIRST_HEAD, re.IGNORECASE)
_NUMBER = re.compile(r"^(?:1|I)\.?$")
_ABSTRACT = re.compile(r"^(?:abstract|summary|key\s*words|keywords|index terms)\b",
                       re.IGNORECASE)
#: a first head is short
MAX_HEAD = 60


def body_out_of_header(lines: Sequence[Line], zones: Sequence[str]) -> list[str]:
    """``zones`` with the introduction the header zone took given back to the body."""
    out = list(zones)
    abstract = False
    for i, (line, zone) in enumerate(zip(lines, zones, strict=True)):
        if zone != HEADER:
            continue
        text = line.text.strip()
        if len(text) <= MAX_HEAD and _starts_body(text, lines, zones, i, abstract):
            j = i
            while j < len(out) and out[j] == HEADER:
                out[j] = BODY
                j += 1
            return out
        abstract = abstract or bool(_ABSTRACT.match(text))
    return out


def stamps_apart(lines: Sequence[Line], zones: Sequence[str]) -> list[str]:
    """``zones`` with arXiv's margin stamp set apart from the body and header."""
    return [HEADNOTE if _ARXIV_STAMP.match(line.text.strip()) else zone
            for line, zone in zip(lines, zones, strict=True)]


def _starts_body(text: str, lines: Sequence[Line], zones: Sequence[str], i: int,
                 abstract: bool) -> bool:
    if _NUMBERED_HEAD.match(text):
        return True
    if _NUMBER.match(text) and i + 1 < len(lines) and zones[i + 1] == HEADER:
        following = lines[i + 1].text.strip()
        return len(following) <= MAX_HEAD and bool(_HEAD.match(following))
    return abstract and bool(_HEAD.match(text))
