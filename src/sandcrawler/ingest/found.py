"""What the crawl hands to processing: the full text it found, on disk, with
where it came from and what the crawl knows of the work (as catalogue metadata
layers); and the interface of a processor of one kind of full text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sandcrawler.models.capture import CdxRecord
from sandcrawler.models.files import FileMeta
from sandcrawler.models.ingest import IngestRequest, Processing
from sandcrawler.models.statuses import ProcessingStatus
from sandcrawler.storage.precedence import IDENTIFIER_FIELDS, Layer, Source

_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


@dataclass(slots=True)
class FoundFile:
    """The terminal of a successful crawl.

    ``path`` is the body on disk (valid during ``process``), ``cdx`` its capture
    (a response, or a revisit of a payload held already), ``biblio`` the landing
    page's ``html_biblio`` and ``references`` its ``citation_reference`` strings
    (both empty when the URL was the file itself), ``identifiers`` the work's
    normalised identifiers (``doi``, ``pmcid``, ``pmid``, ``arxiv``) from the
    request's ``ext_ids`` and the landing page.
    """

    path: Path
    file_meta: FileMeta
    cdx: CdxRecord
    request: IngestRequest
    biblio: dict[str, Any] = field(default_factory=dict)
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


def landing_page_metadata(biblio: Mapping[str, Any]) -> dict[str, Any]:
    """A landing page's ``html_biblio`` in Crossref's field names."""
    md: dict[str, Any] = {}
    for key, name in (("doi", "DOI"), ("pmid", "pmid"), ("pmcid", "pmcid"),
                      ("arxiv_id", "arxiv_id"), ("publisher", "publisher"),
                      ("volume", "volume"), ("issue", "issue"), ("abstract", "abstract")):
        if biblio.get(key):
            md[name] = biblio[key]
    for key, name in (("title", "title"), ("container_name", "container-title"),
                      ("container_issn", "ISSN")):
        if biblio.get(key):
            md[name] = [biblio[key]]
    if names := [n for n in biblio.get("contrib_raw_names") or () if n]:
        md["author"] = [{"name": n} for n in names]
    if biblio.get("first_page"):
        last = biblio.get("last_page")
        md["page"] = f"{biblio['first_page']}-{last}" if last else str(biblio["first_page"])
    if biblio.get("lang"):
        md["language"] = str(biblio["lang"]).lower()
    if biblio.get("release_date") and (m := _DATE.match(str(biblio["release_date"]))):
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
