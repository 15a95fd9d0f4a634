"""The reference segmenter's labelled tokens to reference strings
(docs/extraction.md).

The model labels each token of the references zone ``<label>`` (the printed
"[12]" or "12."), ``<reference>`` or ``<other>`` (headings, running heads,
page numbers), a new reference starting at each ``I-<reference>``. A
reference keeps the label printed before it as its ``id``; its string is its
tokens joined as printed, words broken across lines rejoined.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import join_tokens, line_spans
from sandcrawler.tagging.scoring import BEGIN, fields

_LABEL_CLEAN = re.compile(r"^[\[(]?\s*(.*?)\s*[\])]?\s*[.:]?$")
#: what a label's own punctuation leaves at the start of a reference ("1" then ". Bell AC")
_LEADING = re.compile(r"^[\s.,:;)\]]+")
#: characters of one reference string; a longer one is a mis-segmented block of prose
MAX_REFERENCE = 3000
#: a reference string shorter than this is debris (a page number, a stray letter)
MIN_REFERENCE = 12

REFERENCE = "<reference>"
#: a hanging indent: continuation lines this far (points) right of the margin
INDENT = (4.0, 40.0)
#: lines this close (points) to a margin are at it
AT_MARGIN = 1.5
#: lines at the margin and indented lines a hanging indent needs, each
MIN_HANGING = 3
#: of the lines at the margin, at least this share the model starts a reference on
HANGING_SHARE = 0.6
#: space between references: at least this many times a line's usual spacing
SPACED = 1.5
#: further down than this many line heights is another column or a figure's gap
MAX_GAP = 4.0
#: where this share of the model's references follow such space, one that does
#: not goes on with the reference before it
SPACED_SURE = 0.9
#: such space before this share of the other lines or more: nothing to go by
SPACED_OTHERS = 0.5


@dataclass(frozen=True, slots=True)
class ReferenceString:
    text: str
    #: the label printed before it, without brackets ("12" for "[12]")
    label: str | None = None


def reference_strings(tokens: Sequence[Token], labels: Sequence[str],
                      *, limit: int | None = None) -> list[ReferenceString]:
    labels = layout_starts(tokens, labels)
    out: list[ReferenceString] = []
    pending: str | None = None
    for label, start, end in fields(labels):
        if limit is not None and len(out) >= limit:
            break
        if label == "<label>":
            pending = _clean_label(join_tokens(tokens[start:end]))
        elif label == REFERENCE:
            text = join_tokens(tokens[start:end])
            if pending is not None:
                text = _LEADING.sub("", text)
            if MIN_REFERENCE <= len(text) <= MAX_REFERENCE:
                out.append(ReferenceString(text, pending))
            elif text and len(text) < MIN_REFERENCE and out and pending is None \
                    and not labels[start].startswith(BEGIN):
                # the tail of the reference before it, cut by a page break
                out[-1] = ReferenceString(f"{out[-1].text} {text}", out[-1].label)
            pending = None
    # a string the list holds twice, word for word, is a running head or foot
    # the pages repeat (the zone took it in), never a reference
    repeated = {text for text, n in Counter(r.text for r in out).items() if n > 1}
    return [r for r in out if r.text not in repeated]


def layout_starts(tokens: Sequence[Token], labels: Sequence[str]) -> list[str]:
    """The labels with a reference starting where the page's layout shows one
    starts, and only there, where its layout is unmistakable (docs/extraction.md,
    "Reference strings"): at a hanging indent's margin, and after the space
    that sets references apart."""
    lines = [start for start, _ in line_spans(tokens)]
    return _after_space(tokens, lines, _at_margin(tokens, lines, labels))


def _at_margin(tokens: Sequence[Token], lines: Sequence[int],
               labels: Sequence[str]) -> list[str]:
    """Where a page's references start at one x (most lines the model starts a
    reference on are there) and their further lines are indented, a line at
    that x the model ran on into the reference before it (an author-year
    list's "Baudelaire, Charles (1868)" after "… (1975) … Gallimard.") starts
    a reference of its own."""
    out = list(labels)
    for page in {tokens[i].page for i in lines}:
        here = [i for i in lines if tokens[i].page == page]
        starts = Counter(round(tokens[i].x) for i in here if _opens(labels[i]))
        for margin, n in starts.items():
            if n < MIN_HANGING:
                continue
            at = [i for i in here if abs(tokens[i].x - margin) <= AT_MARGIN]
            indented = [i for i in here if INDENT[0] < tokens[i].x - margin <= INDENT[1]]
            opened = [i for i in at if _opens(labels[i])]
            if len(indented) < MIN_HANGING or len(opened) < HANGING_SHARE * len(at):
                continue
            for i in at:
                if labels[i] == REFERENCE:
                    out[i] = BEGIN + REFERENCE
    return out


def _after_space(tokens: Sequence[Token], lines: Sequence[int],
                 labels: Sequence[str]) -> list[str]:
    """Where a blank line's worth of space comes before nearly every line the
    model starts a reference on and seldom before the others (an SSOAR paper's
    list), a line after such space starts a reference, and one after a line's
    usual spacing goes on with the reference before it."""
    gaps: dict[int, float] = {}
    for a, b in itertools.pairwise(lines):
        gap = tokens[b].y - tokens[a].y
        if tokens[a].page == tokens[b].page and 0 < gap < MAX_GAP * max(tokens[a].height, 1):
            gaps[b] = gap
    if len(gaps) < 2 * MIN_HANGING:
        return list(labels)
    usual = sorted(gaps.values())[len(gaps) // 4]
    wide = {i for i, gap in gaps.items() if gap >= SPACED * usual}
    opened = [i for i in gaps if _opens(labels[i])]
    going_on = [i for i in gaps if labels[i] == REFERENCE]
    if len(opened) < MIN_HANGING or not going_on:
        return list(labels)
    opened_wide = sum(i in wide for i in opened) / len(opened)
    if opened_wide < HANGING_SHARE \
            or sum(i in wide for i in going_on) / len(going_on) >= SPACED_OTHERS:
        return list(labels)
    out = list(labels)
    for i in gaps:
        if i in wide and labels[i] == REFERENCE:
            out[i] = BEGIN + REFERENCE
        elif i not in wide and opened_wide >= SPACED_SURE and labels[i] == BEGIN + REFERENCE:
            out[i] = REFERENCE
    return out


def _opens(label: str) -> bool:
    """A line opening with this label starts a reference (or its printed label)."""
    return label in (BEGIN + REFERENCE, BEGIN + "<label>", "<label>")


def _clean_label(text: str) -> str | None:
    m = _LABEL_CLEAN.match(text)
    value = m.group(1) if m else text
    return value or None
