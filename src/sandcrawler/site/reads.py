"""What each page shows, read from the database and the store through the services.

The lookups are their owners' (docs/architecture.md, "Who owns which lookup");
this module assembles pages from them. Every page function returns the page's
typed record (``site/page_data.py``), rendered by its template and served as
its JSON; ``None`` is a 404, malformed input raises ``InvalidName`` (a 400).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from sqlalchemy.engine import Connection

from sandcrawler.app.services import Services
from sandcrawler.core.errors import CorruptData, InvalidName, NotFound, RecordError
from sandcrawler.core.textfix import readable
from sandcrawler.core.timestamps import iso_utc
from sandcrawler.db import queries
from sandcrawler.db.engine import begin
from sandcrawler.db.rows import (
    IngestFileResultRow,
    IngestFilesetRow,
    IngestRequestRow,
    IngestStatus,
    JsonObject,
)
from sandcrawler.match.resolving import citing_document, citing_doi
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.refs.contexts import TeiBody, read_body
from sandcrawler.site import citations, fields, formats
from sandcrawler.site.page_data import (
    CaptureCopies,
    CaptureFields,
    CapturePage,
    CaptureView,
    CrossrefLink,
    CrossrefPage,
    Dashboard,
    DatasetView,
    DepositedRef,
    DocumentLink,
    DocumentPage,
    FoundDocument,
    FulltextView,
    IngestFileResultView,
    IngestPage,
    IngestRequestView,
    IngestResultView,
    IngestStatusView,
    MatchView,
    PdfTableRowView,
    RecentCaptureView,
    RecentDocumentView,
    RecentIngestView,
    RecordHeaders,
    RefPair,
    RefRow,
    ResourceItem,
    SectionView,
    Sha1Finds,
    TableCount,
    TitledDocument,
    TitleFinds,
    UrlFinds,
)
from sandcrawler.storage.blobs import check_key
from sandcrawler.storage.docid import SCHEMES, parse_uuid
from sandcrawler.storage.resources import KINDS
from sandcrawler.web.archive.captures import REDIRECT_CODES
from sandcrawler.web.archive.warc import BadWarc

#: tables counted on the dashboard, in the order shown, and what their rows are
TABLES = ("catalogue", "crossref", "grobid_refs", "citation", "ingest_request",
          "ingest_file_result", "ingest_fileset_platform", "web_cdx", "pdftables",
          "pdftable_cells")
TABLE_LABELS = {"catalogue": "documents in the catalogue", "crossref": "Crossref records",
                "grobid_refs": "reference lists parsed",
                "citation": "references resolved against the catalog",
                "ingest_request": "ingest requests",
                "ingest_file_result": "file ingest results",
                "ingest_fileset_platform": "dataset ingest results",
                "web_cdx": "captures in the web archive", "pdftables": "PDF tables",
                "pdftable_cells": "PDF-table cells"}
RECENT = 10
#: rows listed where a page lists what relates to one thing
RELATED = 50
#: longest text cell shown in full (the PDF table's full text, TEI); the JSON has it all
CELL_CHARS = 2000
THUMBS = ("thumb-small", "thumb-medium", "thumb-large", "thumb-listing")


def _file_result_view(row: IngestFileResultRow) -> IngestFileResultView:
    return {**row, "updated": iso_utc(row["updated"])}


def _result_view(row: IngestFileResultRow) -> IngestResultView:
    return {**_file_result_view(row), "link": ingest_link(row["ingest_type"], row["base_url"])}


def _status_view(row: IngestStatus) -> IngestStatusView:
    return {**row, "link": ingest_link(row["ingest_type"], row["base_url"])}


def _request_view(row: IngestRequestRow) -> IngestRequestView:
    return {**row, "created": iso_utc(row["created"])}


def ingest_link(ingest_type: str, base_url: str) -> str:
    return f"/ingest/{ingest_type}?" + urlencode({"url": base_url})


def capture_link(warc_path: str, warc_offset: int) -> str:
    return "/capture?" + urlencode({"warc": warc_path, "offset": warc_offset})


def timeline_link(url: str) -> str:
    return "/timeline?" + urlencode({"url": url})


def documents_of(services: Services, conn: Connection, sha1: str) -> list[DocumentLink]:
    """The documents whose primary file is ``sha1``, with their titles."""
    return [{"uuid": d.uuid, "title": formats.first_text(d.title), "link": f"/document/{d.uuid}"}
            for d in services.catalogue.find("sha1", sha1, limit=RELATED, conn=conn)]


def capture_fields(row: CdxRecord) -> CaptureFields:
    """A capture's index row (``CdxRecord.to_row``, typed)."""
    return {"surt": row.surt, "datetime": row.datetime, "url": row.url,
            "mimetype": row.mimetype, "status_code": row.status_code, "sha1hex": row.sha1hex,
            "warc_csize": row.warc_csize, "warc_offset": row.warc_offset,
            "warc_path": row.warc_path, "location": row.location, "sha256hex": row.sha256hex,
            "md5hex": row.md5hex, "size": row.size}


def capture_row_view(row: CdxRecord) -> CaptureView:
    """A capture as a page lists it: its index row and its link."""
    return {**capture_fields(row), "link": capture_link(row.warc_path, row.warc_offset)}


# --- dashboard ---------------------------------------------------------------------------


def dashboard(services: Services) -> Dashboard:
    with begin(services.engine) as conn:
        counts = queries.row_counts(conn, TABLES)
        ingest: dict[str, dict[str, int]] = {}
        for c in queries.ingest_status_counts(conn):
            ingest.setdefault(c["ingest_type"], {})[c["status"] or "(none)"] = c["count"]
        refs = queries.refs_by_source(conn)
        processing = _pdftable_statuses(conn, services)
        recent_ingest = queries.recent_ingest_results(conn, RECENT)
        recent_documents = services.catalogue.recent(RECENT, conn=conn)
        recent_captures = queries.recent_captures(conn, RECENT)
    ingest_rows: list[RecentIngestView] = [
        {**r, "updated": iso_utc(r["updated"]),
         "link": ingest_link(r["ingest_type"], r["base_url"])} for r in recent_ingest]
    document_rows: list[RecentDocumentView] = [
        {"uuid": d.uuid, "doi": d.doi, "sha1": d.sha1, "updated": iso_utc(d.updated),
         "title": formats.first_text(d.title), "link": f"/document/{d.uuid}"}
        for d in recent_documents]
    capture_rows: list[RecentCaptureView] = [
        {**r, "link": capture_link(r["warc_path"], r["warc_offset"])} for r in recent_captures]
    counted: list[TableCount] = [{"table": name, "label": TABLE_LABELS.get(name, name), "rows": n}
               for name, n in counts.items()]
    status_links = {kind: {status: status_list_link(kind, status) for status in by_status}
                    for kind, by_status in ingest.items()}
    return {"tables": counts, "counted": counted, "ingest": ingest,
            "status_links": status_links, "processing": processing,
            "references": refs,
            "recent": {"ingest": ingest_rows, "documents": document_rows,
                       "captures": capture_rows},
            "pdftable": services.pdftable_name}


def status_list_link(ingest_type: str, status: str) -> str:
    """The list of the ingest results of one type with one status."""
    return "/ingest?" + urlencode({"type": ingest_type, "status": status})


def _pdftable_statuses(conn: Connection, services: Services) -> dict[str, dict[str, int]]:
    """Rows per status of each processing step recorded in the PDF table."""
    out: dict[str, dict[str, int]] = {}
    for family, qualifier, label in (("pdf0", "pdf_status", "PDF extraction"),
                                     ("grobid0", "status_code", "GROBID (HTTP status)"),
                                     ("match0", "mstatus", "catalogue match")):
        counts = services.pdftable.value_counts(family, qualifier, conn=conn)
        if counts:
            out[label] = counts
    return out


# --- a document ---------------------------------------------------------------------------


def document(services: Services, doc_uuid: str, cited_page: int = 1) -> DocumentPage | None:
    doc = parse_uuid(doc_uuid)
    cat = services.catalogue
    # one connection for the page: each checkout costs a round trip (the pool's ping)
    with begin(services.engine) as conn:
        entry = cat.get(doc, conn=conn)
        if entry is None:
            return None
        pdftable = _pdftable_row(services, entry.sha1, conn) if entry.sha1 else None
        parsed = queries.parsed_refs(conn, "document", doc)
        indexed = citations.indexed_refs(parsed)
        references: list[JsonObject] = [r for _, r in indexed]
        resolved = queries.citations_of(conn, citing_document(doc))
        reference_rows = citations.resolved_rows(
            indexed, resolved, citations.held_dois(conn, resolved), ref_row)
        identified = citations.identification(conn, pdftable)
        cited = citations.cited_by(services, conn, entry.doi, cited_page)
        has_crossref = entry.doi is not None and bool(entry.doi) and queries.has_crossref(
            conn, entry.doi)
        results: list[IngestResultView] = []
        captures: list[CaptureView] = []
        if entry.sha1:
            results = [_result_view(r) for r in
                       queries.ingest_results_ending_in(conn, entry.sha1, RELATED)]
            captures = [capture_row_view(c) for c in
                        queries.captures(conn, sha1hex=entry.sha1, limit=RELATED)]
        chain = hops(conn, results[0]["base_url"], results[0]["terminal_url"]) if results else []
    metadata: JsonObject | None = None
    metadata_error: str | None = None
    if "metadata" in entry.resources:
        try:
            metadata = cat.metadata(doc)
        except (CorruptData, NotFound) as e:
            metadata_error = str(e)
    meta = metadata or {}
    fulltext = _fulltext(services, doc) if "grobid-tei" in entry.resources else None
    if fulltext is not None:
        for row in reference_rows:
            row["contexts"] = fulltext[0].contexts.get(row["ref_index"], [])
    paths = cat.paths(entry)
    resource_list: list[ResourceItem] = [
        {"kind": name, "description": KINDS[name].description,
         "key": paths.get(name), "href": f"/document/{doc}/resource/{name}"}
        for name in entry.resources if name in KINDS
    ]
    return {
        # the catalogue entry's JSON (CatalogueEntry.to_json)
        "id": entry.uuid, "sha1": entry.sha1, "doi": entry.doi, "pmid": entry.pmid,
        "pmcid": entry.pmcid, "arxiv": entry.arxiv, "resources": list(entry.resources),
        "updated": iso_utc(entry.updated),
        "pdftable": pdftable,
        "references": references,
        "reference_rows": reference_rows,
        "match_counts": citations.match_counts(resolved),
        "identification": identified,
        "cited_by": cited,
        "crossref": has_crossref,
        "hops": chain,
        "metadata": metadata,
        "metadata_error": metadata_error,
        "title": formats.first_text(meta.get("title")) or entry.title,
        "authors": formats.names(meta.get("author")),
        "metadata_view": fields.metadata_view(meta, with_pdf=pdftable is not None),
        "pdftable_view": fields.pdftable_view(pdftable["families"]) if pdftable else [],
        # a PDF table section only where one belongs: a PDF, or a row (HTML and XML
        # have none)
        "pdftable_expected": pdftable is not None or "pdf" in entry.resources,
        "resource_list": resource_list,
        "thumbnails": [name for name in THUMBS if name in entry.resources],
        "ingest_results": results,
        "captures": captures,
        "fulltext": fulltext[1] if fulltext is not None else None,
    }


def _fulltext(services: Services, doc: str) -> tuple[TeiBody, FulltextView]:
    """The document's GROBID-TEI body, or what kept it from being read."""
    try:
        body = read_body(services.catalogue.resources.get(doc, "grobid-tei"))
    except (RecordError, NotFound) as e:
        return TeiBody(), {"sections": [], "callouts": 0, "linked": 0, "error": str(e)}
    sections: list[SectionView] = [{"head": s.head, "number": s.number,
                                    "paragraphs": s.paragraphs} for s in body.sections]
    return body, {"sections": sections, "callouts": body.callouts, "linked": body.linked,
                  "error": None}


def _pdftable_row(services: Services, sha1: str,
                  conn: Connection | None = None) -> PdfTableRowView | None:
    row = services.pdftable.get(sha1, conn=conn)
    if row is None:
        return None
    families: dict[str, JsonObject] = {}
    for fam, cols in row.cells.items():
        families[fam] = {}
        for qualifier, value in cols.items():
            if isinstance(value, bytes):
                value = value.hex()
            families[fam][qualifier] = value
    return {"key": row.base32, "sha1hex": row.sha1hex, "families": families}


def resource_kind(doc_uuid: str, kind: str) -> tuple[str, str]:
    """(uuid, kind) of a resource a URL names; InvalidName for a kind not in the layout
    (a name with dots or slashes never reaches the store)."""
    doc = parse_uuid(doc_uuid)
    if kind not in KINDS:
        raise InvalidName(f"unknown resource kind {kind[:80]!r}",
                          status=StoreStatus.UNKNOWN_RESOURCE_KIND)
    return doc, kind


# --- where a file came from: ingest results, hops, captures ------------------------------


def hops(conn: Connection, base_url: str, terminal_url: str | None,
         max_hops: int = 10) -> list[CaptureView]:
    """The captures a crawl went through: the base URL's redirects, then the terminal
    URL's when the crawl followed a link there (the latest capture of each URL)."""
    chain: list[CaptureView] = []
    seen: set[str] = set()
    for start in (base_url, terminal_url):
        url = start
        while url and url not in seen and len(chain) < max_hops:
            seen.add(url)
            row = queries.latest_capture(conn, url)
            if row is None:
                break
            chain.append(capture_row_view(row))
            url = row.location if row.status_code in REDIRECT_CODES else None
    return chain


def ingest_result(services: Services, ingest_type: str, base_url: str) -> IngestPage | None:
    if not base_url:
        raise InvalidName("give the request's base URL: ?url=…", status=StoreStatus.BAD_KEY)
    with begin(services.engine) as conn:
        requests = [_request_view(r) for r in
                    queries.ingest_requests(conn, ingest_type, base_url, RELATED)]
        found = queries.ingest_file_result_row(conn, ingest_type, base_url)
        dataset = queries.ingest_fileset_row(conn, ingest_type, base_url)
        if found is None and dataset is None:
            return None
        out: IngestPage = {"ingest_type": ingest_type, "base_url": base_url,
                           "requests": requests, "kind": "file" if found else "dataset"}
        if found is not None:
            out["result"] = _file_result_view(found)
            sha1 = found["terminal_sha1hex"]
            out["document_list"] = documents_of(services, conn, sha1) if sha1 else []
            out["documents"] = [d["uuid"] for d in out["document_list"]]
            terminal = None
            if found["terminal_url"] and found["terminal_dt"]:
                at = queries.capture_at(conn, found["terminal_url"], found["terminal_dt"])
                terminal = capture_row_view(at) if at is not None else None
            out["terminal_capture"] = terminal
        if dataset is not None:
            out["platform"] = _dataset(conn, dataset)
        if found is not None:
            out["hops"] = hops(conn, found["base_url"], found["terminal_url"])
    return out


def _dataset(conn: Connection, row: IngestFilesetRow) -> DatasetView:
    manifest: list[JsonObject] = [m for m in row["manifest"] or [] if isinstance(m, dict)]
    for entry in manifest:
        if entry.get("terminal_url") and entry.get("terminal_dt"):
            found = queries.capture_at(conn, entry["terminal_url"], entry["terminal_dt"])
            if found:
                entry["capture_link"] = capture_link(found.warc_path, found.warc_offset)
    # every column named: a spread could bring a key the record does not declare
    out: DatasetView = {
        "ingest_type": row["ingest_type"], "base_url": row["base_url"],
        "updated": iso_utc(row["updated"]), "hit": row["hit"], "status": row["status"],
        "platform_name": row["platform_name"], "platform_domain": row["platform_domain"],
        "platform_id": row["platform_id"], "ingest_strategy": row["ingest_strategy"],
        "total_size": row["total_size"], "file_count": row["file_count"],
        "archiveorg_item_name": row["archiveorg_item_name"],
        "archiveorg_item_bundle_path": row["archiveorg_item_bundle_path"],
        "web_bundle_url": row["web_bundle_url"], "web_bundle_dt": row["web_bundle_dt"],
        "manifest": manifest}
    if row["web_bundle_url"] and row["web_bundle_dt"]:
        bundle = queries.capture_at(conn, row["web_bundle_url"], row["web_bundle_dt"])
        out["bundle_capture_link"] = (capture_link(bundle.warc_path, bundle.warc_offset)
                                      if bundle else None)
    return out


def capture_row(services: Services, warc_path: str, offset: str | int) -> CdxRecord | None:
    """The indexed capture at ``warc_path``, ``offset``; InvalidName for a path that
    is not a safe key or an offset that is not a number."""
    warc_path = check_key(warc_path or "")
    try:
        warc_offset = int(offset)
    except (TypeError, ValueError):
        raise InvalidName(f"offset {str(offset)[:40]!r} is not a number",
                          status=StoreStatus.BAD_KEY) from None
    if not 0 <= warc_offset < 2**62:
        raise InvalidName(f"offset {warc_offset} is out of range", status=StoreStatus.BAD_KEY)
    return services.web_archive.capture(warc_path, warc_offset)


def capture(services: Services, row: CdxRecord, replay_url: str = "") -> CapturePage:
    """A capture: its index row (size and hashes included), WARC and HTTP headers,
    where its payload is, what was made of it; with ``replay_url`` (a pywb
    collection's URL) the link that replays it there."""
    headers: RecordHeaders | None = None
    headers_error: str | None = None
    try:
        h = services.web_archive.record_headers(row)
        headers = {"type": h.rec_type, "warc": h.warc, "http_status": h.http_status,
                   "http": h.http}
    except (BadWarc, NotFound) as e:
        headers_error = str(e)
    original = services.web_archive.original(row) if row.is_revisit else None
    original_link = (capture_link(original.warc_path, original.warc_offset)
                     if original is not None and original is not row else None)
    with begin(services.engine) as conn:
        document_list = documents_of(services, conn, row.sha1hex) if row.sha1hex else []
        capture_count = queries.capture_count(conn, row.url)
        results = queries.ingest_statuses_ending_at(conn, row.url, row.datetime, RELATED)
    return {
        **capture_fields(row),
        "sha1b32": row.sha1b32,
        "revisit": row.is_revisit,
        "headers": headers,
        "headers_error": headers_error,
        "original_link": original_link,
        "downloadable": row.status_code == 200 or original_link is not None,
        "payload_link": capture_link(row.warc_path, row.warc_offset).replace(
            "/capture?", "/capture/payload?", 1),
        "timeline_link": timeline_link(row.url),
        "replay_link": (f"{replay_url.rstrip('/')}/{row.datetime}/{row.url}"
                        if replay_url else None),
        "document_list": document_list,
        "documents": [d["uuid"] for d in document_list],
        "capture_count": capture_count,
        "ingest_results": [_status_view(r) for r in results],
    }


# --- Crossref: deposited and parsed references ---------------------------------------------


def crossref_refs(services: Services, doi: str, cited_page: int = 1) -> CrossrefPage | None:
    doi = SCHEMES["doi"](doi)
    with begin(services.engine) as conn:
        row = queries.crossref_with_refs_row(conn, doi)
        if row is None:
            return None
        docs = [d.uuid for d in services.catalogue.find("doi", doi, limit=RELATED, conn=conn)]
        resolved = queries.citations_of(conn, citing_doi(doi))
        held = citations.held_dois(conn, resolved)
        cited = citations.cited_by(services, conn, doi, cited_page)
    record = row["record"] or {}
    deposited = [r for r in record.get("reference") or [] if isinstance(r, dict)]
    indexed = citations.indexed_refs(row["refs_json"])
    parsed = [r for _, r in indexed]
    # a reference's match is its citation row at its place in refs_json
    place = {id(r): i for i, r in indexed}
    found = citations.by_index(resolved)

    def match_of(ref: JsonObject | None) -> MatchView | None:
        got = found.get(place[id(ref)]) if ref is not None else None
        return citations.match_view(got, held) if got is not None else None

    by_key = {str(r.get("id")): r for r in parsed if r.get("id") is not None}
    pairs: list[RefPair] = []
    matched: set[int] = set()
    for i, ref in enumerate(deposited):
        match = by_key.get(str(ref.get("key"))) if ref.get("key") is not None else None
        if match is None and i < len(parsed) and not by_key:
            match = parsed[i]
        if match is not None:
            matched.add(id(match))
        pairs.append({"deposited": _deposited(ref),
                      "parsed": ref_row(match, i + 1) if match is not None else None,
                      "match": match_of(match)})
    pairs += [{"deposited": None, "parsed": ref_row(p, i), "match": match_of(p)}
              for i, p in enumerate(parsed, 1) if id(p) not in matched]
    pairs += [{"deposited": None, "parsed": None, "match": citations.match_view(r, held)}
              for r in citations.unlisted(resolved, set(place.values()))]
    return {"doi": doi, "indexed": iso_utc(row["indexed"]),
            "source_ts": iso_utc(row["source_ts"]),
            "title": formats.first_text(record.get("title")),
            "deposited_count": len(deposited), "parsed_count": len(parsed),
            "parsed": row["refs_json"] is not None, "pairs": pairs,
            "match_counts": citations.match_counts(resolved), "cited_by": cited,
            "documents": docs}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return readable(value) if isinstance(value, str) else str(value)


def ref_row(ref: Mapping[str, Any], n: int) -> RefRow:
    """One parsed reference as the columns of a table (any shape of JSON tolerated),
    with the reference itself as ``raw``. ``n`` is its number on the page, from 1
    on every page (a parser's own ``index`` counts from 0: it stays in ``raw``)."""
    return {"n": n, "authors": ", ".join(formats.names(ref.get("authors"))),
            "title": formats.first_text(ref.get("title") or ref.get("unstructured")) or "",
            "container": _text(ref.get("journal") or ref.get("container_name")),
            "year": _text(ref.get("date") or ref.get("year")), "volume": _text(ref.get("volume")),
            "pages": _text(ref.get("pages")), "doi": _text(ref.get("doi")), "raw": dict(ref)}


def _deposited(ref: Mapping[str, Any]) -> DepositedRef:
    """A reference as deposited with Crossref: its key and its text (unstructured, or
    the fields it was deposited with)."""
    text = ref.get("unstructured")
    if not isinstance(text, str):
        text = "; ".join(f"{k}: {_text(v)}" for k, v in ref.items() if k != "key")
    return {"key": _text(ref.get("key")), "text": text, "raw": dict(ref)}


# --- search ------------------------------------------------------------------------------


def find_documents(services: Services, scheme: str, value: str) -> list[FoundDocument]:
    return [{"uuid": d.uuid, "doi": d.doi, "sha1": d.sha1, "pmid": d.pmid, "pmcid": d.pmcid,
             "arxiv": d.arxiv, "title": formats.first_text(d.title)}
            for d in services.catalogue.find(scheme, value, limit=RELATED)]


def find_url(services: Services, url: str) -> UrlFinds:
    with begin(services.engine) as conn:
        results = queries.ingest_statuses_of_url(conn, url, RELATED)
        captures = [capture_row_view(c) for c in queries.captures(conn, url=url, limit=RELATED)]
    return {"ingest_results": _once(results), "captures": same_once(captures),
            "timeline_link": timeline_link(url) if captures else None}


def _once(results: list[IngestStatus]) -> list[IngestStatusView]:
    """Each ingest result once (a URL can be a result's base URL and terminal URL),
    with its link."""
    seen: set[tuple[str, str]] = set()
    out: list[IngestStatusView] = []
    for r in results:
        key = (r["ingest_type"], r["base_url"])
        if key not in seen:
            seen.add(key)
            out.append(_status_view(r))
    return out


def same_once(captures: list[CaptureView]) -> list[CaptureCopies]:
    """Captures that recorded the same answer in the same second (two ingests of one
    URL at once, or a revisit beside its original) as one row, ``copies`` saying
    how many records hold it."""
    out: list[CaptureCopies] = []
    by_key: dict[tuple[Any, ...], CaptureCopies] = {}
    for c in captures:
        key = (c["url"], c["datetime"], c["status_code"], c["sha1hex"], c["location"])
        if key in by_key:
            by_key[key]["copies"] += 1
            continue
        by_key[key] = {**c, "copies": 1}
        out.append(by_key[key])
    return out


def find_title(services: Services, words: list[str], page: int,
               per_page: int = RELATED) -> TitleFinds:
    """Documents and Crossref records whose title has every word (case-insensitive),
    and the documents with the records' DOIs."""
    cat = services.catalogue
    with begin(services.engine) as conn:
        found = cat.with_title_words(words, offset=(page - 1) * per_page, limit=per_page + 1,
                                     conn=conn)
        rows = queries.crossref_with_title_words(conn, words, offset=(page - 1) * per_page,
                                                limit=per_page + 1)
        dois = [r["doi"] for r in rows[:per_page]]
        docs = cat.with_dois(dois, conn=conn)
    by_doi: dict[str, list[str]] = {}
    for d in docs:
        by_doi.setdefault(d.doi or "", []).append(d.uuid)
    records: list[CrossrefLink] = [
        {"doi": r["doi"], "title": formats.first_text(r["title"]),
         "documents": by_doi.get(r["doi"], []), "link": f"/crossref/{r['doi']}"}
        for r in rows[:per_page]]
    documents: list[TitledDocument] = [
        {"uuid": d.uuid, "title": formats.first_text(d.title), "doi": d.doi,
         "link": f"/document/{d.uuid}"} for d in found[:per_page]]
    return {"crossref": records, "titled_documents": documents,
            "more": len(rows) > per_page or len(found) > per_page}


def find_sha1(services: Services, sha1: str) -> Sha1Finds:
    """Ingest results that ended in this file, captures of it."""
    with begin(services.engine) as conn:
        results = queries.ingest_statuses_ending_in(conn, sha1, RELATED)
        captures = [capture_row_view(c)
                    for c in queries.captures(conn, sha1hex=sha1, limit=RELATED)]
    return {"ingest_results": [_status_view(r) for r in results], "captures": captures}


def find_crossref(services: Services, doi: str) -> list[CrossrefLink]:
    with begin(services.engine) as conn:
        rows = queries.crossref_titles(conn, doi)
    return [{"doi": r["doi"], "title": formats.first_text(r["title"]),
             "link": f"/crossref/{r['doi']}"} for r in rows]
