"""What each page of ``sandcrawler serve`` shows, as typed records.

A page's data is one JSON document: its template reads it by key and the same
document is the page's JSON (``?format=json``), so each is a ``TypedDict``: the
type checker sees every key and the JSON keeps its shape. Timestamps are ISO 8601
strings here (``iso_utc``); links are relative paths of this site.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from sandcrawler.db.rows import (
    IngestFilesetColumns,
    JsonObject,
    RecentCapture,
    TimelineCapture,
)
from sandcrawler.site.fields import FamilyView, MetadataView
from sandcrawler.storage.catalogue import CatalogueIds

# --- pieces several pages list -------------------------------------------------------------


class CaptureFields(TypedDict):
    """A capture's ``web_cdx`` row (``CdxRecord.to_row``)."""

    surt: str
    datetime: str
    url: str
    mimetype: str | None
    status_code: int | None
    sha1hex: str | None
    warc_csize: int
    warc_offset: int
    warc_path: str
    location: str | None
    sha256hex: str | None
    md5hex: str | None
    size: int | None


class CaptureView(CaptureFields):
    """A capture as a page lists it: its row and its page."""

    link: str


class CaptureCopies(CaptureView):
    """Captures of the same answer in the same second as one: how many records hold it."""

    copies: int


class DocumentLink(TypedDict):
    uuid: str
    title: str | None
    link: str


class IngestStatusView(TypedDict):
    """An ingest result as a list names it: its request, its status, its page."""

    ingest_type: str
    base_url: str
    status: str | None
    link: str


class IngestFileResultView(TypedDict):
    """An ``ingest_file_result`` row."""

    ingest_type: str
    base_url: str
    updated: str | None
    hit: bool
    status: str | None
    terminal_url: str | None
    terminal_dt: str | None
    terminal_status_code: int | None
    terminal_sha1hex: str | None


class IngestResultView(IngestFileResultView):
    link: str


class RefRow(TypedDict):
    """A parsed reference as the columns of a table, the reference itself as ``raw``."""

    n: int
    authors: str
    title: str
    container: str
    year: str
    volume: str
    pages: str
    doi: str
    raw: JsonObject


# --- matching: references resolved, works citing a DOI, a document identified ---------------


class MatchView(TypedDict):
    """A reference's ``citation`` row as a page shows it: how it matched, the DOI it
    resolved to (only for ``exact`` and ``strong``) and that DOI's Crossref page
    when the table holds its record."""

    status: str
    matched: bool
    cited_doi: str | None
    score: float | None
    reasons: list[str]
    ref_key: str | None
    link: str | None


class ResolvedRefRow(RefRow):
    """A parsed reference with its place in its list (0-based, as ``citation`` rows
    count) and its match; None while ``match refs`` has not resolved it."""

    ref_index: int
    match: MatchView | None
    #: the sentences (or paragraphs) of the full text that cite it
    contexts: list[str]


class SectionView(TypedDict):
    head: str | None
    number: str | None
    paragraphs: list[str]


class FulltextView(TypedDict):
    """The document's full text (its GROBID-TEI resource, GROBID's or the
    cascade's): sections with their paragraphs, and how many of its reference
    callouts point at a reference."""

    sections: list[SectionView]
    callouts: int
    linked: int
    error: str | None


class CitingWork(TypedDict):
    """A reference, in some citing work, that resolved to the page's DOI: the work
    (a Crossref DOI, or a document's UUID), its title and page where we have them."""

    citing: str
    kind: str
    id: str
    title: str | None
    link: str | None
    ref_index: int
    status: str
    score: float | None


class CitedBy(TypedDict):
    """The references that resolved to ``doi``, ``total`` in all, a page of them
    (``previous``/``next``: this page's query for the neighbouring ones). ``doi``
    None: the document has no DOI to be cited by."""

    doi: str | None
    total: int
    page: int
    pages: int
    works: list[CitingWork]
    previous: str | None
    next: str | None


class Identification(TypedDict):
    """A document's ``match0`` cells (the PDF table): ``status`` None when it has not
    been matched yet; the DOI it was identified as, with that DOI's Crossref page
    and title when the table holds its record; ``info`` as written (score, source,
    reasons …)."""

    status: str | None
    doi: str | None
    info: JsonObject | None
    #: ``info`` as (key, text) rows: strings and numbers as they are, lists of
    #: strings space-separated, anything else as JSON
    details: list[tuple[str, str]]
    title: str | None
    link: str | None


# --- the dashboard --------------------------------------------------------------------------


class TableCount(TypedDict):
    table: str
    label: str
    rows: int


class RecentIngestView(TypedDict):
    ingest_type: str
    base_url: str
    status: str | None
    updated: str | None
    link: str


class RecentDocumentView(TypedDict):
    uuid: str
    doi: str | None
    sha1: str | None
    updated: str | None
    title: str | None
    link: str


class RecentCaptureView(RecentCapture):
    link: str


class Recent(TypedDict):
    ingest: list[RecentIngestView]
    documents: list[RecentDocumentView]
    captures: list[RecentCaptureView]


class Dashboard(TypedDict):
    tables: dict[str, int]
    counted: list[TableCount]
    #: ingest type -> status ("(none)" for none) -> results
    ingest: dict[str, dict[str, int]]
    status_links: dict[str, dict[str, str]]
    #: processing step -> value -> PDF-table rows
    processing: dict[str, dict[str, int]]
    references: dict[str, int]
    recent: Recent
    pdftable: str


# --- a document -----------------------------------------------------------------------------


class PdfTableRowView(TypedDict):
    """A PDF-table row: its key in base32, the sha1, the families' decoded cells
    (bytes as hex)."""

    key: str
    sha1hex: str
    families: dict[str, JsonObject]


class ResourceItem(TypedDict):
    kind: str
    description: str
    key: str | None
    href: str


class DocumentPage(CatalogueIds):
    # the catalogue entry (CatalogueEntry.to_json, without paths: resource_list has them)
    updated: str | None
    # what the page adds
    pdftable: PdfTableRowView | None
    references: list[JsonObject]
    reference_rows: list[ResolvedRefRow]
    #: match status -> the document's references resolved so
    match_counts: dict[str, int]
    identification: Identification
    cited_by: CitedBy
    crossref: bool
    hops: list[CaptureView]
    metadata: JsonObject | None
    metadata_error: str | None
    title: str | None
    authors: list[str]
    metadata_view: MetadataView
    pdftable_view: list[FamilyView]
    pdftable_expected: bool
    resource_list: list[ResourceItem]
    thumbnails: list[str]
    ingest_results: list[IngestResultView]
    captures: list[CaptureView]
    fulltext: FulltextView | None


# --- an ingest request's result -------------------------------------------------------------


class IngestRequestView(TypedDict):
    """An ``ingest_request`` row."""

    link_source: str
    link_source_id: str
    ingest_type: str
    base_url: str
    ingest_request_source: str | None
    created: str | None
    release_stage: str | None
    request: JsonObject | None


class DatasetView(IngestFilesetColumns):
    """An ``ingest_fileset_platform`` row; the manifest's entries with the link of the
    capture each was archived in (``capture_link``), where there is one."""

    updated: str | None
    manifest: list[JsonObject]
    #: where the result has a web bundle
    bundle_capture_link: NotRequired[str | None]


class IngestPage(TypedDict):
    """A file ingest result (``kind`` ``file``: ``result`` and what it found), or a
    dataset's (``platform``), and the requests for it."""

    ingest_type: str
    base_url: str
    requests: list[IngestRequestView]
    kind: str
    result: NotRequired[IngestFileResultView]
    document_list: NotRequired[list[DocumentLink]]
    documents: NotRequired[list[str]]
    terminal_capture: NotRequired[CaptureView | None]
    platform: NotRequired[DatasetView]
    hops: NotRequired[list[CaptureView]]


# --- a capture ------------------------------------------------------------------------------


class RecordHeaders(TypedDict):
    """A capture's WARC record headers and HTTP headers, as (name, value) pairs."""

    type: str
    warc: list[tuple[str, str]]
    http_status: str | None
    http: list[tuple[str, str]]


class CapturePage(CaptureFields):
    sha1b32: str | None
    revisit: bool
    headers: RecordHeaders | None
    headers_error: str | None
    original_link: str | None
    downloadable: bool
    payload_link: str
    timeline_link: str
    replay_link: str | None
    document_list: list[DocumentLink]
    documents: list[str]
    capture_count: int
    ingest_results: list[IngestStatusView]


# --- a Crossref record's references ---------------------------------------------------------


class DepositedRef(TypedDict):
    """A reference as deposited with Crossref: its key, its text, the reference."""

    key: str
    text: str
    raw: JsonObject


class RefPair(TypedDict):
    """A deposited reference beside its parse (either may be missing) and its match."""

    deposited: DepositedRef | None
    parsed: RefRow | None
    #: the parsed reference's match (its ``citation`` row), None while unresolved
    match: MatchView | None


class CrossrefPage(TypedDict):
    doi: str
    indexed: str | None
    source_ts: str | None
    title: str | None
    deposited_count: int
    parsed_count: int
    parsed: bool
    pairs: list[RefPair]
    #: match status -> the work's references resolved so
    match_counts: dict[str, int]
    cited_by: CitedBy
    documents: list[str]


# --- search ---------------------------------------------------------------------------------


class FoundDocument(TypedDict):
    uuid: str
    doi: str | None
    sha1: str | None
    pmid: str | None
    pmcid: str | None
    arxiv: str | None
    title: str | None


class CrossrefLink(TypedDict):
    """A Crossref record found; by title words also the documents with its DOI."""

    doi: str
    title: str | None
    documents: NotRequired[list[str]]
    link: str


class TitledDocument(TypedDict):
    uuid: str
    title: str | None
    doi: str | None
    link: str


class UrlFinds(TypedDict):
    ingest_results: list[IngestStatusView]
    captures: list[CaptureCopies]
    timeline_link: str | None


class Sha1Finds(TypedDict):
    ingest_results: list[IngestStatusView]
    captures: list[CaptureView]


class TitleFinds(TypedDict):
    crossref: list[CrossrefLink]
    titled_documents: list[TitledDocument]
    more: bool


class SearchPage(TypedDict):
    """What a query found. ``what`` is how it was read (None for an empty query),
    ``value`` the identifier, URL or words it was read as."""

    query: str
    page: int
    documents: list[FoundDocument]
    ingest_results: list[IngestStatusView]
    captures: list[CaptureView] | list[CaptureCopies]
    crossref: list[CrossrefLink]
    titled_documents: list[TitledDocument]
    more: bool
    what: str | None
    value: NotRequired[str]
    timeline_link: NotRequired[str | None]


# --- lists ----------------------------------------------------------------------------------


class ListedIngestView(TypedDict):
    """A file (``kind`` ``file``) or dataset (``dataset``) ingest result in a list."""

    ingest_type: str
    base_url: str
    status: str | None
    updated: str | None
    terminal_url: str | None
    kind: str
    link: str


class IngestListPage(TypedDict):
    ingest_type: str | None
    status: str | None
    sort: str
    page: int
    pages: int
    total: int
    results: list[ListedIngestView]
    #: sort -> the query of this list sorted so
    sorts: dict[str, str]
    previous: str | None
    next: str | None


class TimelineCaptureView(TimelineCapture):
    link: str


class TimelinePage(TypedDict):
    url: str
    total: int
    page: int
    pages: int
    captures: list[TimelineCaptureView]
    #: year -> captures on this page in that year
    years: dict[str, int]
    previous: str | None
    next: str | None


class ErrorPage(TypedDict):
    error: str
    status: int
    message: str


#: what ``Pages.render`` takes: any page's data
PageData = (Dashboard | DocumentPage | IngestPage | CapturePage | CrossrefPage | SearchPage
            | IngestListPage | TimelinePage | ErrorPage)
