"""Consolidation against our own catalog, in-process: a biblio matched in the
match index (docs/matching.md) takes the matched Crossref work's metadata
(level 1) or only its DOI (level 2); a header's level 3 looks up the DOI the
header itself gives. GROBID asks Crossref or biblio-glutton; here the catalog
is the ``crossref`` table behind the match index.

Two policies, one code: the GROBID-compatible service replaces what was read
with what the work states, as GROBID does (docs/grobid-service.md); ``extract
--consolidate`` keeps what the page said and fills in what it did not
(``keep_read``), and says which fields it filled and which the page and the
catalog disagree on (docs/extraction.md, "Consolidation")."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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


@dataclass(slots=True)
class Consolidation:
    """What consolidating one biblio did: the matched work's DOI, the fields it
    filled in, and the fields where the page and the work disagree (kept as
    read with ``keep_read``, replaced otherwise)."""

    doi: str
    filled: list[str] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"doi": self.doi, "filled": self.filled, "differs": self.differs}


def _stated(work: Mapping[str, Any]) -> dict[str, str]:
    """The work's fields, under the biblio's names."""
    out: dict[str, str] = {}
    if title := _plain(work.get("title")):
        out["title"] = title
    if container := _plain(work.get("container-title")):
        out["book_title" if work.get("type") in _BOOK_PARTS else "journal"] = container
    for name in ("publisher", "volume", "issue"):
        if value := _plain(work.get(name)):
            out[name] = value
    if page := _plain(work.get("page")):
        first, _, last = page.partition("-")
        out["pages"] = page
        if first:
            out["first_page"] = first
        if last:
            out["last_page"] = last
    if date := _date(work):
        out["date"] = date
    return out


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def merge(biblio: GrobidBiblio, work: Mapping[str, Any], doi: str, *,
          keep_read: bool = False) -> Consolidation:
    """``work``'s metadata into ``biblio``: what the work states replaces what was
    read (``keep_read``: only fills what was not read); authors keep what was
    read of them (e-mail, affiliation) when the work names as many; the string
    as read, the label and the position stay."""
    done = Consolidation(doi)
    if biblio.doi and biblio.doi.lower() != doi.lower():
        done.differs.append("doi")
    elif not biblio.doi:
        done.filled.append("doi")
    biblio.doi = doi
    stated = _stated(work)
    if "book_title" in stated and not keep_read:
        biblio.journal = None  # a chapter's container is its book
    for name, value in stated.items():
        read = getattr(biblio, name)
        if not read:
            setattr(biblio, name, value)
            done.filled.append(name)
        elif not _same(str(read), value):
            done.differs.append(name)
            if not keep_read:
                setattr(biblio, name, value)
    authors = _authors(work)
    if authors and len(authors) == len(biblio.authors):
        for read_author, stated_author in zip(biblio.authors, authors, strict=True):
            if keep_read and read_author.surname:
                # the page's names stand; a given name the page gave as initials only
                # is completed
                if not read_author.given_name and stated_author.given_name:
                    read_author.given_name = stated_author.given_name
                continue
            read_author.full_name = stated_author.full_name
            read_author.given_name = stated_author.given_name
            read_author.middle_name, read_author.surname = None, stated_author.surname
    elif authors and not biblio.authors:
        biblio.authors = authors
        done.filled.append("authors")
    elif authors and not keep_read:
        biblio.authors = authors
        done.differs.append("authors")
    elif authors:
        done.differs.append("authors")
    return done


class Consolidator:
    """Consolidation with ``matcher`` (the match index) and ``crossref`` (the
    records of the matched works). Requests' threads match one at a time (an
    index engine may keep a batch's state)."""

    def __init__(self, matcher: Matcher, crossref: CrossrefLookup) -> None:
        self.matcher = matcher
        self.crossref = crossref
        self._lock = threading.Lock()

    def _apply(self, biblio: GrobidBiblio, doi: str, level: int,
               keep_read: bool = False) -> Consolidation:
        if level == 2:
            done = Consolidation(doi, filled=[] if biblio.doi else ["doi"])
            biblio.doi = doi
            return done
        work = self.crossref(doi)
        if work is None:  # matched in the index, gone from the table: the DOI at least
            done = Consolidation(doi, filled=[] if biblio.doi else ["doi"])
            biblio.doi = doi
            return done
        return merge(biblio, work, doi, keep_read=keep_read)

    def citations(self, biblios: Sequence[GrobidBiblio], level: int) -> int:
        """Consolidate ``biblios`` in place at ``level`` (1 or 2); how many matched."""
        if level not in (1, 2) or not biblios:
            return 0
        with self._lock:
            results = self.matcher.match_many([dict(biblio_json(b)) for b in biblios])
        done = 0
        for biblio, result in zip(biblios, results, strict=True):
            if result.matched and result.doi:
                self._apply(biblio, result.doi, level)
                done += 1
        return done

    def header(self, biblio: GrobidBiblio, level: int, *,
               keep_read: bool = False) -> Consolidation | None:
        """Consolidate a document's header in place at ``level`` (1, 2, or 3: by
        the DOI it gives, only); what it did, or None when nothing matched."""
        if level == 3:
            doi = (biblio.doi or "").strip().lower()
            if not doi or self.crossref(doi) is None:
                return None
            return self._apply(biblio, doi, 1, keep_read)
        if level not in (1, 2):
            return None
        with self._lock:
            result = self.matcher.match_many([dict(biblio_json(biblio))])[0]
        if not (result.matched and result.doi):
            return None
        return self._apply(biblio, result.doi, level, keep_read)
