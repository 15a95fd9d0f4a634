"""What the crawl hands to processing: the full text it found, on disk, with
where it came from; and the interface of a processor of one kind of full text."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sandcrawler.models.capture import CdxRecord
from sandcrawler.models.files import FileMeta
from sandcrawler.models.ingest import IngestRequest, Processing
from sandcrawler.models.statuses import ProcessingStatus


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
