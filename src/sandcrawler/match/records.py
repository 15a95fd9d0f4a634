"""CatalogRecord: the few fields of a Crossref work that matching reads, folded once.

Read from the Crossref REST API's work JSON by key (``title``, ``subtitle``,
``original-title``, ``short-title``, ``author[].family``/``name``, ``issued``,
``published-print``, ``published-online``, ``container-title``,
``short-container-title``, ``volume``, ``issue``, ``page``, ``type``,
``update-to``). A record may carry only some of them: the hidden catalogs of
real deployments hold works with a title, a surname, an abbreviated journal, a
volume and a page, and no date.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from sandcrawler.match.text import (
    first_page,
    fold,
    notice_kind,
    number_key,
    surname_key,
    surname_last,
    unmarked,
)

#: Crossref ``type`` values that are parts of another work
_COMPONENT_TYPES = frozenset({"component", "peer-review", "dataset"})
#: Crossref ``update-to[].type`` -> our notice kind
_UPDATE_KINDS = {"retraction": "retraction", "withdrawal": "retraction",
                 "expression_of_concern": "retraction", "expression-of-concern": "retraction"}

ARXIV_DOI_PREFIX = "10.48550/arxiv."


@dataclass(frozen=True, slots=True)
class CatalogRecord:
    doi: str
    #: folded titles: the title, the title with its subtitle, other titles
    #: (original-language, short) — any of them may be what a citation quotes
    titles: tuple[str, ...]
    #: folded surnames in author order (an organisation's name for a group author)
    surnames: tuple[str, ...]
    #: every year the work's dates give (print, online, issued)
    years: tuple[int, ...]
    #: folded container titles, full and abbreviated
    journals: tuple[str, ...]
    volume: str | None
    issue: str | None
    page: str | None
    #: erratum / retraction / reply / review / component, or None for a work itself
    kind: str | None
    type: str | None
    #: other identifiers the record carries: "pmid:…", "pmcid:…", "arxiv:…"
    alt_ids: tuple[str, ...] = ()

    def index_text(self) -> str:
        """What the full-text index holds for the record: its titles' words, once each."""
        seen: dict[str, None] = {}
        for t in self.titles:
            for w in t.split():
                seen[w] = None
        return " ".join(seen)

    def index_names(self) -> str:
        """What the full-text index holds of its authors: the first three surnames'
        last words (a reference that gives no title is found by them)."""
        return " ".join(dict.fromkeys(surname_last(n) for n in self.surnames[:3]))

    @property
    def locator(self) -> tuple[str, str] | None:
        """Where a reference that gives no title finds the work: its volume and
        first page; for a work without a volume (a proceedings paper, a chapter,
        an article numbered by year alone) its year and first page, the year
        marked (``year_locator``) so it never meets a volume of that number."""
        if not self.page:
            return None
        if self.volume:
            return self.volume, self.page
        if self.years:
            return year_locator(self.years[0]), self.page
        return None

    def dumps(self) -> bytes:
        return orjson.dumps([self.doi, self.titles, self.surnames, self.years, self.journals,
                             self.volume, self.issue, self.page, self.kind, self.type,
                             self.alt_ids])

    @classmethod
    def loads(cls, data: bytes | str) -> CatalogRecord:
        (doi, titles, surnames, years, journals, volume, issue, page, kind, type_,
         alt_ids) = orjson.loads(data)
        return cls(doi, tuple(titles), tuple(surnames), tuple(years), tuple(journals),
                   volume, issue, page, kind, type_, tuple(alt_ids))


def year_locator(year: int | str) -> str:
    """The volume part of a locator that stands for a year (a work without a volume)."""
    return f"y{year}"


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _year(date: Any) -> int | None:
    if not isinstance(date, Mapping):
        return None
    parts = date.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        y = parts[0][0]
        if isinstance(y, int) and 1500 <= y <= 2100:
            return y
        if isinstance(y, str) and y.isdigit() and 1500 <= int(y) <= 2100:
            return int(y)
    return None


def _kind(work: Mapping[str, Any], title: str, type_: str | None) -> str | None:
    """What kind of notice the work is (``text.notice_kind``), from Crossref's
    type and ``update-to`` first: an erratum's title may be the article's own."""
    if type_ in _COMPONENT_TYPES:
        return "component"
    updates = work.get("update-to")
    if isinstance(updates, list) and updates:
        first = updates[0]
        utype = first.get("type") if isinstance(first, Mapping) else None
        return _UPDATE_KINDS.get(str(utype).lower(), "erratum")
    return notice_kind(title)


def _unique(values: list[str]) -> tuple[str, ...]:
    if len(values) < 2:
        return tuple(values)
    return tuple(dict.fromkeys(values))


def from_crossref(doi: str, work: Mapping[str, Any]) -> CatalogRecord:
    """The record of one Crossref work (``doi`` already normalised). Written for
    speed: ``match index`` reads every work of the catalog through it."""
    get = work.get
    raw_titles = _strings(get("title"))
    titles = [f for t in raw_titles if (f := fold(t))]
    if raw_titles and (bare := unmarked(raw_titles[0])):
        titles.append(fold(bare))  # cited by the title it had before retraction
    if titles and (subtitles := _strings(get("subtitle"))):
        titles.append(f"{titles[0]} {fold(subtitles[0])}")
    for key in ("original-title", "short-title"):
        if key in work:
            titles += [f for t in _strings(get(key)) if (f := fold(t))]
    surnames: list[str] = []
    authors = get("author")
    if isinstance(authors, list):
        for a in authors:
            if isinstance(a, dict):
                name = a.get("family") or a.get("name")
                if isinstance(name, str) and (key := surname_key(name)):
                    surnames.append(key)
    years: list[int] = []
    for key in ("issued", "published-print", "published-online", "published"):
        if key in work and (y := _year(get(key))) is not None and y not in years:
            years.append(y)
    journals = [f for key in ("container-title", "short-container-title")
                for j in _strings(get(key)) if (f := fold(j))]
    type_ = get("type")
    if not isinstance(type_, str):
        type_ = None
    alt: list[str] = []
    for key in ("pmid", "pmcid"):  # as biblio-glutton's enriched records carry them
        value = get(key)
        if isinstance(value, str | int) and str(value).strip():
            alt.append(f"{key}:{str(value).strip().lower()}")
    if doi.startswith(ARXIV_DOI_PREFIX):
        alt.append(f"arxiv:{doi[len(ARXIV_DOI_PREFIX):]}")
    return CatalogRecord(
        doi=doi,
        titles=_unique(titles),
        surnames=tuple(surnames),
        years=tuple(years),
        journals=_unique(journals),
        volume=number_key(_text(get("volume"))),
        issue=number_key(_text(get("issue"))),
        page=first_page(_text(get("page"))),
        kind=_kind(work, raw_titles[0] if raw_titles else "", type_),
        type=type_,
        alt_ids=tuple(alt),
    )


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return None
