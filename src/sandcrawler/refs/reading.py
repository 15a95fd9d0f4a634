"""References found with a full text, as ``grobid_refs`` rows.

Three sources, one shape (``GrobidBiblio.to_dict()``, with ``index`` and ``id``):
``refs_from_tei`` (GROBID TEI's ``listBibl``), ``refs_from_jats`` (a JATS
``ref-list``) and ``refs_from_meta`` (a landing page's ``citation_reference``
tags). ``RefsWriter`` upserts them as one row (source ``document``, the
document's UUID). XML is parsed by ``safexml``; XML that does not parse is
``bad-xml`` (docs/refs.md, "References read with a full text").
"""

from __future__ import annotations

import html
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from grobid_tei_xml import GrobidBiblio
from grobid_tei_xml.types import GrobidAuthor
from sqlalchemy import Engine, select

from sandcrawler.citations.base import CitationParser, parse_within_limit
from sandcrawler.citations.tei import parse_biblstruct
from sandcrawler.core.errors import CitationParseError, RecordError
from sandcrawler.core.identifiers import normalize_doi, normalize_pmcid, normalize_pmid
from sandcrawler.core.safexml import XLINK_HREF, parse_xml, text_of
from sandcrawler.db.engine import begin
from sandcrawler.db.persist import TABLES, upsert
from sandcrawler.db.schema import grobid_refs
from sandcrawler.records.refs import BiblioJson, GrobidRefsRow, biblio_json
from sandcrawler.storage.docid import parse_uuid

log = logging.getLogger(__name__)

#: ``grobid_refs.source`` of references found with a document's full text
SOURCE = "document"

# -- GROBID TEI --------------------------------------------------------------------------------


def refs_from_tei(tei: str | bytes) -> list[BiblioJson]:
    """The references of GROBID TEI: every ``listBibl/biblStruct`` (a lone
    ``biblStruct`` is one reference), ``index`` its position. The header's own
    ``biblStruct`` is not a reference. ``RecordError`` (``bad-xml``) if it does
    not parse."""
    root = parse_xml(tei, "GROBID TEI")
    if root.tag == "biblStruct":
        structs = [root]
    else:
        structs = [bs for lb in root.iter("listBibl") for bs in lb if bs.tag == "biblStruct"]
    refs = []
    for i, struct in enumerate(structs):
        biblio = parse_biblstruct(struct)
        biblio.index = i
        refs.append(biblio_json(biblio))
    return refs


# -- JATS ----------------------------------------------------------------------------------------

#: the citation elements of a ``<ref>``: structured first, NLM 2/3 names included
_STRUCTURED = ("element-citation", "nlm-citation", "citation", "mixed-citation")
#: publication types whose ``source`` is a book-level title, not a journal
_BOOKISH = {"book", "chapter", "confproc", "conf-proc", "conference", "proceedings", "report",
            "thesis", "patent", "standard"}
_PAGE_SPLIT = re.compile(r"\s*[-\u2010-\u2015]+\s*")


def find_article(root: ET.Element) -> ET.Element | None:
    """The JATS ``article`` element: the root, or the first one a wrapper
    (``pmc-articleset``, OAI-PMH) holds; None when there is none."""
    if root.tag == "article":
        return root
    return next((el for el in root.iter("article")
                 if any(c.tag in ("front", "body", "back") for c in el)), None)


def refs_from_jats(xml: bytes | str | ET.Element) -> list[BiblioJson]:
    """The ``<ref>`` elements of a JATS article's ``ref-list``s, in order.
    ``xml`` is the file's bytes or its parsed root (``safexml.parse_xml``)."""
    root = parse_xml(xml, "JATS") if isinstance(xml, bytes | str) else xml
    article = find_article(root)
    scope = article if article is not None else root
    return [biblio_json(_jats_ref(ref, i)) for i, ref in enumerate(_refs(scope))]


def _refs(scope: ET.Element) -> Iterator[ET.Element]:
    """Every ``ref`` of every ``ref-list`` (nested lists included), once, in order;
    a sub-article's references are its own document's, not these."""
    todo = [scope]
    while todo:
        el = todo.pop()
        children = [c for c in el if c.tag != "sub-article"]
        for child in children:
            if child.tag == "ref" and el.tag == "ref-list":
                yield child
        todo.extend(reversed([c for c in children if c.tag != "ref"]))


def _first(el: ET.Element, *tags: str) -> ET.Element | None:
    for tag in tags:
        found = next(el.iter(tag), None)
        if found is not None:
            return found
    return None


def _child_text(el: ET.Element, tag: str) -> str | None:
    return text_of(next((c for c in el if c.tag == tag), None))


def _jats_name(el: ET.Element) -> GrobidAuthor | None:
    """``name`` / ``string-name`` / ``collab`` → GrobidAuthor."""
    if el.tag == "collab":
        name = text_of(el)
        return GrobidAuthor(full_name=name) if name else None
    surname = _child_text(el, "surname")
    given = _child_text(el, "given-names")
    if surname or given:
        suffix = _child_text(el, "suffix")
        full = " ".join(p for p in (given, surname, suffix) if p)
        return GrobidAuthor(full_name=full, given_name=given, surname=surname)
    name = text_of(el)
    return GrobidAuthor(full_name=name) if name else None


def _jats_people(cit: ET.Element) -> tuple[list[GrobidAuthor], list[GrobidAuthor]]:
    authors: list[GrobidAuthor] = []
    editors: list[GrobidAuthor] = []
    for el in cit:
        if el.tag == "person-group":
            role = (el.get("person-group-type") or "author").lower()
            people = [p for c in el if c.tag in ("name", "string-name", "collab")
                      if (p := _jats_name(c)) is not None]
            if role == "author":
                authors.extend(people)
            elif role == "editor":
                editors.extend(people)
        elif el.tag in ("name", "string-name", "collab") and (p := _jats_name(el)):
            authors.append(p)
    return authors, editors


def _jats_date(cit: ET.Element) -> str | None:
    year = _child_text(cit, "year") or text_of(_first(cit, "year"))
    m = re.search(r"\b(1[5-9]\d\d|20\d\d)", year or "")
    if not m:
        return None
    month, day = _child_text(cit, "month"), _child_text(cit, "day")
    if month and month.isdigit() and 1 <= int(month) <= 12:
        if day and day.isdigit() and 1 <= int(day) <= 31:
            return f"{m.group(1)}-{int(month):02d}-{int(day):02d}"
        return f"{m.group(1)}-{int(month):02d}"
    return m.group(1)


def _clean_doi(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return normalize_doi(value)
    except RecordError:
        return None


def _clean_id(value: str | None, normalise: Any) -> str | None:
    try:
        return normalise(value) if value else None
    except RecordError:
        return None


def _jats_ref(ref: ET.Element, index: int) -> GrobidBiblio:
    cit = _first(ref, *_STRUCTURED)
    mixed = _first(ref, "mixed-citation")
    if cit is None:  # a <ref> holding only text (or a <note>)
        parts = [t for c in ref if c.tag != "label" for t in [text_of(c)] if t]
        return GrobidBiblio(authors=[], index=index, id=ref.get("id"),
                            unstructured=" ".join(parts) or None)
    authors, editors = _jats_people(cit)
    kind = (cit.get("publication-type") or cit.get("citation-type") or "").lower()
    biblio = GrobidBiblio(
        authors=authors, editors=editors or None, index=index, id=ref.get("id"),
        # mixed-citation keeps the reference's punctuation; the others only fields
        unstructured=_mixed_text(mixed) if mixed is not None else text_of(cit, sep=" "),
        date=_jats_date(cit),
        volume=_child_text(cit, "volume"),
        issue=_child_text(cit, "issue") or _child_text(cit, "numero"),
        publisher=_child_text(cit, "publisher-name"),
        institution=_child_text(cit, "institution"),
    )
    source = _child_text(cit, "source")
    chapter = _child_text(cit, "chapter-title")
    article_title = _child_text(cit, "article-title") or _child_text(cit, "part-title")
    if chapter:
        biblio.title, biblio.book_title = chapter, source
    elif article_title:
        biblio.title = article_title
        if kind in _BOOKISH:
            biblio.book_title = source
        else:
            biblio.journal = source
    elif kind in ("journal", "") and source and (biblio.volume or biblio.issue):
        biblio.journal = source
    else:
        biblio.title = source or _child_text(cit, "data-title")
    biblio.series_title = _child_text(cit, "series")
    _jats_pages(cit, biblio)
    for pid in cit.iter("pub-id"):
        kind_id, value = (pid.get("pub-id-type") or "").lower(), text_of(pid)
        if kind_id == "doi" and not biblio.doi:
            biblio.doi = _clean_doi(value)
        elif kind_id == "pmid" and not biblio.pmid:
            biblio.pmid = _clean_id(value, normalize_pmid)
        elif kind_id in ("pmc", "pmcid") and not biblio.pmcid:
            biblio.pmcid = _clean_id(value, normalize_pmcid)
        elif kind_id == "arxiv" and not biblio.arxiv_id:
            biblio.arxiv_id = value
    for link in (*cit.iter("ext-link"), *cit.iter("uri")):
        url = (link.get(XLINK_HREF) or text_of(link) or "").strip()
        if (link.get("ext-link-type") or "").lower() == "doi" and not biblio.doi:
            biblio.doi = _clean_doi(url)
        elif url.lower().startswith(("http://", "https://", "ftp://")) and not biblio.url:
            doi = _clean_doi(url) if "doi.org/" in url else None
            if doi:
                biblio.doi = biblio.doi or doi
            else:
                biblio.url = url
    return biblio


def _mixed_text(cit: ET.Element) -> str | None:
    """A mixed-citation's text as written, but a name's parts (``<surname>`` and
    ``<given-names>``, often with nothing between them) spaced apart."""
    out: list[str] = []
    todo: list[ET.Element | str] = [cit]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif item.tag in ("name", "string-name") and len(item):
            out.append(f" {text_of(item, sep=' ') or ''}")
        else:
            out.append(item.text or "")
            for child in reversed(item):
                todo.append(child.tail or "")
                todo.append(child)
    return " ".join("".join(out).split()) or None


def _jats_pages(cit: ET.Element, biblio: GrobidBiblio) -> None:
    first, last = _child_text(cit, "fpage"), _child_text(cit, "lpage")
    page_range = _child_text(cit, "page-range")
    if not first and page_range:
        bounds = _PAGE_SPLIT.split(page_range, maxsplit=1)
        first = bounds[0] or None
        last = bounds[1] if len(bounds) > 1 and bounds[1] else None
    if first:
        biblio.first_page, biblio.last_page = first, last
        biblio.pages = f"{first}-{last}" if last else first
    elif eloc := _child_text(cit, "elocation-id"):
        biblio.pages = eloc


# -- Highwire citation_reference -----------------------------------------------------------------

#: the start of a ``key=value`` pair (keys are ``citation_…``)
_KEY = re.compile(r"(?:^|;)\s*(citation_[a-z_]+)\s*=", re.IGNORECASE)
_DATE = re.compile(r"^\s*(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?")
#: key (without ``citation_``) -> GrobidBiblio field, for the plain string fields
_META_FIELDS = {
    "title": "title", "journal_title": "journal", "journal_abbrev": "journal_abbrev",
    "inbook_title": "book_title", "book_title": "book_title",
    "conference_title": "book_title", "conference": "book_title",
    "series_title": "series_title", "publisher": "publisher",
    "technical_report_institution": "institution", "dissertation_institution": "institution",
    "volume": "volume", "issue": "issue", "firstpage": "first_page",
    "first_page": "first_page", "lastpage": "last_page", "last_page": "last_page",
    "issn": "issn", "arxiv_id": "arxiv_id", "url": "url", "abstract_html_url": "url",
    "fulltext_html_url": "url", "pdf_url": "url",
}
_META_DATES = ("publication_date", "date", "year", "online_date", "cover_date")


def is_key_value(text: str) -> bool:
    """A ``citation_reference`` made of ``citation_key=value`` pairs."""
    return bool(re.match(r"\s*citation_[a-z_]+\s*=", text, re.IGNORECASE))


def parse_key_values(text: str) -> list[tuple[str, str]]:
    """``citation_title=A; B;citation_year=2001;`` → [("title", "A; B"), ("year", "2001")]:
    a value runs to the next ``;citation_…=``, so it may hold semicolons."""
    marks = list(_KEY.finditer(text))
    pairs = []
    for m, after in zip(marks, [*marks[1:], None], strict=True):
        end = after.start() if after is not None else len(text)
        value = text[m.end():end].strip().rstrip(";").strip()
        if "&" in value:
            value = html.unescape(value)
        if value:
            pairs.append((m.group(1).lower().removeprefix("citation_"), " ".join(value.split())))
    return pairs


def _meta_author(name: str) -> GrobidAuthor:
    """``Cheng, Z.`` or ``Z. Cheng``: surname and given names when the form says."""
    if "," in name:
        surname, _, given = name.partition(",")
        surname, given = surname.strip(), given.strip()
        full = f"{given} {surname}".strip()
        return GrobidAuthor(full_name=full, given_name=given or None, surname=surname or None)
    parts = name.split()
    if len(parts) >= 2:
        return GrobidAuthor(full_name=name, given_name=" ".join(parts[:-1]), surname=parts[-1])
    return GrobidAuthor(full_name=name, surname=name)


def _meta_date(value: str) -> str | None:
    m = _DATE.match(value)
    if not m:
        return None
    year, month, day = m.groups()
    if month and 1 <= int(month) <= 12:
        if day and 1 <= int(day) <= 31:
            return f"{year}-{int(month):02d}-{int(day):02d}"
        return f"{year}-{int(month):02d}"
    return year


def biblio_from_key_values(text: str, index: int | None = None) -> GrobidBiblio:
    """A ``key=value`` citation_reference as a GrobidBiblio; ``unstructured`` is
    the content as found, so that no key this does not map is lost."""
    biblio = GrobidBiblio(authors=[], index=index, unstructured=" ".join(text.split()))
    editors: list[GrobidAuthor] = []
    for key, value in parse_key_values(text):
        if key in ("author", "authors"):
            names = value.split(";") if key == "authors" else [value]
            biblio.authors.extend(_meta_author(n.strip()) for n in names if n.strip())
        elif key == "editor":
            editors.append(_meta_author(value))
        elif key in _META_DATES:
            if not biblio.date:
                biblio.date = _meta_date(value)
        elif key == "doi":
            biblio.doi = biblio.doi or _clean_doi(value)
        elif key == "pmid":
            biblio.pmid = biblio.pmid or _clean_id(value, normalize_pmid)
        elif key == "pmcid":
            biblio.pmcid = biblio.pmcid or _clean_id(value, normalize_pmcid)
        elif (field := _META_FIELDS.get(key)) and not getattr(biblio, field):
            setattr(biblio, field, value)
    biblio.editors = editors or None
    if biblio.book_title and not biblio.title:
        biblio.title, biblio.book_title = biblio.book_title, None
    if biblio.first_page:
        last = biblio.last_page
        biblio.pages = f"{biblio.first_page}-{last}" if last else biblio.first_page
    return biblio


def refs_from_meta(strings: Sequence[str],
                   parser: CitationParser | None = None) -> list[BiblioJson]:
    """Highwire ``citation_reference`` contents, ``index`` their position (empty ones
    are skipped). ``key=value`` ones are parsed here; the plain-text ones go to
    ``parser`` in one ``parse_lists`` call, or without a parser (or when it fails
    for them) are kept as ``unstructured`` only. An unusable parser backend
    raises (``InfrastructureError``)."""
    biblios: dict[int, GrobidBiblio] = {}
    plain: list[tuple[int, str]] = []
    for i, raw in enumerate(strings):
        text = " ".join(html.unescape(raw).split()) if "&" in raw else " ".join(raw.split())
        if not text:
            continue
        if is_key_value(raw):
            biblios[i] = biblio_from_key_values(raw, i)
        else:
            plain.append((i, text))
    parsed: list[GrobidBiblio] | None = None
    if plain and parser is not None:
        got = parse_within_limit(parser, [[t for _, t in plain]])[0]
        if isinstance(got, CitationParseError):
            log.warning("citation_reference strings kept unparsed: %s", got)
        else:
            parsed = got
    for n, (i, text) in enumerate(plain):
        biblio = parsed[n] if parsed is not None else GrobidBiblio(authors=[], unstructured=text)
        biblio.index = i
        biblio.unstructured = biblio.unstructured or text
        biblios[i] = biblio
    return [biblio_json(biblios[i]) for i in sorted(biblios)]


# -- grobid_refs rows ----------------------------------------------------------------------------


class RefsWriter:
    """Writes a document's references as its ``grobid_refs`` row (``source``
    ``document``, ``source_id`` its UUID). A newer ``source_ts`` (the capture's
    time) replaces the row, an older one does not; rewriting the same is a no-op
    in effect."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def write(self, doc_uuid: str, refs: Sequence[BiblioJson],
              source_ts: datetime | None = None) -> int:
        """Upsert the row; returns how many references it holds (an empty list
        writes nothing and returns 0)."""
        if not refs:
            return 0
        row = GrobidRefsRow(source=SOURCE, source_id=parse_uuid(doc_uuid),
                            source_ts=source_ts, refs_json=[dict(r) for r in refs])
        with begin(self.engine) as conn:
            upsert(conn, TABLES["grobid_refs"], [row.model_dump()])
        return len(refs)

    def get(self, doc_uuid: str) -> list[dict[str, Any]] | None:
        """The document's stored references, None when it has no row: the stored
        JSON as it is (rows older than any shape of ours included)."""
        with begin(self.engine) as conn:
            return conn.execute(select(grobid_refs.c.refs_json).where(
                (grobid_refs.c.source == SOURCE)
                & (grobid_refs.c.source_id == parse_uuid(doc_uuid)))).scalar()
