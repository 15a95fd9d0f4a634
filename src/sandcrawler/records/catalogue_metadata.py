"""What one source says about a document, as the catalogue stores it: Crossref's
field names (JATS front matter, a landing page's meta tags, trafilatura's, a PDF
header), merged by ``storage.precedence``.

TypedDicts, not record classes: these dicts are the stored JSON itself, keys in the
order each writer found them, and the merge takes any field a user gives."""

from __future__ import annotations

from typing import TypedDict


class Affiliation(TypedDict):
    """As Crossref writes an affiliation: ``[{"name": ...}]``."""

    name: str


class CrossrefAuthor(TypedDict, total=False):
    """An author; a PDF header's keeps its missing names as null."""

    given: str | None
    family: str | None
    name: str | None
    ORCID: str
    affiliation: list[Affiliation]


#: ``{"date-parts": [[year, month, day]]}``, month and day when known
Issued = TypedDict("Issued", {"date-parts": list[list[int]]})

class Licence(TypedDict):
    URL: str

#: the JATS file's own account (``RECORDS`` in storage.precedence)
JatsAccount = TypedDict("JatsAccount", {
    "article-type": str, "dtd-version": str, "wrapper": str}, total=False)


class HtmlAccount(TypedDict, total=False):
    """trafilatura's own fields for an HTML full text, and its word count."""

    title: str
    author: str
    date: str
    sitename: str
    hostname: str
    url: str
    license: str
    language: str
    description: str
    pagetype: str
    word_count: int


#: catalogue metadata as one source gives it; every field optional
CatalogueMetadata = TypedDict("CatalogueMetadata", {
    "title": list[str], "subtitle": list[str], "author": list[CrossrefAuthor],
    "abstract": str, "container-title": list[str], "ISSN": list[str], "publisher": str,
    "volume": str, "issue": str, "article-number": str, "page": str, "issued": Issued,
    "DOI": str, "pmid": str, "pmcid": str, "arxiv_id": str, "publisher_id": str,
    "license": list[Licence], "keywords": list[str], "language": str,
    "jats": JatsAccount, "html": HtmlAccount}, total=False)
