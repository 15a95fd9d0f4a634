"""What the crawl hands to processing: the full text it found, on disk, with
where it came from and what the crawl knows of the work (as catalogue metadata
layers); and the interface of a processor of one kind of full text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.catalogue_metadata import CatalogueMetadata
from sandcrawler.records.files import FileMeta
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.ingest import IngestRequest, Processing
from sandcrawler.records.statuses import ProcessingStatus
from sandcrawler.storage.precedence import IDENTIFIER_FIELDS, Layer, Source

_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


@dataclass(slots=True)
class FoundFile:
    """The terminal of a successful crawl.

    ``path`` is the body on disk (valid during ``process``), ``cdx`` its capture
    (a response, or a revisit of a payload held already), ``biblio`` the landing
    page's ``html_biblio`` and ``references`` its ``citation_reference`` strings
    (None and empty when the URL was the file itself), ``identifiers`` the work's
    normalised identifiers (``doi``, ``pmcid``, ``pmid``, ``arxiv``) from the
    request's ``ext_ids`` and the landing page.
    """

    path: Path
    file_meta: FileMeta
    cdx: CdxRecord
    request: IngestRequest
    biblio: HtmlBiblio | None = None
    references: list[str] = field(default_factory=list)
    identifiers: dict[str, str] = field(default_factory=dict)
    #: the landing page's URL, when the full text was found on one
    landing_url: str | None = None

    def layers(self) -> list[Layer]:
        """What the crawl knows of the work, for the catalogue: the identifiers
        (the request's, else the landing page's) and the landing page's meta tags.
        A processor adds what the file itself says; ``storage.precedence`` ranks them."""
        ids = {IDENTIFIER_FIELDS[scheme][0]: value
               for scheme, value in self.identifiers.items() if scheme in IDENTIFIER_FIELDS}
        return [Layer(Source.REQUEST, ids),
                Layer(Source.LANDING_PAGE, landing_page_metadata(self.biblio))]


#: the catalogue fields a landing page gives as a string, and as a one-item list
_StringField = Literal["DOI", "pmid", "pmcid", "arxiv_id", "publisher", "volume", "issue",
                      "abstract"]
_ListField = Literal["title", "container-title", "ISSN"]


def landing_page_metadata(biblio: HtmlBiblio | None) -> CatalogueMetadata:
    """A landing page's ``html_biblio`` in Crossref's field names."""
    md: CatalogueMetadata = {}
    if biblio is None:
        return md
    strings: tuple[tuple[_StringField, str | None], ...] = (
        ("DOI", biblio.doi), ("pmid", biblio.pmid), ("pmcid", biblio.pmcid),
        ("arxiv_id", biblio.arxiv_id), ("publisher", biblio.publisher),
        ("volume", biblio.volume), ("issue", biblio.issue), ("abstract", biblio.abstract))
    for name, value in strings:
        if value:
            md[name] = value
    lists: tuple[tuple[_ListField, str | None], ...] = (
        ("title", biblio.title), ("container-title", biblio.container_name),
        ("ISSN", biblio.container_issn))
    for list_name, value in lists:
        if value:
            md[list_name] = [value]
    if names := [n for n in biblio.contrib_raw_names or () if n]:
        md["author"] = [{"name": n} for n in names]
    if biblio.first_page:
        last = biblio.last_page
        md["page"] = f"{biblio.first_page}-{last}" if last else biblio.first_page
    if biblio.lang:
        md["language"] = biblio.lang.lower()
    if biblio.release_date and (m := _DATE.match(biblio.release_date)):
        md["issued"] = {"date-parts": [[int(p) for p in m.groups() if p]]}
    return md


class Processor(Protocol):
    """Processes one kind of full text (``pdf``, ``xml``, ``html``): stores it in
    the resource store and catalogue, extracts what it can, and says what it did.
    A file it cannot use is a ``Processing`` with an error status, not an
    exception; an infrastructure failure (store, database) raises."""

    def process(self, found: FoundFile) -> Processing: ...

    def close(self) -> None: ...


def over_limit(found: FoundFile, limit: int, kind: str, what: str) -> Processing | None:
    """The ``too-large`` processing of a file over a processor's ``limit`` (not
    read at all), or None."""
    size = found.file_meta.size_bytes
    if size <= limit:
        return None
    return Processing(kind=kind, status=ProcessingStatus.TOO_LARGE,
                      error=f"{size} bytes, over the {limit}-byte limit for {what}")
