"""The rows the readers answer, as typed records (``readers/``).

A whole row of a relation is a ``TypedDict`` of its columns (``db/schema.py``):
it stays the dict every reader answered before (SQL and PostgREST alike, compared
by tests/db/test_reader.py) and the type checker sees each column. Timestamps are
aware UTC datetimes; JSON columns are the documents as stored.

The pages' lookups select a few columns of a relation: those rows are typed here
too, named for what they are, so nothing reads a column a query did not select.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeAlias, TypedDict

#: a JSON document as stored (a Crossref record, a request, a manifest entry): its
#: shape is its author's, so its values are whatever the JSON holds
JsonObject: TypeAlias = dict[str, Any]


# --- whole rows of a relation -------------------------------------------------------------


class IngestFileResultRow(TypedDict):
    ingest_type: str
    base_url: str
    updated: datetime
    hit: bool
    status: str | None
    terminal_url: str | None
    terminal_dt: str | None
    terminal_status_code: int | None
    terminal_sha1hex: str | None


class IngestFilesetColumns(TypedDict):
    """The ``ingest_fileset_platform`` columns a row and its page view share."""

    ingest_type: str
    base_url: str
    hit: bool
    status: str | None
    platform_name: str
    platform_domain: str
    platform_id: str
    ingest_strategy: str | None
    total_size: int | None
    file_count: int | None
    archiveorg_item_name: str | None
    archiveorg_item_bundle_path: str | None
    web_bundle_url: str | None
    web_bundle_dt: str | None


class IngestFilesetRow(IngestFilesetColumns):
    updated: datetime
    manifest: list[Any] | None


class IngestRequestRow(TypedDict):
    link_source: str
    link_source_id: str
    ingest_type: str
    base_url: str
    ingest_request_source: str | None
    created: datetime
    release_stage: str | None
    request: JsonObject | None


class CatalogueRow(TypedDict):
    uuid: str
    sha1: str | None
    doi: str | None
    pmid: str | None
    pmcid: str | None
    arxiv: str | None
    resources: list[str]
    updated: datetime
    title: str | None


class GrobidRefsRow(TypedDict):
    source: str
    source_id: str
    source_ts: datetime | None
    updated: datetime
    refs_json: list[Any]


class CrossrefWithRefsRow(TypedDict):
    """The ``crossref_with_refs`` view: a Crossref record and its parsed references
    (``refs_json`` None when none were parsed)."""

    doi: str
    indexed: datetime
    record: JsonObject
    source_ts: datetime | None
    refs_json: list[Any] | None


class CitationTableRow(TypedDict):
    """A ``citation`` row: one reference of a citing work resolved against the
    catalog (``match/resolving.py`` writes them). ``citing`` is ``doi:<doi>`` or
    ``uuid:<uuid>``; ``ref_index`` the reference's 0-based place in its list;
    ``cited_doi`` set only when the status is a match (``exact``, ``strong``)."""

    citing: str
    ref_index: int
    ref_key: str | None
    cited_doi: str | None
    status: str
    score: float | None
    reasons: list[str] | None
    updated: datetime


# --- the columns a page's lookup selects --------------------------------------------------


class IngestStatus(TypedDict):
    """Which request an ingest result answers, and how it ended."""

    ingest_type: str
    base_url: str
    status: str | None


class RecentIngest(IngestStatus):
    updated: datetime


class ListedIngest(RecentIngest):
    """A file (``kind`` ``file``) or dataset (``dataset``) ingest result in a list;
    a dataset result has no ``terminal_url``."""

    terminal_url: str | None
    kind: str


class RecentCapture(TypedDict):
    url: str
    datetime: str
    status_code: int | None
    mimetype: str | None
    warc_path: str
    warc_offset: int


class TimelineCapture(TypedDict):
    """A capture of a URL the timeline lists (the URL is the timeline's)."""

    datetime: str
    status_code: int | None
    mimetype: str | None
    location: str | None
    size: int | None
    sha1hex: str | None
    warc_path: str
    warc_offset: int


class CrossrefTitle(TypedDict):
    """A Crossref record's DOI and its ``title`` as deposited (a list of strings,
    usually)."""

    doi: str
    title: Any


class IngestStatusCount(TypedDict):
    """How many ingest results (file or dataset) of one type ended with one status."""

    ingest_type: str
    status: str | None
    count: int
