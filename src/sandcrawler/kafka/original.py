"""The original system's Kafka messages, made from our records: ingest requests and
results (``ingest-file-results``), GROBID output (``grobid-output-pg``) and PDF
metadata and text (``pdf-text``); an HTML page's meta travels in the ingest
result, as it did there. What its persist workers read is filled from our results
and the PDF table's ``grobid0``, ``pdf0`` and ``html0`` cells of the file
(``FileFacts``). Published with ``kafka.message_format = "original"``; the
field-by-field mapping and what cannot be filled: docs/original-messages.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from importlib import metadata as dist_metadata
from typing import Any, TypedDict, cast

import grobid_tei_xml

from sandcrawler.records.files import FileMeta
from sandcrawler.records.ingest import FileIngestResult, IngestType
from sandcrawler.records.pdf import ProcessResult
from sandcrawler.records.statuses import (
    FulltextStatus,
    IngestFileStatus,
    ParserStatus,
    PdfStatus,
)
from sandcrawler.storage.pdftable import PdfTable

#: the original's caps on what one message carries (its Kafka message size): more
#: text is ``text-too-large`` and more TEI an ``error``, each without the payload
MAX_TEXT_CHARS = 1_000_000
MAX_TEI_CHARS = 12_000_000
#: ``html_body.status`` of a page whose main text was read but no TEI made of it:
#: anything but ``success``, which would make the original record ``has_teixml``
NO_TEIXML = "no-teixml"

# --- the shapes -------------------------------------------------------------------


class OriginalRequest(TypedDict, total=False):
    """An ingest request (the request topic; ``request`` in results). Other
    fields of the producer's are kept."""

    ingest_type: str
    base_url: str
    link_source: str
    link_source_id: str
    ingest_request_source: str
    release_stage: str
    fatcat: dict[str, Any]
    ext_ids: dict[str, Any]
    edit_extra: dict[str, Any]
    rel: str
    force_recrawl: bool


class FileMetaJson(TypedDict):
    size_bytes: int
    sha1hex: str
    sha256hex: str
    md5hex: str
    mimetype: str


class GrobidBiblio(TypedDict, total=False):
    """``metadata.biblio``: grobid_tei_xml's legacy dict, these keys when set."""

    title: str
    authors: list[dict[str, Any]]
    journal: dict[str, Any]
    date: str
    doi: str


class GrobidMetadata(TypedDict, total=False):
    """What the original's ``GrobidClient.metadata`` makes of a TEI."""

    biblio: GrobidBiblio
    grobid_version: str
    grobid_timestamp: str
    fatcat_release: str
    language_code: str


class IngestGrobid(TypedDict, total=False):
    """``grobid`` of a PDF ingest result: GROBID's answer less its TEI, with the
    metadata's version and release moved up (the original's ``process_grobid``)."""

    status_code: int
    status: str
    error_msg: str
    metadata: GrobidMetadata
    fatcat_release: str | None
    grobid_version: str | None


class GrobidOutput(TypedDict, total=False):
    """A ``grobid-output-pg`` message (the original's ``GrobidWorker`` output)."""

    key: str
    status_code: int
    status: str
    error_msg: str
    tei_xml: str
    file_meta: FileMetaJson


class PdfExtra(TypedDict):
    page0_height: float | None
    page0_width: float | None
    page_count: int | None
    permanent_id: str | None
    update_id: str | None
    pdf_version: str | None


class PdfText(TypedDict):
    """A ``pdf-text`` message, and ``pdf_meta`` of a PDF ingest result (there without
    ``text`` and ``file_meta``): ``PdfExtractResult.to_pdftext_dict``'s keys."""

    key: str
    sha1hex: str
    status: str
    file_meta: FileMetaJson | None
    error_msg: str | None
    text: str | None
    has_page0_thumbnail: bool
    meta_xml: str | None
    pdf_info: dict[str, str] | None
    pdf_extra: PdfExtra | None
    source: dict[str, Any] | None


class HtmlBody(TypedDict, total=False):
    """``html_body`` of an HTML ingest result (its TEI, never made here, left out)."""

    status: str
    agent: str
    word_count: int


class WebResource(TypedDict):
    url: str
    resource_type: str


class OriginalBiblio(TypedDict, total=False):
    """``html_biblio``: the original's ``BiblioMetadata`` fields (set ones only)."""

    title: str
    subtitle: str
    contrib_names: list[str]
    release_date: str
    release_year: int
    release_type: str
    release_stage: str
    withdrawn_status: str
    lang: str
    country_code: str
    volume: str
    issue: str
    number: str
    pages: str
    first_page: str
    last_page: str
    license: str
    publisher: str
    container_name: str
    container_abbrev: str
    container_issn: str
    container_type: str
    raw_references: list[str]
    doi: str
    pmid: str
    pmcid: str
    isbn13: str
    publisher_ident: str
    oai_id: str
    abstract: str
    pdf_fulltext_url: str
    html_fulltext_url: str
    xml_fulltext_url: str
    component_url: str


class OriginalIngestResult(TypedDict, total=False):
    """An ``ingest-file-results`` message."""

    request: OriginalRequest
    hit: bool
    status: str
    hops: list[str]
    terminal: dict[str, Any]
    file_meta: FileMetaJson
    cdx: dict[str, Any]
    revisit_cdx: dict[str, Any]
    error_message: str
    html_biblio: OriginalBiblio
    grobid: IngestGrobid
    pdf_meta: PdfText
    xml_meta: dict[str, str]
    html_body: HtmlBody
    scope: str | None
    html_resources: list[WebResource]


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What the PDF table holds of one file: its families' cells as decoded
    (``PdfRow.cells``), and whether a page-0 thumbnail was made."""

    sha1hex: str
    file_meta: FileMeta | None = None
    grobid: Mapping[str, Any] | None = None
    pdf: Mapping[str, Any] | None = None
    html: Mapping[str, Any] | None = None
    thumbnail: bool = False


# --- requests ---------------------------------------------------------------------

#: fields the original's persist reads with string or mapping methods: a null or
#: another type there stops its worker (``raw.get("ext_ids", {}).get("doi")``)
_TEXT = ("ingest_type", "base_url", "link_source", "link_source_id", "ingest_request_source",
         "release_stage", "rel")
_MAPPINGS = ("fatcat", "ext_ids", "edit_extra")


def original_request(request: Mapping[str, Any]) -> OriginalRequest:
    """The request as the original reads it: ours is its shape already; nulls are
    left out, and a known field of another type (any producer's request is echoed)
    is dropped rather than passed to a parser it would stop."""
    out: dict[str, Any] = {}
    for name, value in request.items():
        if value is None or (name in _TEXT and not isinstance(value, str)) \
                or (name in _MAPPINGS and not isinstance(value, dict)):
            continue
        out[name] = value
    return cast(OriginalRequest, out)


# --- GROBID -----------------------------------------------------------------------

_BIBLIO_KEYS = ("title", "authors", "journal", "date", "doi")
_META_KEYS = ("grobid_version", "grobid_timestamp", "fatcat_release", "language_code")


def grobid_metadata(tei: str) -> GrobidMetadata | None:
    """The metadata the original kept of a TEI: the header fields of
    grobid_tei_xml's legacy dict (abstract and body removed first, as it did),
    set ones only. None when the TEI does not parse."""
    try:
        doc = grobid_tei_xml.parse_document_xml(tei)
    except Exception:  # grobid_tei_xml raises its parser's various errors
        return None
    doc.remove_encumbered()
    legacy = doc.to_legacy_dict()
    meta = cast(GrobidMetadata, {k: legacy[k] for k in _META_KEYS if legacy.get(k)})
    meta["biblio"] = cast(GrobidBiblio, {k: legacy[k] for k in _BIBLIO_KEYS if legacy.get(k)})
    return meta


#: our GROBID statuses in the original's words (its client's and persist's)
_GROBID_STATUS: dict[str, str] = {
    FulltextStatus.SUCCESS: "success", FulltextStatus.BAD_TEI: "bad-grobid-xml",
    ParserStatus.GROBID_BAD_XML: "bad-grobid-xml", FulltextStatus.TOO_LARGE: "blob-too-large"}


def _grobid_answer(cells: Mapping[str, Any]) -> tuple[int | None, str, str | None, str | None]:
    """(status code, status, error, TEI) of a ``grobid0`` family. The embedded
    cascade's TEI stands in for GROBID's there (and in grobid-serve, which answers
    it with 200), so it is GROBID's 200 here too."""
    state = cells.get("status") or {}
    ours = str(state.get("status") or "")
    tei = cells.get("tei_xml")
    code = cells.get("status_code")
    if code is None and tei is not None and state.get("engine"):
        code = 200
    status = _GROBID_STATUS.get(ours, "error")
    error = state.get("error") or (None if status == "success" else ours or None)
    if tei is not None and len(tei) > MAX_TEI_CHARS:
        status, error, tei = "error", f"response XML too large: {len(tei)} bytes", None
    return code, status, error, tei


def grobid_output(facts: FileFacts) -> GrobidOutput | None:
    """The ``grobid-output-pg`` message of a file; None when GROBID gave neither an
    answer nor a TEI (not run, unreachable): the original's persist skips a
    message without ``status_code``."""
    if facts.grobid is None or facts.file_meta is None:
        return None
    code, status, error, tei = _grobid_answer(facts.grobid)
    if code is None:
        return None
    out = GrobidOutput(key=facts.sha1hex, status_code=code, status=status,
                       file_meta=cast(FileMetaJson, facts.file_meta.to_json()))
    if error is not None:
        out["error_msg"] = error
    if tei is not None:
        out["tei_xml"] = tei
    return out


def ingest_grobid(facts: FileFacts) -> IngestGrobid | None:
    """``grobid`` of a PDF ingest result."""
    if facts.grobid is None:
        return None
    code, status, error, tei = _grobid_answer(facts.grobid)
    out = IngestGrobid(status=status)
    if code is not None:
        out["status_code"] = code
    if error is not None:
        out["error_msg"] = error
    if status == "success" and tei is not None:
        if (meta := grobid_metadata(tei)) is None:
            out["status"], out["error_msg"] = "bad-grobid-xml", "the TEI does not parse"
        else:
            out["fatcat_release"] = meta.pop("fatcat_release", None)
            out["grobid_version"] = meta.pop("grobid_version", None)
            out["metadata"] = meta
    return out


# --- PDF metadata and text --------------------------------------------------------

#: our ``info`` keys -> the PDF information dictionary's (poppler's ``infos()``)
_INFO_NAMES = {"title": "Title", "author": "Author", "subject": "Subject",
               "keywords": "Keywords", "creator": "Creator", "producer": "Producer",
               "created": "CreationDate", "modified": "ModDate"}
_PDF_DATE = re.compile(r"(?:D:)?(\d{4})(\d\d)?(\d\d)?(\d\d)?(\d\d)?(\d\d)?"
                       r"(?:(Z)|([+-])(\d\d)'?(\d\d)?'?)?")


def pdf_date(value: str) -> str | None:
    """A PDF date (``D:20190418120000+02'00'``) in ISO 8601, as poppler gave the
    original its dates (the persist writes them to a timestamp column); None when
    it is not one."""
    m = _PDF_DATE.match(value.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, z, sign, oh, om = m.groups()
    try:
        tz = None if not (z or sign) else timezone(
            (-1 if sign == "-" else 1) * timedelta(hours=int(oh or 0), minutes=int(om or 0)))
        when = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0),
                        int(minute or 0), int(second or 0), tzinfo=tz)
    except ValueError:
        return None
    return when.isoformat()


def _pdf_info(info: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for ours, name in _INFO_NAMES.items():
        value = info.get(ours)
        if value and name in ("CreationDate", "ModDate"):
            value = pdf_date(value)
        if value:
            out[name] = value
    return out


def pdf_text(facts: FileFacts, *, full: bool = True) -> PdfText | None:
    """The ``pdf-text`` message of a file (``full``: with its text and file_meta,
    as published), or ``pdf_meta`` of an ingest result (``full=False``)."""
    if facts.pdf is None or not facts.pdf.get("pdf_status"):
        return None
    meta: Mapping[str, Any] = facts.pdf.get("pdf_meta") or {}
    status = str(facts.pdf["pdf_status"])
    error = meta.get("error")
    text = facts.pdf.get("text") if full else None
    if text is not None and len(text) > MAX_TEXT_CHARS:
        status, error, text = "text-too-large", f"full_text chars: {len(text)}", None
    success = status == "success"
    extra = PdfExtra(page0_height=meta.get("page0_height"),
                     page0_width=meta.get("page0_width"), page_count=meta.get("page_count"),
                     permanent_id=meta.get("permanent_id"), update_id=meta.get("update_id"),
                     pdf_version=meta.get("pdf_version"))
    file_meta = cast(FileMetaJson, facts.file_meta.to_json()) \
        if full and facts.file_meta is not None else None
    return PdfText(key=facts.sha1hex, sha1hex=facts.sha1hex, status=status,
                   file_meta=file_meta, error_msg=error, text=text or None,
                   has_page0_thumbnail=facts.thumbnail and success,
                   meta_xml=None, pdf_info=_pdf_info(meta.get("info") or {}) if success else None,
                   pdf_extra=extra if success else None, source=None)


# --- HTML -------------------------------------------------------------------------


def _agent() -> str:
    try:
        return f"trafilatura/{dist_metadata.version('trafilatura')}"
    except dist_metadata.PackageNotFoundError:
        return "trafilatura"


def html_fields(facts: FileFacts) -> OriginalIngestResult:
    """``html_body``, ``scope`` and ``html_resources`` of an HTML ingest result, from
    the ``html0`` cells (the original's ``html_meta`` row, less its TEI)."""
    if facts.html is None or not facts.html.get("html_status"):
        return {}
    meta: Mapping[str, Any] = facts.html.get("html_meta") or {}
    status = str(facts.html["html_status"])
    if status == "success" and not meta.get("has_teixml"):
        status = NO_TEIXML
    body = HtmlBody(status=status, agent=_agent())
    if meta.get("word_count") is not None:
        body["word_count"] = int(meta["word_count"])
    out = OriginalIngestResult(html_body=body, scope=meta.get("scope"))
    resources = [WebResource(url=r["url"], resource_type=r["resource_type"])
                 for r in meta.get("resources") or () if r.get("url") and r.get("resource_type")]
    if resources:
        out["html_resources"] = resources
    return out


#: our html_biblio names the original spelt otherwise
_BIBLIO_RENAMED = {"contrib_raw_names": "contrib_names"}


def original_biblio(biblio: Mapping[str, Any]) -> OriginalBiblio:
    """``html_biblio`` in the original's ``BiblioMetadata`` field names; ours it had no
    field for (``arxiv_id``) are left out."""
    fields = OriginalBiblio.__annotations__
    renamed = ((_BIBLIO_RENAMED.get(k, k), v) for k, v in biblio.items())
    return cast(OriginalBiblio, {k: v for k, v in renamed if k in fields})


# --- results ----------------------------------------------------------------------


def ingest_result(result: FileIngestResult, facts: FileFacts | None = None
                  ) -> OriginalIngestResult:
    """The ``ingest-file-results`` message of a result: ours less ``processing``,
    with what the original's processing added, from ``facts`` (the file's cells)."""
    out = OriginalIngestResult(request=original_request(result.request), hit=result.hit,
                               status=str(result.status))
    if result.hops is not None:
        out["hops"] = list(result.hops)
    if result.terminal is not None:
        out["terminal"] = result.terminal.to_json()
    if result.file_meta is not None:
        out["file_meta"] = cast(FileMetaJson, result.file_meta.to_json())
    if result.cdx is not None:
        out["cdx"] = result.cdx.to_cdx()
    if result.revisit_cdx is not None:
        out["revisit_cdx"] = result.revisit_cdx.to_cdx()
    if result.error_message is not None:
        out["error_message"] = result.error_message
    if result.html_biblio is not None and (biblio := result.html_biblio.to_json()):
        out["html_biblio"] = original_biblio(biblio)
    processing = result.processing
    if processing is None:
        return out
    if processing.kind == IngestType.XML:
        out["xml_meta"] = {"status": str(processing.status)}
    elif facts is not None and processing.kind == IngestType.PDF:
        if (grobid := ingest_grobid(facts)) is not None:
            out["grobid"] = grobid
        if (meta := pdf_text(facts, full=False)) is not None:
            out["pdf_meta"] = meta
    elif facts is not None and processing.kind == IngestType.HTML:
        out.update(html_fields(facts))
    return out


# --- publishing -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """One message: its key (as the record has it: the Kafka sink makes a key
    that is no string its JSON text) and its JSON (the sink's ``to_json()``)."""

    key: object
    body: Mapping[str, Any]

    def to_json(self) -> Mapping[str, Any]:
        return self.body


def message_key(message: Message) -> object:
    return message.key


@dataclass(frozen=True, slots=True)
class OriginalTopics:
    """Where the original's messages go: its ingest results, GROBID output and PDF
    text topics (full names)."""

    results: str
    grobid: str
    pdf_text: str


Messages = list[tuple[str, Message]]
#: a file's facts by sha1 (None: the PDF table has no row for it)
FactsLookup = Callable[[str, bool], FileFacts | None]


def table_facts(table: PdfTable) -> FactsLookup:
    """The facts of a file from the PDF table (``thumbnail``: whether one was made)."""

    def lookup(sha1hex: str, thumbnail: bool) -> FileFacts | None:
        row = table.get(sha1hex, ["grobid0", "pdf0", "html0"])
        if row is None:
            return None
        return FileFacts(sha1hex=sha1hex, grobid=row.cells.get("grobid0"),
                         pdf=row.cells.get("pdf0"), html=row.cells.get("html0"),
                         thumbnail=thumbnail)

    return lookup


def _with_meta(facts: FileFacts | None, meta: FileMeta | None) -> FileFacts | None:
    return facts if facts is None or meta is None else replace(facts, file_meta=meta)


def _thumbnail(resources: list[str] | None) -> bool:
    return any(kind.startswith("thumb-") for kind in resources or ())


class OriginalMessages:
    """The Kafka routes of the publishing workers in the original's shapes: a file
    ingest result to the results topic, and, for a PDF processed now, the GROBID
    output and PDF text the original's ingest worker published beside it; a
    processing result to those two topics only."""

    def __init__(self, topics: OriginalTopics, facts: FactsLookup) -> None:
        self.topics = topics
        self.facts = facts

    def _side(self, facts: FileFacts | None) -> Messages:
        if facts is None:
            return []
        out: Messages = []
        if (grobid := grobid_output(facts)) is not None:
            out.append((self.topics.grobid, Message(facts.sha1hex, grobid)))
        if (text := pdf_text(facts)) is not None:
            out.append((self.topics.pdf_text, Message(facts.sha1hex, text)))
        return out

    def ingest(self, result: FileIngestResult) -> Messages:
        facts = None
        processing = result.processing
        if result.file_meta is not None and processing is not None:
            facts = _with_meta(self.facts(result.file_meta.sha1hex,
                                          _thumbnail(processing.resources)), result.file_meta)
        messages = [(self.topics.results,
                     Message(result.request.get("base_url"), ingest_result(result, facts)))]
        # the original published these when it processed the file, not for a hit
        # it had before
        if processing is not None and processing.kind == IngestType.PDF \
                and result.status != IngestFileStatus.SUCCESS_EXISTING:
            messages += self._side(facts)
        return messages

    def processed(self, result: ProcessResult) -> Messages:
        """A processed file's messages; none for one processed before (``exists``)
        or whose bytes were never read (no sha1, or no file metadata)."""
        if result.sha1hex is None or result.status == PdfStatus.EXISTS or result.size is None \
                or result.sha256hex is None or result.md5hex is None or result.mimetype is None:
            return []
        meta = FileMeta(size_bytes=result.size, sha1hex=result.sha1hex,
                        sha256hex=result.sha256hex, md5hex=result.md5hex,
                        mimetype=result.mimetype)
        return self._side(_with_meta(self.facts(result.sha1hex, _thumbnail(result.resources)),
                                     meta))
