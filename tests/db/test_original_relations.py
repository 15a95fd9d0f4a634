"""The original system's PostgREST lookups (its ``SandcrawlerPostgrestClient``: cdx,
grobid, pdf_meta, file_meta, html_meta, ingest_file_result, crossref,
crossref_with_refs, grobid_refs) answered by the real PostgREST from a PostgreSQL
database that file ingest and processing filled: the offline demo's five articles
(PDF, HTML and JATS full texts) ingested end to end into it. First over HTTP as the
client sends them, then by the original client itself, run unchanged as a
program of its own (db/original_views.py; docs/api.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
import urllib3

from sandcrawler.app.demo import run_demo
from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.demo import DemoSite
from sandcrawler.records.ingest import FileIngestResult
from sandcrawler_testkit.original_sandcrawler import OriginalUnavailable, package
from sandcrawler_testkit.postgrest import PostgrestServer
from tests.helpers.api_data import index_plan
from tests.helpers.skips import unavailable

HTTP = urllib3.PoolManager(timeout=10, retries=False)


def lookup(api: PostgrestServer, relation: str, **filters: str) -> list[dict[str, Any]]:
    """A lookup as the original client sends it: ``?column=eq.value``."""
    query = urlencode({k: f"eq.{v}" for k, v in filters.items()})
    resp = HTTP.request("GET", f"{api.url}/{relation}?{query}")
    assert resp.status == 200, resp.data
    rows: list[dict[str, Any]] = orjson.loads(resp.data)
    return rows


@pytest.fixture(scope="module")
def ingested(postgrest: PostgrestServer, tmp_path_factory: pytest.TempPathFactory
             ) -> list[FileIngestResult]:
    """The demo's requests ingested into the PostgREST's database (and a store of
    the module's own): what `sandcrawler ingest demo` does, on PostgreSQL."""
    directory = tmp_path_factory.mktemp("demo")
    with DemoSite() as site:
        services = Services.for_process(load_settings({
            "data_dir": str(directory),
            "database_url": postgrest.database_url,  # type: ignore[attr-defined]
            "store_url": str(directory / "store"),
            "http_routes": site.routes(), "crawl_host_delay": 0}))
        try:
            report = run_demo(services)
        finally:
            services.close()
    return report.results


def hits(results: list[FileIngestResult], kind: str) -> list[FileIngestResult]:
    return [r for r in results if r.hit and r.processing is not None
            and r.processing.kind == kind]


def test_the_demo_filled_the_database(ingested: list[FileIngestResult]) -> None:
    assert len(hits(ingested, "pdf")) == 3
    assert len(hits(ingested, "html")) == 1


def test_ingest_file_result_cdx_and_file_meta(postgrest: PostgrestServer,
                                              ingested: list[FileIngestResult]) -> None:
    for result in (r for r in ingested if r.hit):
        assert result.terminal is not None and result.file_meta is not None
        req = result.request
        [row] = lookup(postgrest, "ingest_file_result", ingest_type=req["ingest_type"],
                       base_url=req["base_url"])
        sha1 = result.file_meta.sha1hex
        assert (row["hit"], row["status"], row["terminal_sha1hex"]) == (True, "success", sha1)
        # the capture of the full text, where its WARC record is
        cdx = lookup(postgrest, "cdx", url=row["terminal_url"])
        assert any(c["sha1hex"] == sha1 and c["datetime"] == row["terminal_dt"]
                   and c["warc_path"] and c["warc_offset"] is not None
                   and c["warc_csize"] > 0 for c in cdx), cdx
        [meta] = lookup(postgrest, "file_meta", sha1hex=sha1)
        fm = result.file_meta
        assert meta == {"sha1hex": sha1, "sha256hex": fm.sha256hex, "md5hex": fm.md5hex,
                        "size_bytes": fm.size_bytes, "mimetype": fm.mimetype}
    # a redirect or a landing page is no full text: not in cdx
    landing = next(r for r in ingested if not r.hit)
    assert landing.terminal is not None
    assert all(c["sha1hex"] for c in lookup(postgrest, "cdx", url=landing.terminal.terminal_url))


def test_grobid_and_pdf_meta(postgrest: PostgrestServer,
                             ingested: list[FileIngestResult]) -> None:
    for result in hits(ingested, "pdf"):
        assert result.file_meta is not None
        sha1 = result.file_meta.sha1hex
        [grobid] = lookup(postgrest, "grobid", sha1hex=sha1)
        # no GROBID here: the embedded cascade's TEI stands in, answered as the
        # GROBID-compatible service answers it
        assert (grobid["status_code"], grobid["status"]) == (200, "success")
        biblio = grobid["metadata"]["biblio"]
        assert biblio["title"] and biblio["authors"][0]["name"]
        assert set(grobid) >= {"sha1hex", "updated", "grobid_version", "status_code",
                               "status", "fatcat_release", "metadata"}
        [pdf] = lookup(postgrest, "pdf_meta", sha1hex=sha1)
        assert pdf["status"] == "success" and pdf["page_count"] >= 1
        assert pdf["word_count"] > 100 and pdf["page0_width"] > 0 and pdf["page0_height"] > 0
        assert pdf["pdf_version"] and pdf["has_page0_thumbnail"] is True
        assert pdf["metadata"]["title"] and pdf["metadata"]["producer"]
        assert lookup(postgrest, "html_meta", sha1hex=sha1) == []
    peerj = next(r for r in hits(ingested, "pdf")
                 if r.request["base_url"].endswith("peerj.4375"))
    assert peerj.file_meta is not None
    [pdf] = lookup(postgrest, "pdf_meta", sha1hex=peerj.file_meta.sha1hex)
    assert (pdf["page_count"], pdf["pdf_version"]) == (4, "1.4")
    assert pdf["metadata"]["title"].startswith("The state of OA")


def test_html_meta(postgrest: PostgrestServer, ingested: list[FileIngestResult]) -> None:
    [result] = hits(ingested, "html")
    assert result.file_meta is not None and result.processing is not None
    [row] = lookup(postgrest, "html_meta", sha1hex=result.file_meta.sha1hex)
    assert row["status"] == result.processing.status
    assert row["word_count"] == result.processing.word_count
    assert row["has_teixml"] is False and isinstance(row["has_thumbnail"], bool)
    assert row["biblio"]["title"]
    assert lookup(postgrest, "grobid", sha1hex=result.file_meta.sha1hex) == []


def test_crossref_and_references(postgrest: PostgrestServer,
                                 ingested: list[FileIngestResult]) -> None:
    doi = "10.7717/peerj.4375"
    [work] = lookup(postgrest, "crossref", doi=doi)
    assert work["record"]["DOI"].lower() == doi
    [with_refs] = lookup(postgrest, "crossref_with_refs", doi=doi)
    assert with_refs["record"] == work["record"]
    peerj = next(r for r in hits(ingested, "pdf")
                 if r.request["base_url"].endswith("peerj.4375"))
    assert peerj.processing is not None and peerj.processing.uuid
    [refs] = lookup(postgrest, "grobid_refs", source="document",
                    source_id=peerj.processing.uuid)
    assert len(refs["refs_json"]) == peerj.processing.references


@pytest.mark.parametrize("relation", ["grobid", "pdf_meta", "html_meta", "file_meta"])
def test_lookups_by_sha1hex_use_an_index(postgrest: PostgrestServer, relation: str) -> None:
    plan = index_plan(postgrest.database_url,  # type: ignore[attr-defined]
                      f"SELECT * FROM {relation} WHERE sha1hex = '{'ab' * 20}'")
    assert "Seq Scan on pdftable_cells" not in plan and "Seq Scan on web_cdx" not in plan, plan


# --- the original system's client itself ----------------------------------------------

#: every lookup of SandcrawlerPostgrestClient, driven by a JSON list of [method, args]
DRIVER = '''
import json, sys

import sandcrawler
from sandcrawler.db import SandcrawlerPostgrestClient

assert not sandcrawler.__file__.startswith(sys.argv[3]), sandcrawler.__file__
client = SandcrawlerPostgrestClient(api_url=sys.argv[1])
calls = json.load(open(sys.argv[2]))
print(json.dumps([getattr(client, name)(*args) for name, args in calls], default=str))
'''


def test_the_original_systems_postgrest_client(postgrest: PostgrestServer,
                                               ingested: list[FileIngestResult],
                                               tmp_path: Path) -> None:
    try:
        path = package(tmp_path / "original", modules=("db",))
    except OriginalUnavailable as e:
        unavailable(f"the original system's db.py: {e}", "ORIGINAL_SANDCRAWLER")
    pdf = next(r for r in hits(ingested, "pdf")
               if r.request["base_url"].endswith("peerj.4375"))
    [html] = hits(ingested, "html")
    assert pdf.file_meta and pdf.terminal and pdf.processing and html.file_meta
    sha1 = pdf.file_meta.sha1hex
    calls: list[tuple[str, list[str]]] = [
        ("get_cdx", [pdf.terminal.terminal_url]),
        ("get_grobid", [sha1]),
        ("get_pdf_meta", [sha1]),
        ("get_file_meta", [sha1]),
        ("get_html_meta", [html.file_meta.sha1hex]),
        ("get_ingest_file_result", ["pdf", pdf.request["base_url"]]),
        ("get_crossref", ["10.7717/peerj.4375"]),
        ("get_crossref_with_refs", ["10.7717/peerj.4375"]),
        ("get_grobid_refs", ["document", pdf.processing.uuid or ""]),
        ("get_ingest_fileset_platform", ["dataset", "https://zenodo.org/record/1"]),
        ("get_pdftrio", [sha1]),
    ]
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(driver), postgrest.url, str(tmp_path / "calls.json"),
         str(Path(__file__).resolve().parents[2] / "src")],
        env={**env, "PYTHONPATH": str(path)}, capture_output=True, text=True, timeout=120,
        cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    answers = dict(zip([name for name, _ in calls], orjson.loads(done.stdout), strict=True))
    # every lookup answers, with what the API holds (the client hands rows on as
    # they come: get_cdx the whole list, the others the first row)
    nothing = {"get_ingest_fileset_platform", "get_pdftrio"}  # no dataset; no pdf_trio
    assert [name for name, a in answers.items() if not a] == sorted(nothing, key=[
        name for name, _ in calls].index)
    assert answers["get_cdx"] == lookup(postgrest, "cdx", url=pdf.terminal.terminal_url)
    assert answers["get_grobid"]["status_code"] == 200
    assert answers["get_pdf_meta"]["page_count"] == 4
    assert answers["get_file_meta"]["size_bytes"] == pdf.file_meta.size_bytes
    assert answers["get_html_meta"]["sha1hex"] == html.file_meta.sha1hex
    assert answers["get_ingest_file_result"]["terminal_sha1hex"] == sha1
    assert answers["get_crossref"]["doi"] == "10.7717/peerj.4375"
    assert answers["get_crossref_with_refs"]["record"] == answers["get_crossref"]["record"]
    assert answers["get_grobid_refs"]["source_id"] == pdf.processing.uuid


def test_a_file_processed_without_a_crawl(postgrest: PostgrestServer, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`sandcrawler process` of a PDF no crawl fetched: file_meta from the PDF
    table (no SHA-256 or MD5 was recorded), grobid from the cascade, pdf_meta."""
    from sandcrawler.demo import SITE
    from tests.helpers.cli import invoke

    pdf = tmp_path / "copy.pdf"  # another file than the demo's (a comment appended)
    pdf.write_bytes((SITE / "plos.pdf").read_bytes() + b"\n% a copy\n")
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", postgrest.database_url)  # type: ignore[attr-defined]
    monkeypatch.setenv("SANDCRAWLER_EXTRACT_ENABLED", "1")
    result = invoke(["process", str(pdf)])
    assert result.exit_code == 0, result.stderr
    sha1 = orjson.loads(result.stdout.splitlines()[0])["sha1hex"]
    [meta] = lookup(postgrest, "file_meta", sha1hex=sha1)
    assert meta == {"sha1hex": sha1, "sha256hex": None, "md5hex": None,
                    "size_bytes": pdf.stat().st_size, "mimetype": "application/pdf"}
    [grobid] = lookup(postgrest, "grobid", sha1hex=sha1)
    assert grobid["status_code"] == 200 and grobid["metadata"]["biblio"]["title"]
    [pdf_meta] = lookup(postgrest, "pdf_meta", sha1hex=sha1)
    assert pdf_meta["status"] == "success" and pdf_meta["page_count"] >= 1
    assert lookup(postgrest, "cdx", sha1hex=sha1) == []
