"""``Reader``: the lookups the system makes of its own records, behind one interface
with two implementations that answer identically (tests/db/test_reader.py):
``readers.sql`` (SQL on the engine) and ``readers.postgrest`` (the read-only API
over HTTP, so a worker on another machine needs no database credentials)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from sandcrawler.db.queries import Key
from sandcrawler.db.rows import (
    CatalogueRow,
    CitationTableRow,
    CrossrefWithRefsRow,
    GrobidRefsRow,
    IngestFileResultRow,
)
from sandcrawler.records.capture import CdxRecord


class Reader(Protocol):
    """The system's lookups of its own records (see the module docstring)."""

    def ingest_hits(self, keys: Iterable[Key]) -> dict[Key, IngestFileResultRow]:
        """The ``ingest_file_result`` rows that are hits among ``(ingest_type, base_url)``."""
        ...

    def ingest_file_result(self, ingest_type: str,
                           base_url: str) -> IngestFileResultRow | None:
        """The recorded result of this request, hit or not."""
        ...

    def capture(self, url: str) -> CdxRecord | None:
        """The latest ``web_cdx`` capture of exactly this URL."""
        ...

    def document_by_sha1(self, sha1hex: str) -> list[CatalogueRow]:
        """``catalogue`` rows of documents holding this file, by UUID."""
        ...

    def document_by_doi(self, doi: str) -> list[CatalogueRow]:
        """``catalogue`` rows of documents with this DOI, by UUID."""
        ...

    def grobid_refs(self, source: str, source_id: str) -> GrobidRefsRow | None:
        """The ``grobid_refs`` row (``source_id`` lower-cased for ``crossref``: a DOI)."""
        ...

    def crossref_with_refs(self, doi: str) -> CrossrefWithRefsRow | None:
        """The Crossref record with its parsed references, if any."""
        ...

    def citations(self, citing: str) -> list[CitationTableRow]:
        """The ``citation`` rows of a citing side (``doi:<doi>``, ``uuid:<uuid>``;
        lower-cased), by ``ref_index``."""
        ...

    def cited_by(self, doi: str, *, offset: int = 0,
                 limit: int = 50) -> tuple[int, list[CitationTableRow]]:
        """How many ``citation`` rows resolved to ``doi`` (lower-cased), and a page of
        them by citing side, then ``ref_index``."""
        ...

    def close(self) -> None: ...
