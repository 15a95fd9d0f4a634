"""Query: one biblio, in the shape of ``grobid_refs`` ``refs_json`` objects
(``GrobidBiblio.to_dict()``), made ready to compare against catalog records.

Fields read: ``title``, ``authors`` (objects with ``surname`` or
``full_name``, or plain strings), ``date`` (or ``year``), ``journal`` /
``journal_abbrev`` / ``book_title``, ``volume``, ``issue``, ``pages`` /
``first_page``, ``doi``, ``pmid``, ``pmcid``, ``arxiv_id``, ``unstructured``,
``id``. Anything else is ignored; a field of the wrong type is a ``BadBiblio``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import (
    normalize_arxiv,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
)
from sandcrawler.match.text import (
    CONFERENCE_WORDS,
    author_list_surnames,
    first_page,
    fold,
    is_garbage_title,
    is_generic,
    notice_kind,
    number_key,
    running_head,
    surname_key,
    surname_last,
    year_of,
)
from sandcrawler.records.statuses import MatchStatus

#: longer than any real title: the rest is not read (a 10,000-character "title"
#: is an extraction gone wrong, and folding it whole would cost for nothing)
MAX_FIELD = 2000
#: a reference string is cut here for the same reason
MAX_UNSTRUCTURED = 4000

# a word broken at a line end: "struc-\ntures"
_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(?=[a-z])")
_NEWLINES = re.compile(r"\s*\n\s*")


class BadBiblio(RecordError):
    """The line is JSON, but not a biblio."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=MatchStatus.BAD_BIBLIO)


@dataclass(frozen=True)
class Query:
    id: Any
    title: str  # folded
    surnames: tuple[str, ...]  # folded, in author order
    year: int | None
    journal: str  # folded
    volume: str | None
    issue: str | None
    page: str | None
    doi: str | None
    pmid: str | None
    pmcid: str | None
    arxiv: str | None
    #: the reference string, line breaks and hyphenation undone, folded
    raw: str
    #: the notice kind its title reads as (``text.notice_kind``)
    kind: str | None = None
    #: the input DOI did not normalise (kept to report it)
    bad_doi: str | None = None
    #: the input's title was not one (boilerplate, the author list, a running head)
    garbage_title: bool = False

    @cached_property
    def raw_words(self) -> frozenset[str]:
        """The reference string's words, asked of every candidate: made once."""
        return frozenset(self.raw.split())

    @cached_property
    def names_a_conference(self) -> bool:
        """The reference string names a conference outside its title: a venue
        left unparsed ("… based on time reversal. 2015 Asia-Pacific Microwave
        Conference (APMC).")."""
        rest = self.raw.replace(self.title, " ") if self.title else self.raw
        return bool(CONFERENCE_WORDS.search(rest))

    @cached_property
    def generic_title(self) -> bool:
        return bool(self.title) and is_generic(self.title)


    @property
    def has_locator(self) -> bool:
        """Journal, volume and first page: enough to find a work without a title."""
        return bool(self.journal and self.volume and self.page)

    def usable(self) -> bool:
        """Something to search on: a title that is not generic, a reference
        string, a locator, or a generic title with a locator or date."""
        if self.title and not self.generic_title:
            return True
        if len(self.raw.split()) >= 4:
            return True
        if self.has_locator:
            return True
        if len(self.surnames) >= 2 and self.year:
            return True  # found by its authors' names; matched only if much agrees
        if self.page and sum(map(bool, (self.surnames, self.journal, self.year))) >= 2:
            # a header's citation line without a title ("Acta Hortic 1989;(242):31-6"
            # under an author's name): the first page with two of author, venue
            # and year locates a work and confirms it
            return True
        return bool(self.title and self.year and (self.journal or self.surnames))


def unbreak(text: str) -> str:
    """A reference string as extracted from a PDF, made one line: a word broken
    by a hyphen at a line end is joined, other line breaks are spaces."""
    if "\n" not in text:
        return text
    return _NEWLINES.sub(" ", _HYPHEN_BREAK.sub(r"\1", text))


def _str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = value[0]  # Crossref's own shape: "title": ["..."]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() else str(value)
    if not isinstance(value, str):
        raise BadBiblio(f"{key!r} is a {type(value).__name__}, not a string")
    value = value[:MAX_FIELD].strip()
    return value or None


def _surnames(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise BadBiblio(f"'authors' is a {type(value).__name__}, not a list")
    out: list[str] = []
    for a in value[:200]:
        name: str | None = None
        if isinstance(a, Mapping):
            s = a.get("surname")
            if isinstance(s, str) and s.strip():
                name = s
            else:
                full = a.get("full_name") or a.get("name")
                if isinstance(full, str) and full.strip():
                    name = full.split(",")[0] if "," in full else full.split()[-1]
        elif isinstance(a, str) and a.strip():
            # "Smith, J." or "J. Smith"
            name = a.split(",")[0] if "," in a else a.split()[-1]
        if name and (key := surname_key(name[:MAX_FIELD])):
            out.append(key)
    return tuple(out)


def _names_an_author(listed: list[str], surnames: tuple[str, ...]) -> bool:
    """An author list in the title's place names one of the authors, when there
    are any: "E.C.G. BOOKLET" by East is a title shaped like initials and a name."""
    if not surnames:
        return True
    ours = {surname_last(s) for s in surnames}
    return any(surname_last(k) in ours for n in listed if (k := surname_key(n)))


def _id(normalize: Any, value: str | None) -> str | None:
    if not value:
        return None
    try:
        return str(normalize(value))
    except RecordError:
        return None


def query_from(obj: Any) -> Query:
    """The Query of one input biblio; ``BadBiblio`` when it is not one."""
    if not isinstance(obj, Mapping):
        raise BadBiblio(f"a biblio is a JSON object, not {type(obj).__name__}")
    title = _str(obj, "title")
    journal = _str(obj, "journal") or _str(obj, "journal_abbrev") or _str(obj, "book_title")
    pages = _str(obj, "first_page") or _str(obj, "pages")
    volume = _str(obj, "volume")
    issue = _str(obj, "issue")
    date = obj.get("date", obj.get("year"))
    surnames = _surnames(obj.get("authors"))
    garbage = False
    if title and (head := running_head(title)):
        # the page's running head, not the title: what it says is the locator
        journal = journal or head.journal
        volume = volume or head.volume
        issue = issue or head.issue
        pages = pages or head.page
        date = date or head.year
        title, garbage = None, True
    elif title and (listed := author_list_surnames(title)) is not None \
            and _names_an_author(listed, surnames):
        # the author list in the title's place: its names are the authors
        surnames = surnames or tuple(k for n in listed if (k := surname_key(n)))
        title, garbage = None, True
    elif title and is_garbage_title(fold(title), surnames):
        title, garbage = None, True
    raw = _str(obj, "unstructured")
    doi_in = _str(obj, "doi")
    doi = _id(normalize_doi, doi_in)
    return Query(
        id=obj.get("id"),
        title=fold(title) if title else "",
        surnames=surnames,
        year=year_of(date),
        journal=fold(journal) if journal else "",
        volume=number_key(volume),
        issue=number_key(issue),
        page=first_page(pages),
        doi=doi,
        pmid=_id(normalize_pmid, _str(obj, "pmid")),
        pmcid=_id(normalize_pmcid, _str(obj, "pmcid")),
        arxiv=_id(normalize_arxiv, _str(obj, "arxiv_id")),
        raw=fold(unbreak(raw[:MAX_UNSTRUCTURED])) if raw else "",
        kind=notice_kind(title) if title else None,
        garbage_title=garbage,
        bad_doi=doi_in if doi_in and not doi else None,
    )
