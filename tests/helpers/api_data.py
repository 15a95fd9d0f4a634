"""A few rows in every relation the read-only API exposes, as the system writes
them (shared by the PostgREST and reader tests)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import orjson
import urllib3
from sqlalchemy import Engine, insert, text

from sandcrawler.db.engine import begin, make_engine
from sandcrawler.db.schema import (
    catalogue,
    citation,
    crossref,
    grobid_refs,
    ingest_file_result,
    ingest_fileset_platform,
    ingest_request,
    web_cdx,
)
from sandcrawler.readers.base import Reader
from sandcrawler.readers.postgrest import PostgrestReader
from sandcrawler.readers.sql import SqlReader
from sandcrawler.storage.pdftable import PdfTable
from sandcrawler.web.http.fetch import HttpFetcher

DOI = "10.1017/s1047951103000064"
DOI_NO_REFS = "10.1007/978-3-030-64953-1_4"
SHA1 = "0123456789abcdef0123456789abcdef01234567"
SHA1_ODD_DATE = "ab" * 20
URL = "https://example.org/paper.pdf?a=1&b=(x,y)"
LANDING = "https://example.org/article/1"
DATASET = "https://zenodo.org/record/4242"
UUID = "6f1c5a36-0f47-5c64-9d2a-2c0b5f6c2e11"
TS = datetime(2021, 5, 10, 22, 8, 45, 123456, tzinfo=UTC)

REFS = [{"index": 0, "key": "b0", "title": "Cardiac \"defects\"", "year": 2001,
         "authors": [{"name": "A. Ñandú"}], "score": 0.25, "unstructured": None}]
#: resolved references: the Crossref work's and the document's (match/resolving.py's rows)
CITATIONS = [
    {"citing": f"doi:{DOI}", "ref_index": 0, "ref_key": "b0", "cited_doi": DOI_NO_REFS,
     "status": "exact", "score": 1.0, "reasons": ["doi:same", "title:same"], "updated": TS},
    {"citing": f"doi:{DOI}", "ref_index": 1, "ref_key": "b1", "cited_doi": None,
     "status": "no-match", "score": 0.31, "reasons": ["title:differs"], "updated": TS},
    {"citing": f"uuid:{UUID}", "ref_index": 0, "ref_key": None, "cited_doi": DOI_NO_REFS,
     "status": "strong", "score": 0.93, "reasons": ["title:same", "year:same"], "updated": TS},
    {"citing": f"uuid:{UUID}", "ref_index": 1, "ref_key": None, "cited_doi": None,
     "status": "too-little", "score": None, "reasons": None, "updated": TS},
]
RECORD = {"DOI": DOI, "title": ["Heart"], "reference-count": 1, "score": 1.5,
          "indexed": {"date-time": "2021-05-10T22:08:45Z"}}


def seed(engine: Engine, table_name: str = "wbgrp-journal-extract-0-dev") -> None:
    with begin(engine) as conn:
        conn.execute(insert(crossref), [
            {"doi": DOI, "indexed": TS, "record": RECORD},
            {"doi": DOI_NO_REFS, "indexed": TS, "record": {"DOI": DOI_NO_REFS}},
        ])
        conn.execute(insert(grobid_refs), [{"source": "crossref", "source_id": DOI,
                                            "source_ts": TS, "updated": TS, "refs_json": REFS}])
        conn.execute(insert(ingest_file_result), [
            {"ingest_type": "pdf", "base_url": URL, "updated": TS, "hit": True,
             "status": "success", "terminal_url": URL, "terminal_dt": "20210510220845",
             "terminal_status_code": 200, "terminal_sha1hex": SHA1},
            {"ingest_type": "pdf", "base_url": LANDING, "updated": TS, "hit": False,
             "status": "no-pdf-link", "terminal_url": LANDING, "terminal_dt": "20210510220845",
             "terminal_status_code": 200, "terminal_sha1hex": None},
            {"ingest_type": "html", "base_url": URL, "updated": TS, "hit": True,
             "status": "success", "terminal_url": URL, "terminal_dt": "20210510220845",
             "terminal_status_code": 200, "terminal_sha1hex": SHA1},
        ])
        conn.execute(insert(ingest_fileset_platform), [{
            "ingest_type": "dataset", "base_url": DATASET, "updated": TS, "hit": True,
            "status": "success", "platform_name": "zenodo", "platform_domain": "zenodo.org",
            "platform_id": "4242", "ingest_strategy": "web-fileset", "total_size": 12345,
            "file_count": 2, "manifest": [{"path": "a.csv", "size": 12000},
                                          {"path": "b.txt", "size": 345}]}])
        conn.execute(insert(ingest_request), [{
            "link_source": "doi", "link_source_id": DOI, "ingest_type": "pdf", "base_url": URL,
            "ingest_request_source": "test", "created": TS, "release_stage": "published",
            "request": {"base_url": URL, "ingest_type": "pdf", "ext_ids": {"doi": DOI}}}])
        conn.execute(insert(web_cdx), [
            _cdx(URL, "20200101000000", 0, 302, location=LANDING),
            _cdx(URL, "20210510220845", 1000, 200, sha1hex=SHA1, sha256hex="5a" * 32,
                 md5hex="d5" * 16),
            _cdx(LANDING, "20210510220845", 2000, 200),
        ])
        conn.execute(insert(catalogue), [{
            "uuid": UUID, "sha1": SHA1, "doi": DOI, "pmid": None, "pmcid": None, "arxiv": None,
            "resources": {"pdf": {"sha1": SHA1, "size": 4242}}, "updated": TS}])
        conn.execute(insert(citation), CITATIONS)
    PdfTable(engine, table_name).put(SHA1, {
        "file": {"size": 4242, "mime": "application/pdf",
                 "cdx": {"surt": "org,example)/paper.pdf", "url": URL, "dt": "20210510220845",
                         "warc": "a.warc.gz", "offset": "1000", "c_size": "321"}},
        "pdf0": {"pdf_status": "success", "text": "Heart",
                 "pdf_meta": {"status": "success", "page_count": 3, "pdf_version": "1.7",
                              "info": {"title": "Heart", "created": "D:20210510220845Z"}}},
        "grobid0": {"status_code": 200, "tei_xml": "<TEI/>",
                    "status": {"status": "success", "grobid_version": "0.8.1"},
                    "metadata": {"title": "Heart", "authors": [{"full_name": "A. Ñandú"}],
                                 "doi": DOI, "language": "en"}},
        "html0": {"html_status": "success", "html_meta": {"scope": "article-fulltext",
                                                          "word_count": 12}},
        "match0": {"mstatus": "matched", "doi": DOI, "minfo": {"score": 0.9}},
    })
    # a file whose info dictionary has a date no calendar has (real PDFs do)
    PdfTable(engine, table_name).put(SHA1_ODD_DATE, {"pdf0": {
        "pdf_status": "success",
        "pdf_meta": {"status": "success", "info": {"created": "D:20180231256199+99'00'"}}}})


def _cdx(url: str, dt: str, offset: int, status: int, **extra: Any) -> dict[str, Any]:
    return {"url": url, "datetime": dt, "surt": "org,example)/x", "status_code": status,
            "mimetype": "application/pdf" if status == 200 else "text/html",
            "location": None, "sha1hex": None, "sha256hex": None, "md5hex": None,
            "size": 4242 if status == 200 else None, "warc_path": "a.warc.gz",
            "warc_offset": offset, "warc_csize": 321, **extra}


def index_plan(database_url: str, query: str) -> str:
    """PostgreSQL's plan of ``query`` with sequential scans off: whether an index serves it."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SET enable_seqscan = off"))
            return "\n".join(conn.execute(text(f"EXPLAIN {query}")).scalars())
    finally:
        engine.dispose()


@contextmanager
def both_readers(database_url: str, api_url: str) -> Iterator[dict[str, Reader]]:
    """The SQL reader and the PostgREST reader of one database, by name."""
    engine = make_engine(database_url)
    fetcher = HttpFetcher(timeout=10, addresses=None)  # our own PostgREST on loopback
    try:
        yield {"sql": SqlReader(engine), "postgrest": PostgrestReader(api_url, fetcher)}
    finally:
        fetcher.close()
        engine.dispose()


def assert_write_refused(api_url: str, method: str, path: str,
                         body: dict[str, Any] | None) -> None:
    """The read-only API refuses the write with 405 and its one message."""
    http = urllib3.PoolManager(timeout=10, retries=False)
    resp = http.request(method, api_url + path, body=orjson.dumps(body) if body else None,
                        headers={"Content-Type": "application/json"})
    assert resp.status == 405, resp.data
    assert orjson.loads(resp.data)["message"] == "this API is read-only"
