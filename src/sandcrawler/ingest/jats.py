"""The processor of JATS XML full text (``ingest_type`` ``xml``).

The file must be a JATS article (root ``article``, or a wrapper holding one). It
is stored byte for byte as the document's ``nxml`` primary resource, catalogued
from its front matter (ranked above the request's identifiers and the landing
page's ``html_biblio``), its ``ref-list`` becomes the document's ``grobid_refs`` row,
and with a catalog it is identified and its references resolved
(docs/ingest.md, "JATS full text").
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import datetime
from typing import Literal

from sandcrawler.citations.base import CitationParser
from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import normalize_doi, normalize_pmcid, normalize_pmid
from sandcrawler.core.safexml import MAX_XML_BYTES, XLINK_HREF, XML_LANG, parse_xml, text_of
from sandcrawler.core.timestamps import parse_timestamp
from sandcrawler.ingest.found import FoundFile, over_limit
from sandcrawler.match.document import DocumentMatcher, Origin, landing_source, metadata_source
from sandcrawler.records.catalogue_metadata import (
    CatalogueMetadata,
    CrossrefAuthor,
    JatsAccount,
    Licence,
)
from sandcrawler.records.ingest import Processing
from sandcrawler.records.statuses import ProcessingStatus
from sandcrawler.refs.reading import (
    RefsWriter,
    find_article,
    refs_from_jats,
    refs_from_meta,
)
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.precedence import Layer, Source

KIND = "xml"
#: pub-date types, most wanted first (``pub-type`` in NLM/JATS 1.0, ``date-type`` after)
_DATE_TYPES = ("epub", "ppub", "pub", "epub-ppub", "collection", "epreprint")
#: front-matter elements -> their catalogue field (``numero`` only when ``issue`` is absent)
_LOCATORS: tuple[tuple[str, Literal["volume", "issue", "article-number"]], ...] = (
    ("volume", "volume"), ("issue", "issue"), ("numero", "issue"),
    ("elocation-id", "article-number"))
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", re.IGNORECASE)


def capture_time(found: FoundFile) -> datetime | None:
    """The capture's time (CDX ``datetime``, 14 digits UTC): the version of the
    document the references were read from (``grobid_refs.source_ts``)."""
    dt = found.cdx.datetime
    try:
        return parse_timestamp(f"{dt[:4]}-{dt[4:6]}-{dt[6:8]}T{dt[8:10]}:{dt[10:12]}:{dt[12:14]}Z")
    except (ValueError, RecordError):
        return None


class ParserHolder:
    """A citation parser built on first use from a factory, closed with the processor."""

    def __init__(self, factory: Callable[[], CitationParser] | None) -> None:
        self.factory = factory
        self._parser: CitationParser | None = None

    def get(self) -> CitationParser | None:
        if self._parser is None and self.factory is not None:
            self._parser = self.factory()
        return self._parser

    def close(self) -> None:
        if self._parser is not None:
            self._parser.close()
            self._parser = None


class JatsProcessor:
    """``Processor`` of JATS XML. ``parser_factory`` builds the citation parser for
    plain-text ``citation_reference`` strings (used only when the article has no
    ``ref-list``); without one they are kept unparsed."""

    def __init__(self, catalogue: Catalogue, refs: RefsWriter, *,
                 parser_factory: Callable[[], CitationParser] | None = None,
                 max_bytes: int = MAX_XML_BYTES,
                 documents: DocumentMatcher | None = None) -> None:
        self.catalogue = catalogue
        self.documents = documents
        self.refs = refs
        self.parser = ParserHolder(parser_factory)
        self.max_bytes = max_bytes

    def process(self, found: FoundFile) -> Processing:
        if (over := over_limit(found, self.max_bytes, KIND, "XML")) is not None:
            return over
        try:
            root = parse_xml(found.path.read_bytes(), "the XML", self.max_bytes)
        except RecordError as e:
            return Processing(kind=KIND, status=e.status, error=str(e))
        article = find_article(root)
        if article is None:
            return Processing(kind=KIND, status=ProcessingStatus.NOT_JATS,
                              error=f"the root element is <{root.tag}>, not a JATS <article> "
                                    "nor a wrapper holding one")
        metadata = jats_metadata(article)
        if article is not root:
            metadata["jats"]["wrapper"] = root.tag
        refs = refs_from_jats(article)
        refs_from = "jats"
        if not refs and found.references:
            refs, refs_from = refs_from_meta(found.references, self.parser.get()), "meta"
        try:
            entry = self.catalogue.add_file(
                found.path, kind="nxml", sha1=found.file_meta.sha1hex,
                layers=[Layer(Source.JATS, metadata), *found.layers()])
        except RecordError as e:
            return Processing(kind=KIND, status=e.status, error=str(e))
        written = self.refs.write(entry.uuid, refs, capture_time(found))
        if self.documents is not None:
            sources = [metadata_source(Origin.JATS, metadata), landing_source(found.biblio)]
            self.documents.identify_file(entry.uuid, found.file_meta.sha1hex,
                                         [s for s in sources if s is not None])
            if self.documents.resolve_references(entry.uuid, refs).stored:
                entry = self.catalogue.refresh(entry.uuid)
        return Processing(kind=KIND, status=ProcessingStatus.SUCCESS, uuid=entry.uuid,
                          resources=list(entry.resources), references=written,
                          references_from=refs_from if written else None)

    def close(self) -> None:
        # the catalogue and the engine are shared services, closed by their owner
        self.parser.close()


# -- front matter -----------------------------------------------------------------------------


def _child(el: ET.Element | None, *path: str) -> ET.Element | None:
    for tag in path:
        if el is None:
            return None
        el = next((c for c in el if c.tag == tag), None)
    return el


def _children(el: ET.Element | None, tag: str) -> list[ET.Element]:
    return [] if el is None else [c for c in el if c.tag == tag]


def _date_parts(el: ET.Element) -> list[int] | None:
    parts = []
    for tag in ("year", "month", "day"):
        value = text_of(_child(el, tag))
        if not value or not value.isdigit():
            break
        parts.append(int(value))
    if not parts or not 1000 <= parts[0] <= 2999:
        return None
    if len(parts) > 1 and not 1 <= parts[1] <= 12:
        parts = parts[:1]
    if len(parts) > 2 and not 1 <= parts[2] <= 31:
        parts = parts[:2]
    return parts


def _pub_date(meta: ET.Element) -> list[int] | None:
    dates = _children(meta, "pub-date")
    by_type = {(d.get("pub-type") or d.get("date-type") or "").lower(): d for d in reversed(dates)}
    ranked = [by_type[t] for t in _DATE_TYPES if t in by_type] + dates
    return next((p for d in ranked if (p := _date_parts(d))), None)


def _author(contrib: ET.Element) -> CrossrefAuthor | None:
    name = _child(contrib, "name")
    if name is None:
        name = _child(contrib, "string-name")
    author: CrossrefAuthor = {}
    if name is not None:
        given, family = text_of(_child(name, "given-names")), text_of(_child(name, "surname"))
        if given:
            author["given"] = given
        if family:
            author["family"] = family
        if not given and not family and (full := text_of(name)):
            author["name"] = full
    elif (collab := _child(contrib, "collab")) is not None and (full := text_of(collab)):
        author["name"] = full
    if not author:
        return None
    for cid in (*_children(contrib, "contrib-id"), *_children(contrib, "uri")):
        kind = (cid.get("contrib-id-type") or cid.get("content-type") or "").lower()
        m = _ORCID.search(text_of(cid) or cid.get(XLINK_HREF) or "")
        if kind == "orcid" and m:
            author["ORCID"] = f"https://orcid.org/{m.group(1).upper()}"
            break
    return author


def _authors(meta: ET.Element) -> list[CrossrefAuthor]:
    found = []
    for group in _children(meta, "contrib-group"):
        for contrib in _children(group, "contrib"):
            if (contrib.get("contrib-type") or "author").lower() != "author":
                continue
            if (author := _author(contrib)) is not None:
                found.append(author)
    return found


def _clean(normalise: Callable[[str], str], value: str | None) -> str | None:
    try:
        return normalise(value) if value else None
    except RecordError:
        return None


def jats_metadata(article: ET.Element) -> CatalogueMetadata:
    """Catalogue metadata (Crossref's field names) from a JATS article's front matter."""
    front = _child(article, "front")
    meta = _child(front, "article-meta")
    journal = _child(front, "journal-meta")
    md: CatalogueMetadata = {}
    if meta is None:
        meta = ET.Element("article-meta")
    group = _child(meta, "title-group")
    titles = [t for el in _children(group, "article-title") if (t := text_of(el))]
    if titles:
        md["title"] = titles
    subtitles = [t for el in _children(group, "subtitle") if (t := text_of(el))]
    if subtitles:
        md["subtitle"] = subtitles
    if authors := _authors(meta):
        md["author"] = authors
    abstract = next((a for a in _children(meta, "abstract")
                     if (a.get("abstract-type") or "") not in ("graphical", "teaser", "toc")),
                    None)
    if text := text_of(abstract, sep=" "):
        md["abstract"] = text
    container = (text_of(_child(journal, "journal-title-group", "journal-title"))
                 or text_of(_child(journal, "journal-title")))
    if container:
        md["container-title"] = [container]
    if issns := [t for el in _children(journal, "issn") if (t := text_of(el))]:
        md["ISSN"] = issns
    if publisher := text_of(_child(journal, "publisher", "publisher-name")):
        md["publisher"] = publisher
    for tag, key in _LOCATORS:
        if key not in md and (value := text_of(_child(meta, tag))):
            md[key] = value
    first, last = text_of(_child(meta, "fpage")), text_of(_child(meta, "lpage"))
    if first:
        md["page"] = f"{first}-{last}" if last and last != first else first
    if parts := _pub_date(meta):
        md["issued"] = {"date-parts": [parts]}
    for aid in _children(meta, "article-id"):
        kind, value = (aid.get("pub-id-type") or "").lower(), text_of(aid)
        if not value:
            continue
        if kind == "doi" and "DOI" not in md and (doi := _clean(normalize_doi, value)):
            md["DOI"] = doi
        elif kind == "pmid" and "pmid" not in md and (pmid := _clean(normalize_pmid, value)):
            md["pmid"] = pmid
        elif kind in ("pmc", "pmcid") and "pmcid" not in md and (
                pmcid := _clean(normalize_pmcid, value)):
            md["pmcid"] = pmcid
        elif kind in ("publisher-id", "") and "publisher_id" not in md:
            md["publisher_id"] = value
    licences: list[Licence] = []
    for lic in _children(_child(meta, "permissions"), "license"):
        url = lic.get(XLINK_HREF) or next(
            (text_of(r) for r in lic.iter() if r.tag.endswith("license_ref")), None)
        if url:
            licences.append({"URL": url.strip()})
    if licences:
        md["license"] = licences
    keywords = [t for g in _children(meta, "kwd-group") for k in _children(g, "kwd")
                if (t := text_of(k))]
    if keywords:
        md["keywords"] = keywords
    if lang := article.get(XML_LANG) or article.get("lang"):
        md["language"] = lang.lower()
    account: JatsAccount = {}
    if article_type := article.get("article-type"):
        account["article-type"] = article_type
    if dtd_version := article.get("dtd-version"):
        account["dtd-version"] = dtd_version
    md["jats"] = account
    return md
