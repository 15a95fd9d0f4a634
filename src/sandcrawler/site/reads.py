"""What each page shows, read from the database and the store through the services.

The lookups are their owners' (docs/architecture.md, "Who owns which lookup"):
documents by identifier ``Catalogue``, PDF table rows ``PdfTable``, the latest
capture of a URL and an ingest result by request ``db.reader``, which the web
archive and the readers use too; this module assembles pages from them.

Every function returns plain data (dicts, lists, strings, numbers): the page's
template renders it and the same data is the page's JSON. ``None`` means "no such
thing" (a 404); malformed input raises ``InvalidName`` (a 400).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

from sqlalchemy.engine import Connection

from sandcrawler.app.services import Services
from sandcrawler.db import reader
from sandcrawler.db.engine import begin
from sandcrawler.errors import CorruptData, InvalidName, NotFound
from sandcrawler.models.capture import CdxRecord
from sandcrawler.models.statuses import StoreStatus
from sandcrawler.site import fields, formats
from sandcrawler.storage.blobs import check_key
from sandcrawler.storage.docid import SCHEMES, parse_uuid
from sandcrawler.storage.resources import KINDS
from sandcrawler.textfix import readable
from sandcrawler.timestamps import iso_utc
from sandcrawler.web.archive import REDIRECT_CODES
from sandcrawler.web.warc import BadWarc

#: tables counted on the dashboard, in the order shown, and what their rows are
TABLES = ("catalogue", "crossref", "grobid_refs", "ingest_request", "ingest_file_result",
          "ingest_fileset_platform", "web_cdx", "pdftables", "pdftable_cells")
TABLE_LABELS = {"catalogue": "documents in the catalogue", "crossref": "Crossref records",
                "grobid_refs": "reference lists parsed", "ingest_request": "ingest requests",
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


def _rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [_plain(r) for r in rows]


def _plain(row: Mapping[str, Any]) -> dict[str, Any]:
    """Datetimes as ISO strings (JSON and templates alike)."""
    return {k: (iso_utc(v) if hasattr(v, "tzinfo") else v) for k, v in row.items()}


def ingest_link(ingest_type: str, base_url: str) -> str:
    return f"/ingest/{ingest_type}?" + urlencode({"url": base_url})


def capture_link(warc_path: str, warc_offset: int) -> str:
    return "/capture?" + urlencode({"warc": warc_path, "offset": warc_offset})


def timeline_link(url: str) -> str:
    return "/timeline?" + urlencode({"url": url})


def documents_of(services: Services, conn: Connection, sha1: str) -> list[dict[str, Any]]:
    """The documents whose primary file is ``sha1``, with their titles."""
    return [{"uuid": d.uuid, "title": formats.first_text(d.title), "link": f"/document/{d.uuid}"}
            for d in services.catalogue.find("sha1", sha1, limit=RELATED, conn=conn)]


def capture_row_view(row: CdxRecord) -> dict[str, Any]:
    """A capture as a page lists it: its index row and its link."""
    return {**row.to_row(), "link": capture_link(row.warc_path, row.warc_offset)}


# --- dashboard ---------------------------------------------------------------------------


def dashboard(services: Services) -> dict[str, Any]:
    with begin(services.engine) as conn:
        counts = reader.row_counts(conn, TABLES)
        ingest: dict[str, dict[str, int]] = {}
        for c in reader.ingest_status_counts(conn):
            ingest.setdefault(c["ingest_type"], {})[c["status"] or "(none)"] = c["count"]
        refs = reader.refs_by_source(conn)
        processing = _pdftable_statuses(conn, services)
        recent = {
            "ingest": _rows(reader.recent_ingest_results(conn, RECENT)),
            "documents": [{"uuid": d.uuid, "doi": d.doi, "sha1": d.sha1,
                           "updated": iso_utc(d.updated), "title": d.title}
                          for d in services.catalogue.recent(RECENT, conn=conn)],
            "captures": _rows(reader.recent_captures(conn, RECENT)),
        }
    for row in recent["ingest"]:
        row["link"] = ingest_link(row["ingest_type"], row["base_url"])
    for row in recent["captures"]:
        row["link"] = capture_link(row["warc_path"], row["warc_offset"])
    for row in recent["documents"]:
        row["title"] = formats.first_text(row["title"])
        row["link"] = f"/document/{row['uuid']}"
    counted = [{"table": name, "label": TABLE_LABELS.get(name, name), "rows": n}
               for name, n in counts.items()]
    status_links = {kind: {status: status_list_link(kind, status) for status in by_status}
                    for kind, by_status in ingest.items()}
    return {"tables": counts, "counted": counted, "ingest": ingest,
            "status_links": status_links, "processing": processing,
            "references": refs, "recent": recent, "pdftable": services.pdftable_name}


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


def document(services: Services, doc_uuid: str) -> dict[str, Any] | None:
    doc = parse_uuid(doc_uuid)
    cat = services.catalogue
    # one connection for the page: each checkout costs a round trip (the pool's ping)
    with begin(services.engine) as conn:
        entry = cat.get(doc, conn=conn)
        if entry is None:
            return None
        out: dict[str, Any] = entry.to_json()
        out["pdftable"] = _pdftable_row(services, entry.sha1, conn) if entry.sha1 else None
        refs = reader.parsed_refs(conn, "document", doc)
        out["references"] = [r for r in refs or [] if isinstance(r, dict)]
        out["reference_rows"] = [ref_row(r, i) for i, r in enumerate(out["references"], 1)]
        out["crossref"] = bool(entry.doi) and reader.has_crossref(conn, entry.doi or "")
        results: list[dict[str, Any]] = []
        captures: list[dict[str, Any]] = []
        if entry.sha1:
            results = _rows(reader.ingest_results_ending_in(conn, entry.sha1, RELATED))
            captures = [capture_row_view(c) for c in
                        reader.captures(conn, sha1hex=entry.sha1, limit=RELATED)]
        out["hops"] = hops(conn, results[0]) if results else []
    out["metadata"], out["metadata_error"] = None, None
    if "metadata" in entry.resources:
        try:
            out["metadata"] = cat.metadata(doc)
        except (CorruptData, NotFound) as e:
            out["metadata_error"] = str(e)
    meta = out["metadata"] or {}
    out["title"] = formats.first_text(meta.get("title")) or entry.title
    out["authors"] = formats.names(meta.get("author"))
    out["metadata_view"] = fields.metadata_view(meta, with_pdf=out["pdftable"] is not None)
    out["pdftable_view"] = (fields.pdftable_view(out["pdftable"]["families"])
                            if out["pdftable"] else [])
    # a PDF table section only where one belongs: a PDF, or a row (HTML and XML have none)
    out["pdftable_expected"] = out["pdftable"] is not None or "pdf" in entry.resources
    out["resource_list"] = [
        {"kind": name, "description": KINDS[name].description,
         "key": cat.paths(entry).get(name), "href": f"/document/{doc}/resource/{name}"}
        for name in entry.resources if name in KINDS
    ]
    out["thumbnails"] = [name for name in THUMBS if name in entry.resources]
    for r in results:
        r["link"] = ingest_link(r["ingest_type"], r["base_url"])
    out["ingest_results"] = results
    out["captures"] = captures
    return out


def _pdftable_row(services: Services, sha1: str,
                  conn: Connection | None = None) -> dict[str, Any] | None:
    row = services.pdftable.get(sha1, conn=conn)
    if row is None:
        return None
    families: dict[str, dict[str, Any]] = {}
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


def hops(conn: Connection, result: Mapping[str, Any],
         max_hops: int = 10) -> list[dict[str, Any]]:
    """The captures a crawl went through: the base URL's redirects, then the terminal
    URL's when the crawl followed a link there (the latest capture of each URL)."""
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    for start in (result.get("base_url"), result.get("terminal_url")):
        url = start
        while url and url not in seen and len(chain) < max_hops:
            seen.add(url)
            row = reader.latest_capture(conn, url)
            if row is None:
                break
            chain.append(capture_row_view(row))
            url = row.location if row.status_code in REDIRECT_CODES else None
    return chain


def ingest_result(services: Services, ingest_type: str, base_url: str) -> dict[str, Any] | None:
    if not base_url:
        raise InvalidName("give the request's base URL: ?url=…", status=StoreStatus.BAD_KEY)
    with begin(services.engine) as conn:
        requests = _rows(reader.ingest_requests(conn, ingest_type, base_url, RELATED))
        found = reader.ingest_file_result_row(conn, ingest_type, base_url)
        rows = [_plain(found)] if found is not None else []
        dataset = reader.ingest_fileset_row(conn, ingest_type, base_url)
        platform = [_plain(dataset)] if dataset is not None else []
        if not rows and not platform:
            return None
        out: dict[str, Any] = {"ingest_type": ingest_type, "base_url": base_url,
                               "requests": requests, "kind": "file" if rows else "dataset"}
        if rows:
            row = rows[0]
            out["result"] = row
            out["document_list"] = (documents_of(services, conn, row["terminal_sha1hex"])
                                    if row["terminal_sha1hex"] else [])
            out["documents"] = [d["uuid"] for d in out["document_list"]]
            terminal = None
            if row["terminal_url"] and row["terminal_dt"]:
                at = reader.capture_at(conn, row["terminal_url"], row["terminal_dt"])
                terminal = capture_row_view(at) if at is not None else None
            out["terminal_capture"] = terminal
        if platform:
            out["platform"] = _dataset(conn, platform[0])
        if rows:
            out["hops"] = hops(conn, rows[0])
    return out


def _dataset(conn: Connection, row: dict[str, Any]) -> dict[str, Any]:
    manifest = row.get("manifest") or []
    for entry in manifest:
        if isinstance(entry, dict) and entry.get("terminal_url") and entry.get("terminal_dt"):
            found = reader.capture_at(conn, entry["terminal_url"], entry["terminal_dt"])
            if found:
                entry["capture_link"] = capture_link(found.warc_path, found.warc_offset)
    row["manifest"] = [m for m in manifest if isinstance(m, dict)]
    if row.get("web_bundle_url") and row.get("web_bundle_dt"):
        bundle = reader.capture_at(conn, row["web_bundle_url"], row["web_bundle_dt"])
        row["bundle_capture_link"] = (capture_link(bundle.warc_path, bundle.warc_offset)
                                      if bundle else None)
    return row


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


def capture(services: Services, row: CdxRecord, replay_url: str = "") -> dict[str, Any]:
    """A capture: its index row (size and hashes included), WARC and HTTP headers,
    where its payload is, what was made of it; with ``replay_url`` (a pywb
    collection's URL) the link that replays it there."""
    out: dict[str, Any] = _plain(row.to_row())
    out["sha1b32"] = row.sha1b32
    out["revisit"] = row.is_revisit
    out["headers"], out["headers_error"] = None, None
    try:
        h = services.web_archive.record_headers(row)
        out["headers"] = {"type": h.rec_type, "warc": h.warc, "http_status": h.http_status,
                          "http": h.http}
    except (BadWarc, NotFound) as e:
        out["headers_error"] = str(e)
    original = services.web_archive.original(row) if row.is_revisit else None
    out["original_link"] = (capture_link(original.warc_path, original.warc_offset)
                            if original is not None and original is not row else None)
    out["downloadable"] = row.status_code == 200 or out["original_link"] is not None
    out["payload_link"] = capture_link(row.warc_path, row.warc_offset).replace(
        "/capture?", "/capture/payload?", 1)
    out["timeline_link"] = timeline_link(row.url)
    out["replay_link"] = (f"{replay_url.rstrip('/')}/{row.datetime}/{row.url}"
                          if replay_url else None)
    with begin(services.engine) as conn:
        out["document_list"] = documents_of(services, conn, row.sha1hex) if row.sha1hex else []
        out["documents"] = [d["uuid"] for d in out["document_list"]]
        out["capture_count"] = reader.capture_count(conn, row.url)
        results = _rows(reader.ingest_statuses_ending_at(conn, row.url, row.datetime, RELATED))
    for r in results:
        r["link"] = ingest_link(r["ingest_type"], r["base_url"])
    out["ingest_results"] = results
    return out


# --- Crossref: deposited and parsed references ---------------------------------------------


def crossref_refs(services: Services, doi: str) -> dict[str, Any] | None:
    doi = SCHEMES["doi"](doi)
    with begin(services.engine) as conn:
        row = reader.crossref_with_refs_row(conn, doi)
        docs = [d.uuid for d in services.catalogue.find("doi", doi, limit=RELATED, conn=conn)]
    if row is None:
        return None
    record = row["record"] or {}
    deposited = [r for r in record.get("reference") or [] if isinstance(r, dict)]
    parsed = [r for r in row["refs_json"] or [] if isinstance(r, dict)]
    by_key = {str(r.get("id")): r for r in parsed if r.get("id") is not None}
    pairs: list[dict[str, Any]] = []
    matched: set[int] = set()
    for i, ref in enumerate(deposited):
        match = by_key.get(str(ref.get("key"))) if ref.get("key") is not None else None
        if match is None and i < len(parsed) and not by_key:
            match = parsed[i]
        if match is not None:
            matched.add(id(match))
        pairs.append({"deposited": _deposited(ref),
                      "parsed": ref_row(match, i + 1) if match is not None else None})
    pairs += [{"deposited": None, "parsed": ref_row(p, i)} for i, p in enumerate(parsed, 1)
              if id(p) not in matched]
    return {"doi": doi, "indexed": iso_utc(row["indexed"]),
            "source_ts": iso_utc(row["source_ts"]),
            "title": formats.first_text(record.get("title")),
            "deposited_count": len(deposited), "parsed_count": len(parsed),
            "parsed": row["refs_json"] is not None, "pairs": pairs, "documents": docs}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return readable(value) if isinstance(value, str) else str(value)


def ref_row(ref: Mapping[str, Any], n: int) -> dict[str, Any]:
    """One parsed reference as the columns of a table (any shape of JSON tolerated),
    with the reference itself as ``raw``. ``n`` is its number on the page, from 1
    on every page (a parser's own ``index`` counts from 0: it stays in ``raw``)."""
    return {"n": n, "authors": ", ".join(formats.names(ref.get("authors"))),
            "title": formats.first_text(ref.get("title") or ref.get("unstructured")) or "",
            "container": _text(ref.get("journal") or ref.get("container_name")),
            "year": _text(ref.get("date") or ref.get("year")), "volume": _text(ref.get("volume")),
            "pages": _text(ref.get("pages")), "doi": _text(ref.get("doi")), "raw": dict(ref)}


def _deposited(ref: Mapping[str, Any]) -> dict[str, Any]:
    """A reference as deposited with Crossref: its key and its text (unstructured, or
    the fields it was deposited with)."""
    text = ref.get("unstructured")
    if not isinstance(text, str):
        text = "; ".join(f"{k}: {_text(v)}" for k, v in ref.items() if k != "key")
    return {"key": _text(ref.get("key")), "text": text, "raw": dict(ref)}


# --- search ------------------------------------------------------------------------------


def find_documents(services: Services, scheme: str, value: str) -> list[dict[str, Any]]:
    return [{"uuid": d.uuid, "doi": d.doi, "sha1": d.sha1, "pmid": d.pmid, "pmcid": d.pmcid,
             "arxiv": d.arxiv, "title": formats.first_text(d.title)}
            for d in services.catalogue.find(scheme, value, limit=RELATED)]


def find_url(services: Services, url: str) -> dict[str, Any]:
    with begin(services.engine) as conn:
        results = _rows(reader.ingest_statuses_of_url(conn, url, RELATED))
        captures = [capture_row_view(c) for c in reader.captures(conn, url=url, limit=RELATED)]
    return {"ingest_results": _once(results), "captures": same_once(captures),
            "timeline_link": timeline_link(url) if captures else None}


def _once(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each ingest result once (a URL can be a result's base URL and terminal URL),
    with its link."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in results:
        key = (r["ingest_type"], r["base_url"])
        if key not in seen:
            seen.add(key)
            out.append({**r, "link": ingest_link(*key)})
    return out


def same_once(captures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Captures that recorded the same answer in the same second (two ingests of one
    URL at once, or a revisit beside its original) as one row, ``copies`` saying
    how many records hold it."""
    out: list[dict[str, Any]] = []
    by_key: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c in captures:
        key = (c["url"], c["datetime"], c["status_code"], c.get("sha1hex"), c.get("location"))
        if key in by_key:
            by_key[key]["copies"] += 1
            continue
        by_key[key] = {**c, "copies": 1}
        out.append(by_key[key])
    return out


def find_title(services: Services, words: list[str], page: int,
               per_page: int = RELATED) -> dict[str, Any]:
    """Documents and Crossref records whose title has every word (case-insensitive),
    and the documents with the records' DOIs."""
    cat = services.catalogue
    with begin(services.engine) as conn:
        found = [{"uuid": d.uuid, "title": d.title, "doi": d.doi} for d in cat.with_title_words(
            words, offset=(page - 1) * per_page, limit=per_page + 1, conn=conn)]
        rows = [(r["doi"], r["title"]) for r in reader.crossref_with_title_words(
            conn, words, offset=(page - 1) * per_page, limit=per_page + 1)]
        dois = [r[0] for r in rows[:per_page]]
        docs = cat.with_dois(dois, conn=conn)
    by_doi: dict[str, list[str]] = {}
    for d in docs:
        by_doi.setdefault(d.doi or "", []).append(d.uuid)
    records = [{"doi": doi, "title": formats.first_text(t), "documents": by_doi.get(doi, []),
                "link": f"/crossref/{doi}"} for doi, t in rows[:per_page]]
    documents = [{**d, "title": formats.first_text(d["title"]), "link": f"/document/{d['uuid']}"}
                 for d in found[:per_page]]
    return {"crossref": records, "titled_documents": documents,
            "more": len(rows) > per_page or len(found) > per_page}


def find_sha1(services: Services, sha1: str) -> dict[str, list[dict[str, Any]]]:
    """Ingest results that ended in this file, captures of it."""
    with begin(services.engine) as conn:
        results = _rows(reader.ingest_statuses_ending_in(conn, sha1, RELATED))
        captures = [capture_row_view(c)
                    for c in reader.captures(conn, sha1hex=sha1, limit=RELATED)]
    for r in results:
        r["link"] = ingest_link(r["ingest_type"], r["base_url"])
    return {"ingest_results": results, "captures": captures}


def find_crossref(services: Services, doi: str) -> list[dict[str, Any]]:
    with begin(services.engine) as conn:
        rows = reader.crossref_titles(conn, doi)
    return [{"doi": r["doi"], "title": formats.first_text(r["title"]),
             "link": f"/crossref/{r['doi']}"} for r in rows]
