"""GROBID's consolidation against our own catalog: a biblio matched in the
match index (docs/matching.md) takes the matched Crossref work's metadata
(level 1) or only its DOI (level 2); a header's level 3 looks up the DOI the
header itself gives. GROBID asks Crossref or biblio-glutton; here the catalog
is the ``crossref`` table behind the match index, and without one the service
answers as if consolidation were 0 (docs/grobid-service.md)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from grobid_tei_xml.types import GrobidAuthor, GrobidBiblio

from sandcrawler.match.matcher import Matcher
from sandcrawler.records.refs import biblio_json

#: a DOI -> that work's Crossref record (the API's ``message``), or None
CrossrefLookup = Callable[[str], Mapping[str, Any] | None]
_TAG = re.compile(r"<[^>]{1,200}>")
_BOOK_PARTS = frozenset({"proceedings-article", "book-chapter", "book-section", "book-part"})


def _plain(value: Any) -> str | None:
    """The first string of a Crossref field (a list or a string), markup removed."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    if not isinstance(value, str):
        return None
    return " ".join(_TAG.sub("", value).split()) or None


def _date(work: Mapping[str, Any]) -> str | None:
    for key in ("issued", "published-print", "published-online", "published"):
        parts = (work.get(key) or {}).get("date-parts") or []
        first = parts[0] if parts and isinstance(parts[0], list) else []
        numbers = [p for p in first if isinstance(p, int)]
        if numbers:
            return "-".join([f"{numbers[0]:04d}", *(f"{n:02d}" for n in numbers[1:3])])
    return None


def _authors(work: Mapping[str, Any]) -> list[GrobidAuthor]:
    out = []
    for a in work.get("author") or []:
        if not isinstance(a, Mapping):
            continue
        given, family = _plain(a.get("given")), _plain(a.get("family"))
        name = " ".join(x for x in (given, family) if x) or _plain(a.get("name"))
        if name:
            out.append(GrobidAuthor(full_name=name, given_name=given, surname=family))
    return out


def merge(biblio: GrobidBiblio, work: Mapping[str, Any], doi: str) -> None:
    """``work``'s metadata into ``biblio``: what the work states replaces what was
    read; authors keep what was read of them (e-mail, affiliation) when the work
    names as many; the string as read, the label and the position stay."""
    biblio.doi = doi
    if title := _plain(work.get("title")):
        biblio.title = title
    if container := _plain(work.get("container-title")):
        if work.get("type") in _BOOK_PARTS:
            biblio.book_title, biblio.journal = container, None
        else:
            biblio.journal = container
    for field, key in (("publisher", "publisher"), ("volume", "volume"), ("issue", "issue")):
        if value := _plain(work.get(key)):
            setattr(biblio, field, value)
    if page := _plain(work.get("page")):
        first, _, last = page.partition("-")
        biblio.pages, biblio.first_page, biblio.last_page = page, first or None, last or None
    if date := _date(work):
        biblio.date = date
    authors = _authors(work)
    if authors and len(authors) == len(biblio.authors):
        for read, stated in zip(biblio.authors, authors, strict=True):
            read.full_name, read.given_name = stated.full_name, stated.given_name
            read.middle_name, read.surname = None, stated.surname
    elif authors:
        biblio.authors = authors


class Consolidator:
    """Consolidation with ``matcher`` (the match index) and ``crossref`` (the
    records of the matched works). Requests' threads match one at a time (an
    index engine may keep a batch's state)."""

    def __init__(self, matcher: Matcher, crossref: CrossrefLookup) -> None:
        self.matcher = matcher
        self.crossref = crossref
        self._lock = threading.Lock()

    def _apply(self, biblio: GrobidBiblio, doi: str, level: int) -> bool:
        if level == 2:
            biblio.doi = doi
            return True
        work = self.crossref(doi)
        if work is None:  # matched in the index, gone from the table: the DOI at least
            biblio.doi = doi
            return True
        merge(biblio, work, doi)
        return True

    def citations(self, biblios: Sequence[GrobidBiblio], level: int) -> int:
        """Consolidate ``biblios`` in place at ``level`` (1 or 2); how many matched."""
        if level not in (1, 2) or not biblios:
            return 0
        with self._lock:
            results = self.matcher.match_many([dict(biblio_json(b)) for b in biblios])
        done = 0
        for biblio, result in zip(biblios, results, strict=True):
            if result.matched and result.doi:
                done += self._apply(biblio, result.doi, level)
        return done

    def header(self, biblio: GrobidBiblio, level: int) -> bool:
        """Consolidate a document's header in place at ``level`` (1, 2, or 3: by
        the DOI it gives, only); whether it matched."""
        if level == 3:
            doi = (biblio.doi or "").strip().lower()
            if not doi or self.crossref(doi) is None:
                return False
            return self._apply(biblio, doi, 1)
        return self.citations([biblio], level) == 1
