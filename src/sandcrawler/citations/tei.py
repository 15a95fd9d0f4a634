"""GROBID ``processCitationList`` TEI -> ``GrobidBiblio``, in one pass per reference.

The result equals ``grobid_tei_xml.parse_citation_list_xml`` field for field (a
test compares them on real GROBID output). That function runs some thirty
ElementPath searches over every ``<biblStruct>``, which made it the largest
part of the refs pipeline's CPU time; here each reference's elements are
visited once and the first match for every field is kept, which is what those
searches return. A ``<biblStruct>`` holding something this module does not
model (``<contributor role="editor">``) is handed to grobid_tei_xml itself.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grobid_tei_xml import GrobidBiblio
from grobid_tei_xml.parse import _parse_biblio as _library_parse_biblio
from grobid_tei_xml.types import GrobidAddress, GrobidAffiliation, GrobidAuthor

_XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
_TEI_XMLNS = 'xmlns="http://www.tei-c.org/ns/1.0"'
_IDNO_FIELDS = {
    "DOI": "doi", "PMID": "pmid", "PMCID": "pmcid", "arXiv": "arxiv_id", "PII": "pii",
    "ark": "ark", "istexId": "istex_id", "ISSN": "issn", "eISSN": "eissn",
}
# (parent, child) paths whose first match is wanted: ".//parent/child"
_CHILD_PATHS = {"publicationStmt": "publisher", "respStmt": "orgName", "imprint": "publisher"}


def _text(el: ET.Element | None) -> str | None:
    """ElementPath ``findtext``: None when absent, "" when present but empty."""
    return None if el is None else (el.text or "")


def _first_child(el: ET.Element, tag: str, **attrs: str) -> ET.Element | None:
    for child in el:
        if child.tag == tag and all(child.get(k) == v for k, v in attrs.items()):
            return child
    return None


def _persname(el: ET.Element) -> GrobidAuthor:
    full_name = " ".join(t.strip() for t in el.itertext() if t.strip()).strip()
    return GrobidAuthor(
        full_name=full_name or None,
        given_name=_text(_first_child(el, "forename", type="first")),
        middle_name=_text(_first_child(el, "forename", type="middle")),
        surname=_text(_first_child(el, "surname")),
    )


def _affiliation(el: ET.Element) -> GrobidAffiliation | None:
    orgs = {org.get("type"): org.text or None for org in el
            if org.tag == "orgName" and org.get("type")}
    if not orgs:
        return None
    aff = GrobidAffiliation(
        institution=orgs.get("institution"),
        department=orgs.get("department"),
        laboratory=orgs.get("laboratory"),
    )
    address = _first_child(el, "address")
    if address is not None:
        parts = {t.tag.split("}")[-1]: t.text or None for t in address}
        if parts:
            aff.address = GrobidAddress(
                addr_line=parts.get("addrLine"),
                post_code=parts.get("postCode"),
                settlement=parts.get("settlement"),
                country=parts.get("country"),
            )
    return aff


def _author(el: ET.Element) -> GrobidAuthor | None:
    persname = _first_child(el, "persName")
    if persname is None:
        return None
    author = _persname(persname)
    orcid = next((i for i in el.iter("idno") if i.get("type") == "ORCID"), None)
    author.orcid = _text(orcid)
    author.email = _text(_first_child(el, "email"))
    affiliation = _first_child(el, "affiliation")
    if affiliation is not None:
        author.affiliation = _affiliation(affiliation)
    return author


def _editors(el: ET.Element) -> list[GrobidAuthor]:
    persnames = [p for p in el if p.tag == "persName"]
    if not persnames:
        if len(el) == 0 and el.text and len(el.text.strip()) >= 2:
            return [GrobidAuthor(full_name=el.text.strip())]
        return []
    return [_persname(p) for p in persnames]


def parse_biblstruct(elem: ET.Element) -> GrobidBiblio:
    """One ``<biblStruct>`` (TEI namespace already stripped)."""
    authors: list[GrobidAuthor] = []
    editors: list[GrobidAuthor] = []
    first: dict[str, ET.Element] = {}
    idnos: dict[str, ET.Element] = {}

    def keep(key: str, el: ET.Element) -> None:
        if key not in first:
            first[key] = el

    nodes = elem.iter()
    next(nodes)  # ".//x" searches descendants only
    for el in nodes:
        tag = el.tag
        if tag == "author":
            author = _author(el)
            if author is not None:
                authors.append(author)
        elif tag == "editor":
            editors.extend(_editors(el))
        elif tag == "title":
            level, kind = el.get("level"), el.get("type")
            if kind == "main":
                keep("title", el)
            if level == "j":
                keep("journal", el)
                if kind == "abbrev":
                    keep("journal_abbrev", el)
            elif level == "s":
                keep("series_title", el)
            elif level == "m":
                keep("book_title", el)
        elif tag == "note":
            keep("note", el)
            if el.get("type") == "raw_reference":
                keep("raw", el)
        elif tag == "biblScope":
            unit = el.get("unit")
            if unit in ("volume", "issue", "page"):
                keep(unit, el)
        elif tag == "idno":
            field = _IDNO_FIELDS.get(el.get("type", ""))
            if field is not None and field not in idnos:
                idnos[field] = el
        elif tag == "date":
            if el.get("type") == "published":
                keep("date", el)
        elif tag == "ptr":
            if el.get("target") is not None:
                keep("ptr", el)
        elif tag in _CHILD_PATHS:
            child = _first_child(el, _CHILD_PATHS[tag])
            if child is not None:
                keep(tag, child)
        elif tag == "contributor" and el.get("role") == "editor":
            return _library_parse_biblio(elem, ns="")

    biblio = GrobidBiblio(
        authors=authors,
        editors=editors or None,
        id=elem.get(_XML_ID),
        unstructured=_text(first.get("raw")),
        title=_text(first.get("title")),
        journal=_text(first.get("journal")),
        journal_abbrev=_text(first.get("journal_abbrev")),
        series_title=_text(first.get("series_title")),
        publisher=_text(first.get("publicationStmt")),
        institution=_text(first.get("respStmt")),
        volume=_text(first.get("volume")),
        issue=_text(first.get("issue")),
        doi=_text(idnos.get("doi")),
        pmid=_text(idnos.get("pmid")),
        pmcid=_text(idnos.get("pmcid")),
        arxiv_id=_text(idnos.get("arxiv_id")),
        pii=_text(idnos.get("pii")),
        ark=_text(idnos.get("ark")),
        istex_id=_text(idnos.get("istex_id")),
        issn=_text(idnos.get("issn")),
        eissn=_text(idnos.get("eissn")),
    )
    book_title = first.get("book_title")
    if book_title is not None and book_title.get("type") is None:
        biblio.book_title = book_title.text
    if biblio.book_title and not biblio.title:
        biblio.title, biblio.book_title = biblio.book_title, None
    note = first.get("note")
    if note is not None and note.get("type") is None:
        biblio.note = note.text
    if not biblio.publisher:
        biblio.publisher = _text(first.get("imprint"))
    date = first.get("date")
    if date is not None:
        biblio.date = date.get("when") or None
    if biblio.arxiv_id and biblio.arxiv_id.startswith("arXiv:"):
        biblio.arxiv_id = biblio.arxiv_id[6:]
    page = first.get("page")
    if page is not None:
        start, end = page.get("from"), page.get("to")
        if start:
            biblio.first_page = start
        if end:
            biblio.last_page = end
        biblio.pages = f"{start}-{end}" if start and end else page.text
    ptr = first.get("ptr")
    if ptr is not None:
        biblio.url = _clean_url(ptr.get("target"))
    doi_url = biblio.url and ("://doi.org/" in biblio.url or "://dx.doi.org/" in biblio.url)
    if biblio.doi and doi_url:
        biblio.url = None
    return biblio


def _clean_url(url: str | None) -> str | None:
    if not url:
        return None
    url = url.strip()
    if url.endswith(".Lastaccessed"):
        url = url.replace(".Lastaccessed", "")
    if url.startswith("<"):
        url = url[1:]
    if ">" in url:
        url = url.split(">")[0]
    return url or None


def parse_citation_list(xml: str) -> list[GrobidBiblio]:
    """All references of a processCitationList answer, ``index`` = position.

    Raises ``xml.etree.ElementTree.ParseError`` for XML that does not parse."""
    root = ET.fromstring(xml.replace(_TEI_XMLNS, ""))
    structs = [root] if root.tag == "biblStruct" else list(root.iter("biblStruct"))
    biblios = []
    for i, struct in enumerate(structs):
        biblio = parse_biblstruct(struct)
        biblio.index = i
        biblios.append(biblio)
    return biblios
