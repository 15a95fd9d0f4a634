"""The document's own citation line where its running heads print it
("Biochem. J. (2004) 379, 1-10", "J Biol Chem 2004;279:123-9"), read through the
citation parser: journal, volume, issue, pages and year, a locator the matcher
finds a work by when the header zone printed none (a title lost to extraction,
a header the segmentation missed).

Only lines of the running heads and feet of the first pages (and the header
zone) with a year and a volume or a page range are read; a line printed on
several pages comes first (no cited work repeats there); a parse without a
journal, a year and a volume or first page is no locator.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.docparse.layout.elements import Line

#: zones of running heads and feet, and the header's own lines
ZONES = frozenset({"<header>", "<headnote>", "<page>"})
#: the pages read (0-based: the first three)
PAGES = 3
MAX_LINE = 160
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
#: a volume with its first page or page range: "379, 1-10", "279:123-9", "12 (3), 45"
_VOLUME_PAGES = re.compile(r"\b\d{1,4}\s*(?:\(\s*[\w-]{1,8}\s*\))?\s*[:,]\s*[A-Za-z]?\d{1,6}\b")
#: a line that cites another work, not the document
_CITES = re.compile(r"\bet al\b|\b(?:see|cf\.|in:)\s", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")


def running_locator(lines: Sequence[Line], zones: Sequence[str],
                    parse: Callable[[str], GrobidBiblio]) -> GrobidBiblio | None:
    """The locator the running heads give, or None."""
    found: list[str] = []
    pages: Counter[str] = Counter()
    for line, zone in zip(lines, zones, strict=True):
        if zone not in ZONES or not line.tokens or line.tokens[0].page >= PAGES:
            continue
        text = " ".join(line.text.split())
        if len(text) > MAX_LINE or not _YEAR.search(text) \
                or not _VOLUME_PAGES.search(text) or _CITES.search(text):
            continue
        # a running head's page number changes from page to page: its shape repeats
        shape = _DIGITS.sub("#", text)
        if shape not in pages:
            found.append(text)
        pages[shape] += 1
    for text in sorted(found, key=lambda t: -pages[_DIGITS.sub("#", t)]):
        ref = parse(text)
        if ref.journal and ref.date and (ref.volume or ref.first_page or ref.pages):
            return ref
    return None
