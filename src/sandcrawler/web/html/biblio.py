"""Bibliographic metadata of a landing page (``html_biblio``, ``models.html_biblio``),
read from a parsed tree.

Sources, best first within each field: Highwire ``citation_*``, ``bepress_citation_*``,
EPrints ``eprints.*``, PRISM ``prism.*``, Dublin Core (``dc.*``, ``DC.*``, ``dcterms.*``),
Open Graph, then JSON-LD (``ScholarlyArticle``/``Article``) for what the tags left empty,
then the ``<title>``. Meta names are compared lower-cased, so ``DC.Title`` is ``dc.title``.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable, Iterator
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser

from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import normalize_doi
from sandcrawler.core.textfix import readable
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.web.http.urls import absolute_url

#: field -> meta names (lower-cased), best first; the first name present wins
FIELDS: dict[str, tuple[str, ...]] = {
    "title": ("citation_title", "bepress_citation_title", "eprints.title", "prism.title",
              "dc.title", "dcterms.title", "og:title"),
    "doi": ("citation_doi", "bepress_citation_doi", "prism.doi", "dc.identifier.doi",
            "doi", "eprints.id_number", "dc.identifier", "dcterms.identifier"),
    "pmid": ("citation_pmid",),
    "pmcid": ("citation_pmcid",),
    "arxiv_id": ("citation_arxiv_id",),
    "release_date": ("citation_publication_date", "bepress_citation_publication_date",
                     "prism.publicationdate", "citation_date", "bepress_citation_date",
                     "citation_online_date", "bepress_citation_online_date",
                     "eprints.date", "dc.date.issued", "dc.date.created", "dc.issued",
                     "dcterms.issued", "dcterms.date", "dc.date", "datepublished",
                     "article:published_time"),
    "publisher": ("citation_publisher", "bepress_citation_publisher", "eprints.publisher",
                  "dc.publisher", "dcterms.publisher"),
    "container_name": ("citation_journal_title", "bepress_citation_journal_title",
                       "citation_conference_title", "prism.publicationname",
                       "eprints.publication", "dc.source", "dc.relation.ispartof",
                       "og:site_name"),
    "container_abbrev": ("citation_journal_abbrev",),
    "container_issn": ("citation_issn", "bepress_citation_issn", "prism.issn", "prism.eissn",
                       "eprints.issn", "dc.source.issn"),
    "volume": ("citation_volume", "bepress_citation_volume", "eprints.volume", "prism.volume",
               "dc.citation.volume"),
    "issue": ("citation_issue", "bepress_citation_issue", "eprints.number",
              "prism.issueidentifier", "prism.number", "dc.citation.issue"),
    "first_page": ("citation_firstpage", "bepress_citation_firstpage", "prism.startingpage",
                   "dc.citation.spage"),
    "last_page": ("citation_lastpage", "bepress_citation_lastpage", "prism.endingpage",
                  "dc.citation.epage"),
    "abstract": ("citation_abstract", "bepress_citation_abstract", "eprints.abstract",
                 "dcterms.abstract", "dc.description", "og:description"),
    "release_type": ("citation_article_type", "prism.contenttype", "eprints.type", "dc.type"),
    "lang": ("citation_language", "bepress_citation_language", "dc.language",
             "dcterms.language"),
    "pdf_fulltext_url": ("citation_pdf_url", "bepress_citation_pdf_url",
                         "eprints.document_url"),
    "xml_fulltext_url": ("citation_xml_url",),
    "html_fulltext_url": ("citation_fulltext_html_url",),
}
#: list field -> meta names; the first name present gives the whole list
LIST_FIELDS: dict[str, tuple[str, ...]] = {
    "contrib_raw_names": ("citation_author", "bepress_citation_author", "eprints.creators_name",
                          "dc.creator", "dc.creator.personalname", "dcterms.creator",
                          "dc.contributor", "article:author"),
    "raw_references": ("citation_reference",),
}
URL_FIELDS = ("pdf_fulltext_url", "xml_fulltext_url", "html_fulltext_url")
JSONLD_TYPES = frozenset({"ScholarlyArticle", "Article", "MedicalScholarlyArticle"})
#: at most this many values of one meta name are kept (a page of 100,000 tags stays cheap)
MAX_VALUES = 2000
MAX_JSONLD_CHARS = 2 * 2**20

_DOI_IN_TEXT = re.compile(r"\b(10\.\d{4,9}/\S+)")
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%Y-%m", "%Y/%m", "%Y", "%b %d, %Y", "%B %d, %Y",
                 "%d %b %Y", "%d %B %Y", "%Y%m%d")


def collect_meta(tree: LexborHTMLParser) -> dict[str, list[str]]:
    """Meta name (or property, itemprop; ``id="DOI"`` as D-Lib has it), lower-cased ->
    its non-empty contents in document order."""
    found: dict[str, list[str]] = {}
    for node in tree.css("meta"):
        attrs = node.attributes
        # readable: a page in cp1252 declared (or taken as) ISO-8859-1 has C1 controls
        content = readable((attrs.get("content") or "").strip())
        if not content:
            continue
        for key in ("name", "property", "itemprop"):
            name = (attrs.get(key) or "").strip().lower()
            if name:
                break
        else:
            name = "doi" if (attrs.get("id") or "").lower() == "doi" else ""
        if name:
            values = found.setdefault(name, [])
            if len(values) < MAX_VALUES:
                values.append(content)
    return found


def extract_biblio(tree: LexborHTMLParser, meta: dict[str, list[str]],
                   base_url: str | None) -> HtmlBiblio | None:
    """The page's ``html_biblio``, or None when it has no metadata."""
    # the fields in the order they are found: the record's JSON keeps it
    out: dict[str, str | list[str] | int] = {}
    for field, names in LIST_FIELDS.items():
        for name in names:
            if name in meta:
                out[field] = list(meta[name])
                break
    for field, names in FIELDS.items():
        for name in names:
            value = _field_value(field, meta.get(name, ()), base_url)
            if value is not None:
                out[field] = value
                break
    for key, found in _jsonld_fields(tree, base_url).items():
        out.setdefault(key, found)
    if "title" not in out:
        node = tree.css_first("title")
        title = " ".join(node.text().split())[:1000] if node is not None else ""
        if title:
            out["title"] = title
    date = out.get("release_date")
    if isinstance(date, str):
        year = _year(date)
        if year is not None:
            out["release_year"] = year
    return HtmlBiblio.model_validate(out) if out else None


def _field_value(field: str, values: Iterable[str], base_url: str | None) -> str | None:
    for value in values:
        if field == "doi":
            doi = doi_or_none(value)
            if doi is not None:
                return doi
            continue
        if field in URL_FIELDS:
            url = absolute_url(value, base_url or "")
            if url is not None:
                return url
            continue
        if field == "release_date":
            return iso_date(value)
        return " ".join(value.split())
    return None


def doi_or_none(value: str) -> str | None:
    """The normalised DOI in ``value`` (``doi:``, resolver URLs and ``info:doi/`` allowed)."""
    text = value.strip()
    if text.lower().startswith("info:doi/"):
        text = text[9:]
    try:
        return normalize_doi(text)
    except RecordError:
        pass
    match = _DOI_IN_TEXT.search(text) if "doi" in text.lower() else None
    if match:
        try:
            return normalize_doi(match.group(1).rstrip(".,;"))
        except RecordError:
            return None
    return None


def iso_date(value: str) -> str:
    """``YYYY-MM-DD`` (or ``YYYY-MM``, ``YYYY``) when the date is readable, else as given."""
    text = " ".join(value.split())
    head = text[:10] if re.match(r"\d{4}-\d{2}-\d{2}[T ]", text) else text
    for fmt in _DATE_FORMATS:
        try:
            parsed = datetime.datetime.strptime(head, fmt)
        except ValueError:
            continue
        if fmt in ("%Y", ):
            return f"{parsed.year:04d}"
        if fmt in ("%Y-%m", "%Y/%m"):
            return f"{parsed.year:04d}-{parsed.month:02d}"
        return parsed.date().isoformat()
    return text


def _year(value: str) -> int | None:
    match = re.match(r"(\d{4})", value)
    if match and 1000 < int(match.group(1)) < 3000:
        return int(match.group(1))
    return None


# --- JSON-LD ---------------------------------------------------------------------------

#: a JSON-LD object as the page has it: JSON of any shape, looked at with isinstance
JsonLdObject = dict[str, object]


def jsonld_objects(tree: LexborHTMLParser) -> Iterator[JsonLdObject]:
    """Article-typed JSON-LD objects of the page (top level, in lists, in ``@graph``);
    scripts that are not JSON, or nested deeper than the json module reads (about a
    thousand levels: Python's recursion limit), are skipped."""
    for node in tree.css('script[type="application/ld+json" i]'):
        text = node.text() or ""
        if len(text) > MAX_JSONLD_CHARS:
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            continue
        yield from _articles(data, depth=0)


def _articles(data: object, depth: int) -> Iterator[JsonLdObject]:
    if depth > 4:
        return
    if isinstance(data, list):
        for item in data[:100]:
            yield from _articles(item, depth + 1)
    elif isinstance(data, dict):
        given = data.get("@type")
        types = ({given} if isinstance(given, str)
                 else {t for t in given if isinstance(t, str)} if isinstance(given, list)
                 else set())
        if types & JSONLD_TYPES:
            yield data
        if "@graph" in data:
            yield from _articles(data["@graph"], depth + 1)


def _jsonld_fields(tree: LexborHTMLParser, base_url: str | None) -> dict[str, str | list[str]]:
    """``html_biblio`` fields from the article objects, the first object that has a
    field giving it, in the order found."""
    out: dict[str, str | list[str]] = {}
    for obj in jsonld_objects(tree):
        title = _text(obj.get("headline")) or _text(obj.get("name"))
        if title:
            out.setdefault("title", title)
        names = [n for n in (_person(a) for a in _as_list(obj.get("author"))) if n]
        if names:
            out.setdefault("contrib_raw_names", names)
        date = _text(obj.get("datePublished"))
        if date:
            out.setdefault("release_date", iso_date(date))
        for candidate in (_as_list(obj.get("doi")) + _as_list(obj.get("identifier"))
                          + _as_list(obj.get("sameAs")) + _as_list(obj.get("@id"))):
            value = candidate.get("value") if isinstance(candidate, dict) else candidate
            doi = doi_or_none(value) if isinstance(value, str) else None
            if doi:
                out.setdefault("doi", doi)
                break
        publisher = obj.get("publisher")
        name = _text(publisher.get("name")) if isinstance(publisher, dict) else _text(publisher)
        if name:
            out.setdefault("publisher", name)
        part = obj.get("isPartOf")
        container = _text(part.get("name")) if isinstance(part, dict) else None
        if container:
            out.setdefault("container_name", container)
        for kind, url in jsonld_media(obj, base_url):
            out.setdefault(f"{kind}_fulltext_url", url)
    return out


def jsonld_media(obj: JsonLdObject, base_url: str | None) -> Iterator[tuple[str, str]]:
    """``(kind, absolute url)`` of an article's ``encoding``/``associatedMedia`` files."""
    for media in _as_list(obj.get("encoding")) + _as_list(obj.get("associatedMedia")):
        if not isinstance(media, dict):
            continue
        raw = media.get("contentUrl") or media.get("url")
        if not isinstance(raw, str):
            continue
        url = absolute_url(raw, base_url or "")
        if url is None:
            continue
        fmt = str(media.get("encodingFormat") or media.get("fileFormat") or "").lower()
        path = url.split("?", 1)[0].lower()
        if "pdf" in fmt or path.endswith(".pdf"):
            yield "pdf", url
        elif "xml" in fmt or path.endswith(".xml"):
            yield "xml", url
        elif "html" in fmt:
            yield "html", url


def _as_list(value: object) -> list[object]:
    if value is None:
        return []
    return list(value[:1000]) if isinstance(value, list) else [value]


def _text(value: object) -> str | None:
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, str | int) and not isinstance(value, bool):
        text = " ".join(str(value).split())
        return text or None
    return None


def _person(value: object) -> str | None:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        name = _text(value.get("name"))
        if name:
            return name
        parts = [_text(value.get("givenName")), _text(value.get("familyName"))]
        return " ".join(p for p in parts if p) or None
    return None


def base_href(tree: LexborHTMLParser, page_url: str) -> str:
    """The URL relative links resolve against: the first ``<base href>`` when it is an
    http(s) URL (itself resolved against the page), else the page URL."""
    node = tree.css_first("base[href]")
    if node is not None:
        raw = (node.attributes.get("href") or "").strip()
        if raw:
            resolved = absolute_url(urljoin(page_url, raw), page_url)
            if resolved is not None:
                return resolved
    return page_url
