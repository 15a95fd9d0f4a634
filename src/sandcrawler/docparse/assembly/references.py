"""The reference segmenter's labelled tokens to reference strings
(docs/extraction.md).

The model labels each token of the references zone ``<label>`` (the printed
"[12]" or "12."), ``<reference>`` or ``<other>`` (headings, running heads,
page numbers), a new reference starting at each ``I-<reference>``. A
reference keeps the label printed before it as its ``id``; its string is its
tokens joined as printed, words broken across lines rejoined.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import join_tokens
from sandcrawler.tagging.scoring import fields

_LABEL_CLEAN = re.compile(r"^[\[(]?\s*(.*?)\s*[\])]?\s*[.:]?$")
#: what a label's own punctuation leaves at the start of a reference ("1" then ". Bell AC")
_LEADING = re.compile(r"^[\s.,:;)\]]+")
#: characters of one reference string; a longer one is a mis-segmented block of prose
MAX_REFERENCE = 3000
#: a reference string shorter than this is debris (a page number, a stray letter)
MIN_REFERENCE = 12


@dataclass(frozen=True, slots=True)
class ReferenceString:
    text: str
    #: the label printed before it, without brackets ("12" for "[12]")
    label: str | None = None


def reference_strings(tokens: Sequence[Token], labels: Sequence[str],
                      *, limit: int | None = None) -> list[ReferenceString]:
    out: list[ReferenceString] = []
    pending: str | None = None
    for label, start, end in fields(labels):
        if limit is not None and len(out) >= limit:
            break
        if label == "<label>":
            pending = _clean_label(join_tokens(tokens[start:end]))
        elif label == "<reference>":
            text = join_tokens(tokens[start:end])
            if pending is not None:
                text = _LEADING.sub("", text)
            if MIN_REFERENCE <= len(text) <= MAX_REFERENCE:
                out.append(ReferenceString(text, pending))
            elif text and len(text) < MIN_REFERENCE and out and pending is None \
                    and not labels[start].startswith("I-"):
                # the tail of the reference before it, cut by a page break
                out[-1] = ReferenceString(f"{out[-1].text} {text}", out[-1].label)
            pending = None
    return out


def _clean_label(text: str) -> str | None:
    m = _LABEL_CLEAN.match(text)
    value = m.group(1) if m else text
    return value or None
